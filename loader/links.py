"""Link discovery in XML documents (issue 5, paper §3: "XML parsing ... discovers new pages").

Links (children in Link-Data, ranked): ``xlink:href``, XInclude and any other ``href`` /
``src`` attribute, RSS ``<link>`` text, Atom ``<link href>``, and sitemap ``<loc>`` (capped as
the sitemap protocol says); in the common document vocabularies (XHTML, DocBook, TEI, DITA,
Mallard, SVG) the attributes each defines, by its own rule (:mod:`loader.vocabularies`), and
those ``[loader.links]`` adds. A fragment-only reference (``#top``) is no link.
Dependencies (not links: they stay out of the ranking's matrix): the DOCTYPE's DTD, external
entities, the schemas of ``xsi:schemaLocation`` / ``xsi:noNamespaceSchemaLocation``, and the
style sheet of an ``xml-stylesheet`` processing instruction (or an XHTML ``<link
rel="stylesheet">``). A style sheet is presentation shared by many documents, like a DTD: as a link
it would collect in-links from every document of a site and top the importance ranking
(ARCHITECTURE: style sheets are not links; the simulated web's ground truth agrees).

Every reference is resolved against the element's base URI, i.e. ``xml:base`` on it or its
ancestors, else the document's URL; only http(s) results are kept, without their fragment.
"""

from __future__ import annotations

import functools
from urllib.parse import urljoin

from lxml import etree

from loader.settings import LoaderSettings
from loader.vocabularies import (
    ElementRule,
    is_document_relation,
    may_be_xml,
    names_a_document,
    page_id_url,
    rules_for,
)

XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSI_SCHEMA_LOCATION = f"{{{XSI}}}schemaLocation"
XSI_NO_NAMESPACE_SCHEMA_LOCATION = f"{{{XSI}}}noNamespaceSchemaLocation"
_HTTP = ("http://", "https://")
_OTHER_REFERENCES = frozenset({XSI_SCHEMA_LOCATION, XSI_NO_NAMESPACE_SCHEMA_LOCATION, XML_BASE})
_UNRESOLVED = object()
_RSS_ROOTS = frozenset({"rss", "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF"})
_SITEMAP_ROOTS = frozenset({"urlset", "sitemapindex"})


def _is_http(url: str) -> bool:
    return url.startswith(_HTTP) or url[:8].lower().startswith(_HTTP)


@functools.lru_cache(maxsize=1024)
def _split_base(base: str) -> tuple[str, str] | None:
    """An http(s) base URL's origin (``http://host``) and directory (``http://host/a/``);
    None for another scheme."""
    if not _is_http(base):
        return None
    rest = base.partition("#")[0].partition("?")[0]
    path_start = rest.find("/", rest.find("://") + 3)
    if path_start == -1:
        return rest, rest + "/"
    return rest[:path_start], rest[: rest.rfind("/") + 1]


def _join(base: str, reference: str) -> str:
    """``urljoin`` with fast paths for the common plain relative references."""
    if "./" in reference or reference.startswith(("//", "?", "#", ".")):
        return urljoin(base, reference)
    colon = reference.find(":")
    if colon != -1:
        slash = reference.find("/")
        if slash == -1 or colon < slash:
            return reference  # has its own scheme
    split = _split_base(base)
    if split is None:
        return urljoin(base, reference)
    return split[0] + reference if reference[0] == "/" else split[1] + reference


def absolute_http_url(base: str, reference: str) -> str | None:
    """``reference`` resolved against ``base``, without fragment, if it is http(s).

    >>> absolute_http_url("http://a.test/x/doc.xml", " ../b.xml#top ")
    'http://a.test/b.xml'
    >>> absolute_http_url("http://a.test/x/doc.xml?q=1", "c/d.xml")
    'http://a.test/x/c/d.xml'
    >>> absolute_http_url("http://a.test/doc.xml", "mailto:me@a.test") is None
    True
    """
    reference = reference.strip()
    if not reference:
        return None
    if not _is_http(reference):
        reference = _join(base, reference)
        if not _is_http(reference):
            return None
    return reference.partition("#")[0] if "#" in reference else reference


def _local_name(tag: str) -> str:
    return tag.rpartition("}")[2]


class LinkCollector:
    """Collects the links and dependencies of one document, element by element.

    The same collector serves the whole-tree path (fed ``root.iter()``) and the streaming path
    (fed each element at its end event, before the element is freed), so both find the same
    links.
    """

    def __init__(
        self, document_url: str, settings: LoaderSettings, *, in_document_order: bool = False
    ) -> None:
        """``in_document_order``: nodes come in document order (ancestors first), so until
        the first ``xml:base`` attribute every base URI is the document's URL, which saves
        asking libxml2 for each node's base. The streaming path feeds nodes at their end
        (descendants first) and asks every time."""
        self.document_url = document_url
        self._base = document_url  # the document's base: its URL, or an XHTML <base href>
        self._rules = rules_for(settings.links)
        self._fixed_base = in_document_order
        self.settings = settings
        self._links: dict[str, None] = {}
        self._dependencies: dict[str, None] = {}
        self.schema_locations: dict[str, str] = {}  # namespace ("" for none) -> schema URL
        self.notes: list[str] = []
        self._kind: str | None = None  # "rss", "sitemap" or None, from the root element
        self._sitemap_urls = 0
        self._sitemap_index = False
        self._sitemaps: dict[str, None] = {}
        self._sitemap_closed = False
        self._links_capped = False
        self._resolved: dict[str, str | None] = {}  # reference -> URL, against document_url
        self._max_links = settings.max_links

    @property
    def links(self) -> list[str]:
        return list(self._links)

    @property
    def dependencies(self) -> list[str]:
        return list(self._dependencies)

    @property
    def sitemaps(self) -> list[str]:
        """A sitemap index's entries (links too): the crawler fetches them as sitemaps."""
        return list(self._sitemaps)

    @property
    def is_sitemap(self) -> bool:
        return self._kind == "sitemap"

    def root(self, root: etree._Element) -> None:
        """Note what kind of document this is (feed, sitemap, other) from its root."""
        tag = root.tag
        if tag in _RSS_ROOTS:
            self._kind = "rss"
        elif _local_name(tag) in _SITEMAP_ROOTS and "sitemap" in tag:
            self._kind = "sitemap"
            self._sitemap_index = _local_name(tag) == "sitemapindex"

    def dependency(self, url: str | None) -> None:
        if url:
            self._dependencies.setdefault(url, None)

    def close_sitemap(self, reason: str) -> None:
        """Stop taking sitemap URLs (the protocol's size cap was reached)."""
        if self.is_sitemap and not self._sitemap_closed:
            self._sitemap_closed = True
            self.notes.append(reason)

    def tree(self, root: etree._Element) -> None:
        """Collect the links of a whole tree: its elements in document order, then its
        ``xml-stylesheet`` processing instructions (a plain walk: documents have tens of
        elements, and an XPath over the reference attributes costs more than the walk)."""
        self.root(root)
        for element in root.iter(etree.Element):
            self._element(element)
        for node in root.itersiblings(etree.PI, preceding=True):
            self.node(node)
        for node in root.iter(etree.PI):
            self.node(node)
        for node in root.itersiblings(etree.PI):
            self.node(node)

    def node(self, node: etree._Element) -> None:
        """Collect what one element or processing instruction refers to."""
        tag = node.tag
        if tag.__class__ is str:
            self._element(node)
        elif tag is etree.PI and node.target == "xml-stylesheet":
            href = node.get("href")
            if href:
                self.dependency(self._resolve(self._base_of(node), href))

    def _element(self, element: etree._Element) -> None:
        """Take the reference attributes of an element (and its text, in a feed)."""
        items = element.items()
        base = None
        if items:  # most elements have none: no rule to look up
            rule = self._rules.rule(element.tag)
            names = rule.names
        for name, value in items:
            if name not in names and name not in _OTHER_REFERENCES:
                continue
            if base is None:
                if self._fixed_base and element.get(XML_BASE) is None:
                    base = self._base
                else:
                    self._fixed_base = False  # this element and those after may have another
                    base = element.base or self._base
            if name in rule.links:
                if not rule.formats or names_a_document(element.get("format")):
                    self._add_link(base, value)
            elif name in names:
                self._special(rule, element, name, value, base)
            elif name == XSI_SCHEMA_LOCATION:
                self._schema_pairs(base, value)
            elif name == XSI_NO_NAMESPACE_SCHEMA_LOCATION:
                self._schema(base, "", value)
        if self._kind is not None and element.text:
            self._text_link(element, base)

    def _special(
        self, rule: ElementRule, element: etree._Element, name: str, value: str, base: str
    ) -> None:
        """An attribute a vocabulary gives a rule of its own (see loader.vocabularies)."""
        if name in rule.lists:
            for reference in value.split():
                self._add_link(base, reference)
        elif name in rule.media:
            url = self._resolve(base, value)
            if url is not None and may_be_xml(url):
                self._add_link(base, value)
        elif name in rule.page_ids:
            self._add_link(base, page_id_url(self.document_url, value))
        elif rule.html_link:
            link, dependency = is_document_relation(element.get("rel"))
            if link:
                self._add_link(base, value)
            elif dependency:
                self.dependency(self._resolve(base, value))
        elif rule.feed_link:
            if "self" not in (element.get("rel") or "").lower().split():
                self._add_link(base, value)
        elif rule.html_base:
            rebased = absolute_http_url(self._base, value)
            if rebased and self._fixed_base:
                self._base = rebased
                self._resolved = {}

    def _text_link(self, element: etree._Element, base: str | None) -> None:
        """An RSS ``<link>`` or a sitemap ``<loc>``: the element's text is a link."""
        name = _local_name(element.tag)
        if self._kind == "sitemap" and name == "loc":
            self._sitemap_loc(element)
        elif self._kind == "rss" and name == "link":
            self._add_link(base or self._base_of(element), element.text)

    def _resolve(self, base: str, reference: str) -> str | None:
        """:func:`absolute_http_url`, each reference resolved once against the document's
        base (documents repeat their links)."""
        if base is not self._base:
            return absolute_http_url(base, reference)
        try:
            return self._resolved[reference]
        except KeyError:
            url = self._resolved[reference] = absolute_http_url(base, reference)
            return url

    def _base_of(self, node: etree._Element) -> str:
        if self._fixed_base:
            return self._base
        return node.base or self._base

    def _sitemap_loc(self, node: etree._Element) -> None:
        if self._sitemap_closed:
            return
        if self._sitemap_urls >= self.settings.sitemap_max_urls:
            self.close_sitemap(
                f"sitemap capped at {self.settings.sitemap_max_urls} URLs (sitemap protocol)"
            )
            return
        self._sitemap_urls += 1
        self._add_link(self._base_of(node), node.text)
        if self._sitemap_index and node.text:
            url = self._resolve(self._base_of(node), node.text.strip())
            if url:
                self._sitemaps.setdefault(url, None)

    def _schema_pairs(self, base: str, value: str) -> None:
        words = value.split()
        for namespace, location in zip(words[::2], words[1::2], strict=False):
            self._schema(base, namespace, location)

    def _schema(self, base: str, namespace: str, location: str) -> None:
        url = self._resolve(base, location)
        if url:
            self.schema_locations.setdefault(namespace, url)
            self.dependency(url)

    def _add_link(self, base: str | None, reference: str | None) -> None:
        if reference is None or reference.lstrip()[:1] == "#":
            return  # a place in this document is no link
        url = self._resolved.get(reference, _UNRESOLVED) if self._fixed_base else _UNRESOLVED
        if url is _UNRESOLVED:  # (the common case above is :meth:`_resolve`, inlined)
            url = self._resolve(base or self._base, reference)
        if url is None or url in self._links:
            return
        if len(self._links) >= self._max_links:
            if not self._links_capped:
                self._links_capped = True
                self.notes.append(f"links capped at {self.settings.max_links}")
            return
        self._links[url] = None
