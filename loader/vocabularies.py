"""Which attributes of which elements are links, vocabulary by vocabulary (issue 16).

Elements of no namespace, or of a namespace no rule names, keep the loader's generic rule:
``href``, ``src`` and ``xlink:href`` are links (XLink, XInclude, Atom, DITA's ``href`` on
``xref`` / ``link`` / ``topicref``...). The common document vocabularies say more, or less:

========  ===============================================================================
XHTML     ``a`` / ``area`` ``href``; ``link href`` for document relations only (a style
          sheet is a dependency; icon, preload... nothing); ``frame`` / ``iframe`` ``src``;
          ``img src``, ``object data``, ``embed src`` only when they may be XML (SVG);
          ``base href`` rebases what follows; ``script`` is no link
DocBook   4 (no namespace): ``ulink url``; ``imagedata`` / ``graphic`` ``fileref`` (if SVG
          or XML). 5: ``xlink:href`` on any element, ``imagedata fileref`` likewise.
          ``link`` / ``xref`` ``linkend`` and ``olink targetdoc`` name ids, not URLs
TEI       ``target`` (a list of URIs) on any element (``ref``, ``ptr``, ``link``...),
          ``graphic url`` and ``facs`` if SVG or XML
DITA      ``href`` on ``xref``, ``link``, ``topicref``... unless ``format`` names a
          non-document format (``pdf``, ``png``...); ``conref``; ``image href`` if SVG
Mallard   ``href`` on any element, ``xref`` as a page id (``xref="intro"`` is the page
          ``intro`` beside this one, with this page's suffix), ``media src`` if SVG or XML
SVG       ``a`` ``href`` / ``xlink:href``; ``image`` ones if SVG; ``use``, gradients,
          filters and scripts are no links
Atom      ``link href`` unless ``rel="self"`` (the feed's own address, RFC 4287 4.2.7.2)
========  ===============================================================================

``[loader.links]`` (``LoaderSettings.links``) adds attributes, by namespace. A reference
that is only a fragment (``#top``) is not a link: the collector drops it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
XHTML = "http://www.w3.org/1999/xhtml"
SVG = "http://www.w3.org/2000/svg"
TEI = "http://www.tei-c.org/ns/1.0"
DOCBOOK5 = "http://docbook.org/ns/docbook"
MALLARD = "http://projectmallard.org/1.0/"
ATOM = "http://www.w3.org/2005/Atom"
GENERIC_LINKS = frozenset({"href", "src", XLINK_HREF})
_MAY_BE_XML = (".svg", ".svgz", ".xml", ".xhtml", ".xht")
_DOCUMENT_RELATIONS = frozenset(
    {
        *("alternate", "appendix", "author", "bookmark", "canonical", "chapter", "contents"),
        *("copyright", "first", "glossary", "help", "home", "index", "last", "license"),
        *("next", "prev", "previous", "related", "search", "section", "start", "subsection"),
        *("toc", "up"),
    }
)
_STYLE_RELATIONS = frozenset({"stylesheet"})
_DOCUMENT_FORMATS = frozenset({"dita", "ditamap", "xml", "html", "xhtml", "svg", "htm"})
_RULES_KEPT = 4096  # distinct element names remembered per rule set


@dataclass(frozen=True, slots=True)
class ElementRule:
    """What the attributes of one kind of element (a ``{namespace}name``) mean."""

    links: frozenset[str] = GENERIC_LINKS  # each value one URI
    lists: frozenset[str] = frozenset()  # each value a white-space separated list of URIs
    media: frozenset[str] = frozenset()  # a link only when its path may be XML (SVG)
    page_ids: frozenset[str] = frozenset()  # Mallard xref: a page id beside this page
    html_link: bool = False  # XHTML <link>: by its rel
    html_base: bool = False  # XHTML <base href>
    feed_link: bool = False  # Atom <link href>: a link unless rel="self" (the feed itself)
    formats: bool = False  # DITA: @format may say the target is no document
    names: frozenset[str] = field(init=False)  # every attribute above

    def __post_init__(self) -> None:
        names = self.links | self.lists | self.media | self.page_ids
        if self.html_link or self.html_base or self.feed_link:
            names |= {"href"}
        object.__setattr__(self, "names", names)


GENERIC = ElementRule()
NOTHING = ElementRule(links=frozenset())


def _local(tag: str) -> tuple[str, str]:
    namespace, _, name = tag[1:].rpartition("}") if tag[:1] == "{" else ("", "", tag)
    return namespace, name


def _builtin(namespace: str, name: str) -> ElementRule:
    """The rule of the vocabulary an element belongs to (``GENERIC`` when none says more)."""
    if namespace == XHTML:
        return _xhtml(name)
    if namespace == SVG:
        if name == "a":
            return ElementRule(links=frozenset({"href", XLINK_HREF}))
        if name == "image":
            return ElementRule(links=frozenset(), media=frozenset({"href", XLINK_HREF}))
        return NOTHING
    if namespace == TEI:
        media = {"facs", "url"} if name == "graphic" else {"facs"}
        return ElementRule(
            links=frozenset({XLINK_HREF}), lists=frozenset({"target"}), media=frozenset(media)
        )
    if namespace == DOCBOOK5:
        media = {"fileref"} if name in ("imagedata", "graphic", "videodata") else set()
        return ElementRule(links=frozenset({XLINK_HREF}), media=frozenset(media))
    if namespace == MALLARD:
        if name == "media":
            return ElementRule(links=frozenset({"href"}), media=frozenset({"src"}))
        return ElementRule(links=frozenset({"href"}), page_ids=frozenset({"xref"}))
    if namespace == ATOM and name == "link":
        return ElementRule(links=frozenset({XLINK_HREF}), feed_link=True)
    if namespace == "":
        return _unqualified(name)
    return GENERIC


def _xhtml(name: str) -> ElementRule:
    if name in ("a", "area"):
        return ElementRule(links=frozenset({"href"}))
    if name in ("frame", "iframe"):
        return ElementRule(links=frozenset({"src"}))
    if name == "link":
        return ElementRule(links=frozenset(), html_link=True)
    if name == "base":
        return ElementRule(links=frozenset(), html_base=True)
    if name in ("img", "embed"):
        return ElementRule(links=frozenset(), media=frozenset({"src"}))
    if name == "object":
        return ElementRule(links=frozenset(), media=frozenset({"data"}))
    return ElementRule(links=frozenset({XLINK_HREF}))


def _unqualified(name: str) -> ElementRule:
    """Elements of no namespace: DocBook 4, DITA, feeds and anything else."""
    if name == "ulink":  # DocBook 4
        return ElementRule(links=frozenset({"url", XLINK_HREF}))
    if name in ("imagedata", "graphic", "inlinegraphic", "videodata"):  # DocBook 4
        return ElementRule(links=GENERIC_LINKS - {"src"}, media=frozenset({"fileref"}))
    if name == "image":  # DITA
        return ElementRule(links=frozenset({XLINK_HREF}), media=frozenset({"href"}))
    if name == "script":
        return ElementRule(links=frozenset({XLINK_HREF}))
    return ElementRule(links=GENERIC_LINKS | {"conref"}, formats=True)


class LinkRules:
    """The rules of the built-in vocabularies plus the user's ``[loader.links]``, by tag."""

    def __init__(self, extra: Mapping[str, tuple[str, ...]]) -> None:
        self._extra = {namespace: frozenset(names) for namespace, names in extra.items()}
        self._by_tag: dict[str, ElementRule] = {}

    def rule(self, tag: str) -> ElementRule:
        """The rule of an element, by its tag (remembered: documents repeat their tags)."""
        found = self._by_tag.get(tag)
        if found is None:
            namespace, name = _local(tag)
            found = _builtin(namespace, name)
            extra = self._extra.get(namespace)
            if extra:
                found = ElementRule(
                    found.links | extra,
                    found.lists,
                    found.media,
                    found.page_ids,
                    found.html_link,
                    found.html_base,
                    found.formats,
                )
            if len(self._by_tag) >= _RULES_KEPT:
                self._by_tag.clear()
            self._by_tag[tag] = found
        return found


@functools.lru_cache(maxsize=16)
def link_rules(extra: tuple[tuple[str, tuple[str, ...]], ...]) -> LinkRules:
    """The shared rule set for one ``[loader.links]`` (each thread reads it; a rule
    computed twice by two threads is the same)."""
    return LinkRules(dict(extra))


def rules_for(extra: Mapping[str, tuple[str, ...]]) -> LinkRules:
    """:func:`link_rules` for a settings mapping."""
    return link_rules(tuple(sorted((ns, tuple(names)) for ns, names in extra.items())))


def may_be_xml(url: str) -> bool:
    """Whether an embedded resource (``img src``...) may be an XML document: SVG or XML by
    its path's suffix."""
    path = url.partition("#")[0].partition("?")[0].lower()
    return path.endswith(_MAY_BE_XML)


def is_document_relation(rel: str | None) -> tuple[bool, bool]:
    """``(link, dependency)`` for an XHTML ``<link rel>``: a document relation is a link,
    a style sheet a dependency, anything else (icon, preload...) neither."""
    words = set((rel or "").lower().split())
    return bool(words & _DOCUMENT_RELATIONS), bool(words & _STYLE_RELATIONS)


def names_a_document(format_value: str | None) -> bool:
    """DITA: an ``href`` whose ``format`` names no document format is no link."""
    return format_value is None or format_value.strip().lower() in _DOCUMENT_FORMATS


def page_id_url(document_url: str, page_id: str) -> str | None:
    """A Mallard ``xref`` as a relative reference: the page of that id beside this one,
    with this page's suffix (``intro`` from ``.../help/index.page`` is ``intro.page``);
    ``#section`` alone, or ``page#section`` keeps only the page."""
    page = page_id.strip().partition("#")[0]
    if not page or "/" in page:
        return None
    leaf = document_url.partition("#")[0].partition("?")[0].rpartition("/")[2]
    suffix = leaf[leaf.rfind(".") :] if "." in leaf else ""
    return page + suffix
