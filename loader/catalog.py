"""XML catalogs (OASIS XML Catalogs 1.1): well-known DTDs and entities from local files.

A public DTD (XHTML, DocBook, SVG, MathML...) is looked up here before the crawler is asked
for it, so it is never fetched from its publisher: the system's catalog (``XML_CATALOG_FILES``
or ``/etc/xml/catalog``, as libxml2 reads them; Debian's ``xml-core``, ``w3c-sgml-lib`` and
``docbook-xml`` fill it) and the catalogs the user names (``LoaderSettings.catalog_files``).

Why a reader of our own rather than libxml2's: lxml does not expose libxml2's catalog
functions, and libxml2 reads ``XML_CATALOG_FILES`` once per process, so one loader's catalog
could not differ from another's, and a catalog answer could not be told from a miss. This
reader follows the specification's resolution of external identifiers (§7.1.2): ``system``,
``rewriteSystem``, ``systemSuffix``, ``delegateSystem``, then ``public`` and
``delegatePublic`` (when ``prefer="public"``, or with no system identifier), then
``nextCatalog``; ``group`` and ``xml:base`` included. One liberty: a system identifier
whose delegation finds nothing still lets its public identifier be tried (the specification
stops there). A catalogued DTD is parsed with its original URL as base, so the modules it
names by a relative system identifier and a public one (DocBook's ``dbnotnx.mod``) are found
by the public one. Only local files are ever opened: an entry that maps to an http(s) URL is
ignored.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from lxml import etree

from loader.errors import LoaderError

log = logging.getLogger(__name__)

NS = "{urn:oasis:names:tc:entity:xmlns:xml:catalog}"
SYSTEM_CATALOG = "/etc/xml/catalog"
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_MAX_CATALOGS = 1000  # delegations and next catalogs followed, in all (loops, runaway chains)
_MAX_ENTRY_BYTES = 16 << 20
_ANSWERS_KEPT = 4096
_PARSER = etree.XMLParser(no_network=True, load_dtd=False, resolve_entities=False, huge_tree=False)


class CatalogError(LoaderError):
    """A catalog the user named cannot be read."""


def system_catalog_files() -> list[str]:
    """The system's catalogs, as libxml2 finds them: ``XML_CATALOG_FILES`` (space-separated)
    when set, else ``/etc/xml/catalog`` when it exists."""
    listed = os.environ.get("XML_CATALOG_FILES")
    if listed is not None:
        return listed.split()
    return [SYSTEM_CATALOG] if Path(SYSTEM_CATALOG).is_file() else []


def _normalize_public(public_id: str) -> str:
    """Public identifiers compare with white space collapsed (§6.2)."""
    return " ".join(public_id.split())


def _local_path(uri: str) -> Path | None:
    """A ``file:`` URI or plain path as a local path; None for any other scheme."""
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return Path(unquote(parts.path))
    if parts.scheme == "" or (len(parts.scheme) == 1 and os.name == "nt"):
        return Path(uri)
    return None


@dataclass
class _Entries:
    """The entries of one catalog file, by kind (targets are absolute URIs)."""

    system: dict[str, str] = field(default_factory=dict)
    public: dict[str, tuple[str, bool]] = field(default_factory=dict)  # -> (uri, prefer public)
    rewrite_system: list[tuple[str, str]] = field(default_factory=list)
    system_suffix: list[tuple[str, str]] = field(default_factory=list)
    delegate_system: list[tuple[str, str]] = field(default_factory=list)
    delegate_public: list[tuple[str, str, bool]] = field(default_factory=list)
    next_catalogs: list[str] = field(default_factory=list)


def _read_entries(uri: str) -> _Entries:
    """Parse one catalog file; raises OSError or XMLSyntaxError when it cannot be read."""
    path = _local_path(uri)
    if path is None:
        raise OSError(f"catalog {uri} is not a local file")
    root = etree.parse(str(path), _PARSER).getroot()
    entries = _Entries()
    base = urljoin(path.resolve().as_uri(), root.get(_XML_BASE) or "")
    _collect(root, base, root.get("prefer", "public") == "public", entries)
    return entries


def _collect(parent: etree._Element, base: str, prefer_public: bool, entries: _Entries) -> None:
    for entry in parent.iterchildren(etree.Element):
        here = urljoin(base, entry.get(_XML_BASE)) if entry.get(_XML_BASE) else base
        kind = entry.tag.removeprefix(NS) if entry.tag.startswith(NS) else None
        target = entry.get("uri") or entry.get("rewritePrefix") or entry.get("catalog")
        target = urljoin(here, target) if target else None
        if kind == "group":
            prefer = entry.get("prefer")
            _collect(entry, here, prefer == "public" if prefer else prefer_public, entries)
        elif target is None:
            continue
        elif kind == "system" and entry.get("systemId"):
            entries.system.setdefault(entry.get("systemId"), target)
        elif kind == "public" and entry.get("publicId"):
            key = _normalize_public(entry.get("publicId"))
            entries.public.setdefault(key, (target, prefer_public))
        elif kind == "rewriteSystem" and entry.get("systemIdStartString"):
            entries.rewrite_system.append((entry.get("systemIdStartString"), target))
        elif kind == "systemSuffix" and entry.get("systemIdSuffix"):
            entries.system_suffix.append((entry.get("systemIdSuffix"), target))
        elif kind == "delegateSystem" and entry.get("systemIdStartString"):
            entries.delegate_system.append((entry.get("systemIdStartString"), target))
        elif kind == "delegatePublic" and entry.get("publicIdStartString"):
            start = _normalize_public(entry.get("publicIdStartString"))
            entries.delegate_public.append((start, target, prefer_public))
        elif kind == "nextCatalog":
            entries.next_catalogs.append(target)


def _longest(pairs: list[tuple[str, str]], match) -> tuple[str, str] | None:
    found = [pair for pair in pairs if match(pair[0])]
    return max(found, key=lambda pair: len(pair[0])) if found else None


class Catalog:
    """The catalogs a loader consults, in order; files are read once, when first needed.

    ``required`` files (the user's) must be readable: :class:`CatalogError` otherwise, at
    construction. Files reached through the system catalog, a delegation or ``nextCatalog``
    that cannot be read are skipped (a stale system list must not stop the loader), with a
    warning in the log.
    """

    def __init__(self, files: Iterable[str | Path] = (), required: Iterable[str | Path] = ()):
        self._lock = threading.Lock()
        self._parsed: dict[str, _Entries | None] = {}
        self._bodies: dict[Path, bytes] = {}
        self._answers: dict[tuple[str | None, str | None], Path | None] = {}
        self._roots: list[str] = []
        self._folders: dict[str, Path] = {}  # a catalogued system id's folder → its file's
        for path in required:
            uri = self._uri(path)
            try:
                self._parsed[uri] = _read_entries(uri)
            except (OSError, etree.XMLSyntaxError) as error:
                raise CatalogError(f"XML catalog {path}: cannot be read ({error})") from None
            self._roots.append(uri)
        self._roots.extend(self._uri(path) for path in files)

    @staticmethod
    def _uri(path: str | Path) -> str:
        text = str(path)
        local = _local_path(text)
        return local.resolve().as_uri() if local is not None else text

    def __bool__(self) -> bool:
        return bool(self._roots)

    def _beside(self, system_id: str, answer: Path | None) -> Path | None:
        """A module named by a relative system id beside a catalogued DTD, as libxml2 finds
        it: a hit maps the system id's folder to the local file's, and a later miss under
        that folder takes the file of the same name there, if it exists. DocBook 4.1 and
        4.1.2 need it: their DTD names ``dbnotnx.mod`` by a public id their catalog spells
        otherwise, so only the relative name ``dbnotnx.mod`` finds it."""
        folder, _, name = system_id.rpartition("/")
        if answer is not None:
            with self._lock:
                self._folders.setdefault(folder, answer.parent)
            return answer
        local = self._folders.get(folder)
        if local is None or not name or name in (".", ".."):
            return None
        candidate = local / unquote(name)
        return candidate if candidate.parent == local and candidate.is_file() else None

    def _entries(self, uri: str) -> _Entries | None:
        with self._lock:
            if uri not in self._parsed:
                try:
                    self._parsed[uri] = _read_entries(uri)
                except (OSError, etree.XMLSyntaxError) as error:
                    log.warning("XML catalog %s skipped: %s", uri, error)
                    self._parsed[uri] = None
            return self._parsed[uri]

    def resolve(self, public_id: str | None, system_id: str | None) -> Path | None:
        """The local file the catalogs map an external identifier to, or None.

        Answers are remembered (misses too): a system catalog holds hundreds of delegations,
        and every document with a DOCTYPE asks.
        """
        key = (public_id, system_id)
        try:
            return self._answers[key]
        except KeyError:
            pass
        public = _normalize_public(public_id) if public_id else None
        budget = [_MAX_CATALOGS]
        answer = None
        for root in self._roots:
            found = self._resolve_in(root, public, system_id, budget, frozenset())
            if found is not None:
                answer = _local_path(found)
                break
        if system_id and "/" in system_id:
            answer = self._beside(system_id, answer)
        with self._lock:
            if len(self._answers) >= _ANSWERS_KEPT:
                self._answers.clear()
            self._answers[key] = answer
        return answer

    def _resolve_in(
        self,
        uri: str,
        public: str | None,
        system: str | None,
        budget: list[int],
        seen: frozenset[str],
    ) -> str | None:
        if uri in seen or budget[0] <= 0:  # a loop on this chain, or too much work in all
            return None
        seen = seen | {uri}
        budget[0] -= 1
        entries = self._entries(uri)
        if entries is None:
            return None
        if system:
            found = self._system_match(entries, system)
            if found is not None:
                return found
            delegates = [c for start, c in entries.delegate_system if system.startswith(start)]
            if delegates:
                found = self._delegate(delegates, None, system, budget, seen)
                if found is not None:
                    return found
        if public:
            target = entries.public.get(public)
            if target is not None and _usable(target[0]) and (target[1] or not system):
                return target[0]
            delegates = [
                c
                for start, c, prefer in entries.delegate_public
                if public.startswith(start) and (prefer or not system)
            ]
            if delegates:
                return self._delegate(delegates, public, None, budget, seen)
        for following in entries.next_catalogs:
            found = self._resolve_in(following, public, system, budget, seen)
            if found is not None:
                return found
        return None

    @staticmethod
    def _system_match(entries: _Entries, system: str) -> str | None:
        target = entries.system.get(system)
        if target is not None and _usable(target):
            return target
        rewrite = _longest(entries.rewrite_system, system.startswith)
        if rewrite is not None:
            start, prefix = rewrite
            target = prefix + system[len(start) :]
            return target if _usable(target) else None
        suffix = _longest(entries.system_suffix, system.endswith)
        if suffix is not None and _usable(suffix[1]):
            return suffix[1]
        return None

    def _delegate(
        self,
        catalogs: list[str],
        public: str | None,
        system: str | None,
        budget: list[int],
        seen: frozenset[str],
    ) -> str | None:
        """Delegation (§7.1.2 steps 5 and 7): only the delegated catalogs are consulted."""
        for catalog in dict.fromkeys(catalogs):
            found = self._resolve_in(catalog, public, system, budget, seen)
            if found is not None:
                return found
        return None

    def body(self, public_id: str | None, system_id: str | None) -> bytes | None:
        """The bytes of the file the catalogs map an identifier to (kept once read)."""
        path = self.resolve(public_id, system_id)
        if path is None:
            return None
        body = self._bodies.get(path)
        if body is None:
            try:
                if path.stat().st_size > _MAX_ENTRY_BYTES:
                    log.warning("XML catalog entry %s skipped: larger than 16 MiB", path)
                    return None
                body = path.read_bytes()
            except OSError as error:
                log.warning("XML catalog entry %s skipped: %s", path, error)
                return None
            with self._lock:
                self._bodies[path] = body
        return body


def _usable(target: str) -> bool:
    """Whether a catalog's target is a local file (the catalog never causes a fetch)."""
    return _local_path(target) is not None
