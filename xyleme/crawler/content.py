"""Which bodies the crawler keeps, and as what type: by Content-Type, then by sniffing.

Only HTML, XML (and XML-based types: RSS/Atom, sitemaps, XHTML, SVG) and DTDs are kept
(paper §3: "avoid reading pages that are neither XML nor HTML").
"""

from __future__ import annotations

from metadata import PageType
from xyleme.crawler.scope import url_suffix

_HTML_TYPES = frozenset({"text/html"})
_XML_TYPES = frozenset({"text/xml", "application/xml", "application/xhtml+xml"})
_DTD_TYPES = frozenset({"application/xml-dtd", "application/xml-external-parsed-entity"})
_NEUTRAL_TYPES = frozenset({"", "text/plain", "application/octet-stream"})


def media_type(content_type: str | None) -> str:
    """The lower-cased media type of a Content-Type header, parameters dropped.

    >>> media_type("Text/HTML; charset=UTF-8")
    'text/html'
    """
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def classify(content_type: str | None, url: str, head: bytes) -> PageType | None:
    """The page type of a body, or None when the crawler does not keep it.

    ``head`` is the start of the body, used when the Content-Type says nothing useful
    (missing, text/plain, octet-stream).

    >>> classify("application/rss+xml", "http://a.example/feed", b"")
    <PageType.XML: 'XML'>
    >>> classify("image/png", "http://a.example/x", b"") is None
    True
    >>> classify(None, "http://a.example/x", b"  <?xml version='1.0'?><a/>")
    <PageType.XML: 'XML'>
    """
    media = media_type(content_type)
    if media in _HTML_TYPES:
        return PageType.HTML
    if media in _XML_TYPES or media.endswith("+xml"):
        return PageType.XML
    if media in _DTD_TYPES:
        return PageType.DTD
    if media not in _NEUTRAL_TYPES:
        return None
    suffix = url_suffix(url)
    if suffix in ("dtd", "ent"):
        return PageType.DTD
    start = head[:512].lstrip().lower()
    if start.startswith(b"\xef\xbb\xbf"):
        start = start[3:].lstrip()
    if start.startswith(b"<?xml"):
        return PageType.XML
    if start.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return PageType.HTML
    if start.startswith(b"<!element") or start.startswith(b"<!entity"):
        return PageType.DTD
    return None
