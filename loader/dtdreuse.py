"""External DTDs read once per loader, not once per document.

libxml2 reads a document's external DTD anew for every document it validates: 16–19 ms of
CPU for DocBook 4.5 (its modules and ISO entity sets, then freeing them with the tree),
2–3 ms for XHTML 1.0, against ~0.1 ms for the document itself. When a DTD has validated a document
cleanly once, :class:`DtdReuse` keeps (:class:`ReusedDtd`) the DTD as that parse read it
(an ``lxml.etree.DTD``), its general entity declarations and the namespace declarations its
attribute lists default, as libxml2 itself writes them out. A later document naming the same
DTD (:func:`parse_reusing`) is parsed against a *stand-in* external subset holding only the
entities it references and those namespace defaults (what the tree depends on: the loader's
parser adds no other defaulted attribute), then validated against the kept DTD
(``DTD.validate``, libxml2's ``xmlValidateDtd``: content models, attributes, ID/IDREF).

Only what gives the same tree and the same verdict takes this path; anything else is parsed
as before (``None``): an encoding that is not ASCII-compatible, an internal subset holding
more than general entities, an attribute literal that a DTD's attribute type could normalise
(spaces at its ends or doubled, a reference other than the predefined entities), any
message of the parse (an entity the stand-in lacks included), another external load, a
standalone document, a root that does not match the DOCTYPE (``xmlValidateDtd`` skips that
check) and any invalid document, so errors are reported exactly as the full parse words them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lxml import etree

from loader.dtds import External, declared_entities, declares_grammar
from loader.links import absolute_http_url
from loader.parselock import PARSE_LOCK

if TYPE_CHECKING:
    from loader.dependencies import CacheResolver

_HEAD = 1 << 20
_DOCTYPE = re.compile(
    rb"<!DOCTYPE\s+([^\s\[>]+)\s+(?:SYSTEM|PUBLIC\s+(\"[^\"]*\"|'[^']*'))\s+(\"[^\"]*\"|'[^']*')"
    rb"\s*(\[|>)"
)
_ENCODING = re.compile(rb"^<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._-]+)[\"']")
_ASCII_COMPATIBLE = re.compile(
    r"(utf-?8|(us-)?ascii|iso[-_]?8859[-_]?\d+|latin-?\d|l\d|(windows|cp)-?125\d)$", re.I
)
_TOKEN = re.compile(rb"\s+|<!--.*?-->|<\?.*?\?>|<!(?:[^>\"']|\"[^\"]*\"|'[^']*')*>|\]\s*>", re.S)
_TEXT_TOKEN = re.compile(r"\s+|<!--.*?-->|<\?.*?\?>|<!(?:[^>\"']|\"[^\"]*\"|'[^']*')*>|\]", re.S)
_INTERNAL_GE = re.compile(rb"<!ENTITY\s+[^\s%]\S*\s+(?:\"[^\"%]*\"|'[^'%]*')\s*>\Z")
_GE_TEXT = re.compile(r"<!ENTITY\s+([^\s%]\S*)\s+(\"[^\"%]*\"|'[^'%]*')\s*>\Z")
_NAMESPACE_DEFAULT = re.compile(r"<!ATTLIST\s+\S+\s+xmlns(?::\S+)?\s")
_REFERENCE = re.compile(rb"&([^\s&;#<>\"'%]+);")
_TEXT_REFERENCE = re.compile(r"&([^\s&;#<>\"'%]+);")
# an attribute literal a tokenized type would change: space at an end, doubled, or a reference
# that is not a predefined entity (a character reference may be a space)
_NORMALISABLE = re.compile(
    rb"=\s*(?:\"(?:\s|[^\"]*?(?:\s\s|\s\"|&(?!(?:amp|lt|gt|quot|apos);)))"
    rb"|'(?:\s|[^']*?(?:\s\s|\s'|&(?!(?:amp|lt|gt|quot|apos);))))"
)
_KEPT = 64


@dataclass(frozen=True, slots=True)
class ReusedDtd:
    """An external DTD as a clean validating parse read it, kept for the documents after."""

    key: tuple
    """(public id, system URL), and the dependency cache's generation when it served any."""
    dtd: etree.DTD
    entities: dict[bytes, bytes]
    """General entity name -> its declaration, as libxml2 writes it (UTF-8)."""
    references: dict[bytes, tuple[bytes, ...]]
    """General entity name -> the general entities its replacement text references."""
    namespaces: bytes
    """The attribute-list declarations that default a namespace declaration."""
    facts: External
    used: tuple[str, ...]
    catalogued: frozenset[str]

    def stand_in(self, body: bytes) -> bytes:
        """The external subset to parse ``body`` with: the entities it references (and those
        they reference), the namespace defaults."""
        names = set(_REFERENCE.findall(body))
        wanted = [name for name in names if name in self.entities]
        declarations = [self.namespaces]
        while wanted:
            name = wanted.pop()
            declarations.append(self.entities[name])
            for inner in self.references[name]:
                if inner not in names:
                    names.add(inner)
                    if inner in self.entities:
                        wanted.append(inner)
        return b"\n".join(declarations)


class DtdReuse:
    """The loader's kept DTDs, by (public id, absolute system URL); shared by its threads.

    An entry served only by the XML catalogs (files that do not change under a running
    loader) holds for the loader's life; one that used the dependency cache holds until the
    cache changes (its generation).
    """

    def __init__(self) -> None:
        self._entries: dict[tuple, ReusedDtd | None] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return sum(entry is not None for entry in self._entries.values())

    def lookup(self, key: tuple, generation: int) -> ReusedDtd | None:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries.get((*key, generation))
        return entry

    def known(self, key: tuple, generation: int) -> bool:
        return key in self._entries or (*key, generation) in self._entries

    def learn(self, tree: etree._ElementTree, url: str, resolver: CacheResolver) -> None:
        """Keep the external DTD a clean validating parse of ``tree`` read (the resolver as
        that parse left it); once per DTD. The resolver's record of the parse is kept."""
        docinfo = tree.docinfo
        system = absolute_http_url(url, docinfo.system_url or "")
        generation = resolver.cache.generation
        if system is None or resolver.unavailable or resolver.missing:
            return
        key = (docinfo.public_id, system)
        if self.known(key, generation):
            return
        saved = (resolver.missing, resolver.used, resolver.unavailable, resolver.catalogued)
        try:
            entry = _read(tree, key, generation, resolver)
        finally:
            resolver.missing, resolver.used, resolver.unavailable, resolver.catalogued = saved
        with self._lock:
            if len(self._entries) >= _KEPT:
                self._entries.clear()
            self._entries[key if entry is None else entry.key] = entry


def _read(
    tree: etree._ElementTree, key: tuple, generation: int, resolver: CacheResolver
) -> ReusedDtd | None:
    """The entry for the external DTD of ``tree`` (parsed with ``resolver``): libxml2
    writes out the DTD's declarations when it reads it as a parameter entity of a probe's
    internal subset. The probe's loads are the DTD's alone (the document's also hold the
    external entities it referenced). None when the probe is not served as the document
    was."""
    public_id, system = key
    used, catalogued = set(resolver.used), set(resolver.catalogued)
    if '"' in system and "'" in system:
        return None
    quote = "'" if '"' in system else '"'
    identifier = f'PUBLIC "{public_id}"' if public_id else "SYSTEM"
    probe = f"<!DOCTYPE probe [<!ENTITY % dtd {identifier} {quote}{system}{quote}> %dtd;]><probe/>"
    resolver.reset()
    parser = etree.XMLParser(no_network=True, load_dtd=True, resolve_entities=True)
    parser.resolvers.add(resolver)
    try:
        with PARSE_LOCK:
            written = etree.tostring(etree.fromstring(probe.encode(), parser).getroottree())
    except etree.XMLSyntaxError:
        return None
    if (
        len(parser.error_log)
        or resolver.missing
        or resolver.unavailable
        or not used.issuperset(resolver.used)
        or not catalogued.issuperset(resolver.catalogued)
    ):
        return None
    used, catalogued = tuple(resolver.used), frozenset(resolver.catalogued)
    text = written.decode("utf-8")
    subset = text[text.index("[") + 1 : text.rindex("]")]
    entities: dict[bytes, bytes] = {}
    references: dict[bytes, tuple[bytes, ...]] = {}
    namespaces: list[str] = []
    for token in _TEXT_TOKEN.findall(subset):
        general = _GE_TEXT.match(token)
        if general is not None:
            name = general.group(1).encode()
            entities[name] = token.encode()
            references[name] = tuple(n.encode() for n in _TEXT_REFERENCE.findall(token))
        elif _NAMESPACE_DEFAULT.match(token):
            namespaces.append(token)
    dtd = tree.docinfo.externalDTD
    dtds = () if dtd is None else (dtd,)
    if dtd is None:
        return None
    facts = External(declared_entities(dtds), declares_grammar(dtds))
    return ReusedDtd(
        (*key, generation) if used else key,
        dtd,
        entities,
        references,
        "\n".join(namespaces).encode(),
        facts,
        used,
        catalogued,
    )


def _ascii_compatible(body: bytes, forced: str | None) -> bool:
    """Whether the document's bytes spell markup in ASCII (the checks below read bytes)."""
    if forced is not None:
        return _ASCII_COMPATIBLE.match(forced) is not None
    if body.startswith(b"\xef\xbb\xbf"):
        return True
    if body[:1] != b"<" and not body[:1].isspace():
        return False  # another byte order mark, or no XML at all
    declared = _ENCODING.match(body)
    return declared is None or _ASCII_COMPATIBLE.match(declared.group(1).decode()) is not None


def _plain_internal_subset(body: bytes, start: int) -> bool:
    """Whether the internal subset from ``start`` holds only internal general entities,
    comments and processing instructions (then it changes no validity check)."""
    while (found := _TOKEN.match(body, start, _HEAD)) is not None:  # no search: linear
        token = found.group(0)
        if token[:1] == b"]":
            return True
        declaration = token.startswith(b"<!") and not token.startswith(b"<!--")
        if declaration and _INTERNAL_GE.match(token) is None:
            return False
        start = found.end()
    return False


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document that may be parsed against a kept DTD: its DOCTYPE, as written."""

    name: bytes
    public_id: str | None
    system: str


def candidate(body: bytes, url: str, forced: str | None) -> Candidate | None:
    """The DOCTYPE of a document a kept DTD could serve (its external DTD by URL), or None
    when its bytes or its internal subset rule the reuse out (see the module docstring)."""
    head = body[:_HEAD] if len(body) > _HEAD else body
    doctype = _DOCTYPE.search(head)
    if doctype is None or not _ascii_compatible(head, forced):
        return None
    name, public, system_literal, opening = doctype.groups()
    system = absolute_http_url(url, system_literal[1:-1].decode("utf-8", "replace"))
    if system is None:
        return None
    if opening == b"[" and not _plain_internal_subset(head, doctype.end()):
        return None
    if _NORMALISABLE.search(body) is not None:
        return None
    public_id = public[1:-1].decode("utf-8", "replace") if public else None
    return Candidate(name, public_id, system)


def parse_reusing(
    body: bytes,
    url: str,
    doctype: Candidate,
    resolver: CacheResolver,
    make_parser: Callable[[], etree.XMLParser],
) -> tuple[etree._Element, ReusedDtd] | None:
    """Parse and validate ``body`` against its kept DTD; None when there is none or the
    full parse must decide (see the module docstring). ``make_parser()`` is the
    non-validating parser."""
    system = doctype.system
    entry = resolver.dtd_reuse.lookup((doctype.public_id, system), resolver.cache.generation)
    if entry is None or not all(resolver.in_scope(used) for used in entry.used):
        return None
    parser = make_parser()
    resolver.external_subset = (system, entry.stand_in(body))
    try:
        with PARSE_LOCK:
            root = etree.fromstring(body, parser, base_url=url)
            tree = root.getroottree()
            if not _same_as_full_parse(tree, parser, resolver, doctype, url):
                return None
            if not entry.dtd.validate(tree):
                return None
    except etree.XMLSyntaxError:
        return None
    finally:
        resolver.external_subset = None
    resolver.used = list(entry.used)
    resolver.catalogued = set(entry.catalogued)
    return root, entry


def _same_as_full_parse(
    tree: etree._ElementTree,
    parser: etree.XMLParser,
    resolver: CacheResolver,
    doctype: Candidate,
    url: str,
) -> bool:
    """Whether nothing in this parse could differ from the full one's (messages, other
    loads, standalone, root name)."""
    if len(parser.error_log) or resolver.used or resolver.missing or resolver.unavailable:
        return False
    if resolver.catalogued:
        return False
    docinfo = tree.docinfo
    if docinfo.standalone or docinfo.public_id != doctype.public_id:
        return False
    if absolute_http_url(url, docinfo.system_url or "") != doctype.system:
        return False
    root = tree.getroot()
    local = etree.QName(root).localname
    expected = doctype.name.decode("utf-8", "replace")
    return expected == local or (root.prefix is not None and expected == f"{root.prefix}:{local}")
