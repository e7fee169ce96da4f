"""Which discovered pages to favour in a focused crawl (OPIC paper §3.3, "Focused crawling").

Xyleme wants XML. Before a page is read, only its URL and the context of the link to it
hint at its type, so OPIC gives *suspected* XML pages a larger weight in the virtual page's
payments (:meth:`ranking.opic.OPIC.set_weight`): they collect more cash and Greedy reads
them sooner. The guess only orders the crawl; the loader decides what a page really is.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

XML_SUFFIXES = frozenset(
    {".xml", ".rss", ".atom", ".rdf", ".xsd", ".dtd", ".svg", ".kml", ".gpx", ".xbrl", ".opml"}
)
"""Path suffixes that announce an XML document."""

_XML_CONTEXT = re.compile(r"\b(xml|rss|atom|rdf|feed|sitemap|svg)\b|\+xml\b", re.IGNORECASE)
_XML_QUERY = re.compile(r"(?:^|&)(?:format|output|type|fmt)=(?:xml|rss|atom)\b", re.IGNORECASE)


def suspect_xml(url: str, context: str | None = None) -> bool:
    """Whether the page at ``url`` is probably XML, from the URL and the link's context.

    Parameters
    ----------
    url : str
        The absolute URL of the linked page.
    context : str, optional
        What the linking page says about the link: anchor text, ``rel``/``type`` attributes,
        words around it.

    Returns
    -------
    bool
        True for an XML path suffix (``.xml``, ``.rss``, ``.svg`` …), a query asking for an
        XML format (``?format=xml``), a path segment naming a feed or sitemap, or a context
        that mentions XML, RSS, Atom, RDF, a feed, a sitemap, or an ``…+xml`` media type.

    Examples
    --------
    >>> suspect_xml("http://example.org/catalog/items.XML")
    True
    >>> suspect_xml("http://example.org/news", context='<link type="application/rss+xml">')
    True
    >>> suspect_xml("http://example.org/index.html", context="our products")
    False
    """
    parts = urlsplit(url)
    path = parts.path.lower()
    last_segment = path.rsplit("/", 1)[-1]
    dot = last_segment.rfind(".")
    if dot >= 0 and last_segment[dot:] in XML_SUFFIXES:
        return True
    if _XML_QUERY.search(parts.query):
        return True
    if any(segment in ("feed", "rss", "atom", "sitemap") for segment in path.split("/")):
        return True
    return bool(context and _XML_CONTEXT.search(context))
