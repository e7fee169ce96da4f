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


def refused_before_body(content_type: str | None) -> str | None:
    """Why a response is not worth reading, judged on its Content-Type alone (or None).

    >>> refused_before_body("image/png")
    'unwanted content type image/png'
    >>> refused_before_body("text/plain") is None  # may be a DTD or unlabelled XML: sniff it
    True
    """
    media = media_type(content_type)
    if media in _NEUTRAL_TYPES or _declared_type(media) is not None:
        return None
    return f"unwanted content type {media}"


def _declared_type(media: str) -> PageType | None:
    if media in _HTML_TYPES:
        return PageType.HTML
    if media in _XML_TYPES or media.endswith("+xml"):
        return PageType.XML
    if media in _DTD_TYPES:
        return PageType.DTD
    return None


def _sniff(head: bytes) -> PageType | None:
    start = head[:512].lstrip()
    if start.startswith(b"\xef\xbb\xbf"):
        start = start[3:].lstrip()
    start = start[:32].lower()
    if start.startswith(b"<?xml"):
        return PageType.XML
    if start.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return PageType.HTML
    if start.startswith((b"<!element", b"<!entity", b"<!attlist")):
        return PageType.DTD
    return None


def classify(content_type: str | None, url: str, head: bytes) -> PageType | None:
    """The page type of a body, or None when the crawler does not keep it.

    The Content-Type decides, except that a body which plainly says otherwise wins (servers
    label XML as text/html and HTML as application/xml); a neutral or missing type (none,
    text/plain, octet-stream) is decided by the suffix (.dtd, .ent) or by sniffing ``head``,
    the start of the body.

    >>> classify("application/rss+xml", "http://a.example/feed", b"")
    <PageType.XML: 'XML'>
    >>> classify("image/png", "http://a.example/x", b"") is None
    True
    >>> classify(None, "http://a.example/x", b"  <?xml version='1.0'?><a/>")
    <PageType.XML: 'XML'>
    >>> classify("text/html", "http://a.example/x", b"<?xml version='1.0'?><catalog/>")
    <PageType.XML: 'XML'>
    """
    media = media_type(content_type)
    declared = _declared_type(media)
    sniffed = _sniff(head)
    if declared is not None:
        if declared is not PageType.DTD and sniffed in (PageType.HTML, PageType.XML):
            return sniffed
        return declared
    if media not in _NEUTRAL_TYPES:
        return None
    if url_suffix(url) in ("dtd", "ent"):
        return PageType.DTD
    return sniffed
