"""What a fetched body is: a document (HTML, XML, DTD) or a resource, as browsers decide it.

The Content-Type decides (ARCHITECTURE "What a page is"): ``text/html`` is HTML even when
the body starts with ``<?xml``; ``text/xml``, ``application/xml`` and every ``+xml`` type
(XHTML, RSS, Atom, SVG…) are XML; the DTD types are DTDs. The body is sniffed, following the
WHATWG MIME Sniffing standard (https://mimesniff.spec.whatwg.org/, "computed MIME type"),
only when the type is missing, unparsable or generic: ``unknown/unknown``, ``*/*``,
``application/octet-stream`` (and ``binary/octet-stream``, object stores' default),
``text/plain`` (through the standard's text-or-binary rule);
``X-Content-Type-Options: nosniff`` keeps the declared type. A ``text/html`` body that is a
feed (``<rss``, ``<feed``, RSS 1.0 ``<rdf:RDF``) is XML (the standard's "mislabeled feed").
Anything else is a *resource*: recorded with its type, size and MD5, never loaded, kept out
of the rankings (paper §3: "avoid reading pages that are neither XML nor HTML").

Where the crawler parts from the standard, and why: a BOM is skipped before the HTML and
XML signatures (the standard stops at ``text/plain``; a BOM'd XML document is still XML), a
text body served as ``text/plain`` is sniffed for those signatures (old servers label
every unknown suffix so, ``.rss`` and ``.xhtml`` included), and a generic body that starts
like a DTD (or a text one whose suffix is .dtd, .ent or .mod) is a DTD, which browsers never
meet.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from metadata import PageType
from xyleme.crawler.denylist import url_suffix

SNIFF_BYTES = 1445
"""Bytes of a body the sniffing reads (the standard's resource header)."""

# Types that say nothing (binary/octet-stream: object stores' default for an upload).
_GENERIC = frozenset(
    {
        "",
        "unknown/unknown",
        "application/unknown",
        "*/*",
        "application/octet-stream",
        "binary/octet-stream",
    }
)
_DTD_TYPES = frozenset(
    {
        "application/xml-dtd",
        "application/xml-external-parsed-entity",
        "text/xml-external-parsed-entity",
    }
)
_DTD_SUFFIXES = frozenset({"dtd", "ent", "mod"})
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_WHITESPACE = b"\t\n\x0c\r "
_BINARY = frozenset([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_HTML_SIGNATURES = tuple(
    tag.encode()
    for tag in (
        "<!doctype html",
        "<html",
        "<head",
        "<script",
        "<iframe",
        "<h1",
        "<div",
        "<font",
        "<table",
        "<a",
        "<style",
        "<title",
        "<b",
        "<body",
        "<br",
        "<p",
        "<!--",
    )
)
# (media type, [(offset, bytes)...]): every part must match (the standard's byte patterns,
# masks written out as fixed offsets).
_BINARY_SIGNATURES: tuple[tuple[str, tuple[tuple[int, bytes], ...]], ...] = (
    ("application/postscript", ((0, b"%!PS-Adobe-"),)),
    ("image/x-icon", ((0, b"\x00\x00\x01\x00"),)),
    ("image/x-icon", ((0, b"\x00\x00\x02\x00"),)),
    ("image/bmp", ((0, b"BM"),)),
    ("image/gif", ((0, b"GIF87a"),)),
    ("image/gif", ((0, b"GIF89a"),)),
    ("image/webp", ((0, b"RIFF"), (8, b"WEBPVP"))),
    ("image/png", ((0, b"\x89PNG\r\n\x1a\n"),)),
    ("image/jpeg", ((0, b"\xff\xd8\xff"),)),
    ("audio/aiff", ((0, b"FORM"), (8, b"AIFF"))),
    ("audio/mpeg", ((0, b"ID3"),)),
    ("application/ogg", ((0, b"OggS\x00"),)),
    ("audio/midi", ((0, b"MThd\x00\x00\x00\x06"),)),
    ("video/avi", ((0, b"RIFF"), (8, b"AVI "))),
    ("audio/wave", ((0, b"RIFF"), (8, b"WAVE"))),
    ("video/mp4", ((4, b"ftyp"),)),
    ("video/webm", ((0, b"\x1a\x45\xdf\xa3"),)),
    ("font/otf", ((0, b"OTTO"),)),
    ("font/ttf", ((0, b"\x00\x01\x00\x00"),)),
    ("font/collection", ((0, b"ttcf"),)),
    ("font/woff", ((0, b"wOFF"),)),
    ("font/woff2", ((0, b"wOF2"),)),
    ("application/x-gzip", ((0, b"\x1f\x8b\x08"),)),
    ("application/zip", ((0, b"PK\x03\x04"),)),
    ("application/x-rar-compressed", ((0, b"Rar!\x1a\x07\x00"),)),
    ("application/x-rar-compressed", ((0, b"Rar!\x1a\x07\x01\x00"),)),
    ("application/pdf", ((0, b"%PDF-"),)),
)
_DTD_STARTS = (b"<!element", b"<!entity", b"<!attlist", b"<!notation", b"<![")
_PARAMETER_ENTITY_REFERENCE = re.compile(rb"%[A-Za-z_:][\w.:-]*;")
_RDF_NAMESPACES = (b"http://purl.org/rss/1.0/", b"http://www.w3.org/1999/02/22-rdf-syntax-ns#")


@dataclass(frozen=True, slots=True)
class Kind:
    """What a body is: ``page_type`` (HTML, XML, DTD or RESOURCE), ``media`` the MIME type
    it was taken for (the computed type, e.g. ``image/png`` or ``application/rss+xml``),
    ``sniffed`` whether the body rather than the Content-Type decided."""

    page_type: PageType
    media: str
    sniffed: bool = False

    @property
    def is_document(self) -> bool:
        """True for what the warehouse keeps (HTML, XML, DTD); False for a resource."""
        return self.page_type is not PageType.RESOURCE


@dataclass(frozen=True, slots=True)
class MimeType:
    """A parsed Content-Type: its lower-cased ``essence`` (type/subtype) and parameters."""

    essence: str
    params: dict[str, str]


@functools.lru_cache(maxsize=512)
def parse_mime_type(value: str | None) -> MimeType | None:
    """A Content-Type parsed as the standard's "parse a MIME type" does, or None if invalid.

    Servers send the same few values: answers are remembered (treat them as read-only).

    >>> parse_mime_type('Text/HTML; Charset="UTF-8"; q')
    MimeType(essence='text/html', params={'charset': 'UTF-8'})
    >>> parse_mime_type("html") is None
    True
    """
    if not value:
        return None
    head, _, rest = value.partition(";")
    kind, slash, subtype = head.strip(" \t\r\n").partition("/")
    subtype = subtype.rstrip(" \t\r\n")
    if not slash or not _TOKEN.fullmatch(kind) or not _TOKEN.fullmatch(subtype):
        return None
    params: dict[str, str] = {}
    for part in _split_params(rest):
        name, equals, raw = part.partition("=")
        name = name.strip(" \t\r\n").lower()
        if not equals or not _TOKEN.fullmatch(name) or name in params:
            continue
        raw = raw.strip(" \t\r\n")
        value = _unquote(raw) if raw.startswith('"') else raw
        if value:
            params[name] = value
    return MimeType(f"{kind}/{subtype}".lower(), params)


def _unquote(raw: str) -> str:
    """The value of an HTTP quoted-string (``"a\\"b"`` is ``a"b``); text after it is ignored."""
    value, escaped = [], False
    for char in raw[1:]:
        if escaped:
            value.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            break
        else:
            value.append(char)
    return "".join(value)


def _split_params(text: str) -> list[str]:
    """``;``-separated parameters; a quoted value may hold a ``;``."""
    parts, current, quoted, escaped = [], [], False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == ";" and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def media_type(content_type: str | None) -> str:
    """The lower-cased essence of a Content-Type ('' when missing or invalid).

    >>> media_type("Text/HTML; charset=UTF-8"), media_type("nonsense")
    ('text/html', '')
    """
    parsed = parse_mime_type(content_type)
    return parsed.essence if parsed is not None else ""


def is_xml_type(essence: str) -> bool:
    """An XML MIME type of the standard: ``text/xml``, ``application/xml`` or ``*/*+xml``."""
    return essence in ("text/xml", "application/xml") or essence.endswith("+xml")


def headers_for_loader(headers: Mapping[str, str], kind: Kind | None) -> dict[str, str]:
    """The response headers the loader reads a document with. When the body, not the
    Content-Type, made it XML or a DTD, the type it was sniffed as replaces the header: the
    ``charset`` of a type that is no XML type (``text/plain; charset=iso-8859-1``, a common
    server default) does not name the document's encoding, its XML declaration does
    (RFC 7303 §3: only an XML media type's charset applies).

    >>> headers_for_loader({"content-type": "text/plain; charset=iso-8859-1", "ETag": "x"},
    ...                    Kind(PageType.XML, "text/xml", sniffed=True))
    {'ETag': 'x', 'Content-Type': 'text/xml'}
    """
    copied = dict(headers)
    if kind is None or not kind.sniffed:
        return copied
    kept = {name: value for name, value in copied.items() if name.lower() != "content-type"}
    return {**kept, "Content-Type": kind.media}


def forbids_sniffing(header: str | None) -> bool:
    """True when an ``X-Content-Type-Options`` header says ``nosniff`` (its first value).

    >>> forbids_sniffing("NoSniff, foo"), forbids_sniffing(None)
    (True, False)
    """
    return bool(header) and header.split(",", 1)[0].strip(" \t").lower() == "nosniff"


def declared_kind(content_type: str | None, *, nosniff: bool = False) -> Kind | None:
    """The kind the Content-Type alone decides, or None when the body must be looked at.

    The crawler asks before reading a body: a resource's body is only hashed. With
    ``nosniff`` (``X-Content-Type-Options: nosniff``) a declared type always stands.

    >>> declared_kind("image/png")
    Kind(page_type=<PageType.RESOURCE: 'RESOURCE'>, media='image/png', sniffed=False)
    >>> declared_kind("application/octet-stream") is None, declared_kind("text/html") is None
    (True, True)
    """
    essence = media_type(content_type)
    if essence in _DTD_TYPES:
        return Kind(PageType.DTD, essence)
    if is_xml_type(essence):
        return Kind(PageType.XML, essence)
    if essence == "text/html":
        return Kind(PageType.HTML, essence) if nosniff else None  # it may be a feed
    if essence == "text/plain" or essence in _GENERIC:
        return Kind(PageType.RESOURCE, essence) if nosniff and essence else None
    return Kind(PageType.RESOURCE, essence)


def classify(content_type: str | None, url: str, head: bytes, *, nosniff: bool = False) -> Kind:
    """What a body is, from its Content-Type, then (when generic) its first bytes ``head``.

    Examples
    --------
    >>> classify("text/html", "http://a.example/x", b"<?xml version='1.0'?><catalog/>").page_type
    <PageType.HTML: 'HTML'>
    >>> classify("text/html", "http://a.example/x", b"<?xml version='1.0'?><rss>").media
    'application/rss+xml'
    >>> classify(None, "http://a.example/x", b"  <?xml version='1.0'?><a/>").page_type
    <PageType.XML: 'XML'>
    >>> classify("application/octet-stream", "http://a.example/x", b"\\x89PNG\\r\\n\\x1a\\n")
    Kind(page_type=<PageType.RESOURCE: 'RESOURCE'>, media='image/png', sniffed=True)
    """
    essence = media_type(content_type)
    declared = declared_kind(content_type, nosniff=nosniff)
    if declared is not None:
        return declared
    if essence == "text/html":
        return _feed_or_html(head)
    if (url_suffix(url) in _DTD_SUFFIXES and _is_text(head)) or _starts_like_dtd(head):
        return Kind(PageType.DTD, "application/xml-dtd", sniffed=True)
    if essence == "text/plain" and not _is_text(head):
        return Kind(PageType.RESOURCE, _binary_type(head), sniffed=True)
    return _sniff_unknown(head, scriptable=not nosniff)


def _feed_or_html(head: bytes) -> Kind:
    """The standard's "rules for distinguishing if a resource is a feed or HTML"."""
    data = head.removeprefix(b"\xef\xbb\xbf")
    position = 0
    while True:
        position = _skip_whitespace(data, position)
        if data[position : position + 1] != b"<":
            return Kind(PageType.HTML, "text/html")
        if data.startswith(b"<!--", position):
            position = _after(data, b"-->", position + 4)
        elif data.startswith((b"<!", b"<?"), position):
            position = _after(data, b">", position + 2)
        elif data.startswith(b"<rss", position):
            return Kind(PageType.XML, "application/rss+xml", sniffed=True)
        elif data.startswith(b"<feed", position):
            return Kind(PageType.XML, "application/atom+xml", sniffed=True)
        elif data.startswith(b"<rdf:RDF", position) and all(
            namespace in data[position:] for namespace in _RDF_NAMESPACES
        ):
            return Kind(PageType.XML, "application/rss+xml", sniffed=True)
        else:
            return Kind(PageType.HTML, "text/html")
        if position < 0:
            return Kind(PageType.HTML, "text/html")


def _skip_whitespace(data: bytes, position: int) -> int:
    while position < len(data) and data[position] in _WHITESPACE:
        position += 1
    return position


def _after(data: bytes, end: bytes, position: int) -> int:
    """The position after ``end`` from ``position`` on, or -1 when the head holds none."""
    found = data.find(end, position)
    return -1 if found < 0 else found + len(end)


def _textual_head(head: bytes) -> bytes:
    """The head as ASCII-compatible bytes: a UTF-16 head (BOM or ``<?`` in UTF-16) is
    transcoded so the signatures can be looked for in it; a UTF-8 BOM is dropped."""
    for prefix, codec in (
        (b"\xfe\xff", "utf-16-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"<\x00?\x00", "utf-16-le"),
        (b"\x00<\x00?", "utf-16-be"),
    ):
        if head.startswith(prefix):
            start = len(prefix) if prefix[0] in b"\xfe\xff" else 0
            usable = (len(head) - start) // 2 * 2
            return head[start : start + usable].decode(codec, "replace").encode("utf-8")
    return head.removeprefix(b"\xef\xbb\xbf")


def _starts_like_dtd(head: bytes) -> bool:
    """True when the first markup, past comments and the text declaration, declares DTD
    content (``<!ELEMENT``, ``<!ENTITY``, ``<!ATTLIST``, ``<!NOTATION``, a conditional
    section or a parameter-entity reference)."""
    data = _textual_head(head)
    position = 0
    while 0 <= position < len(data):
        position = _skip_whitespace(data, position)
        if data.startswith(b"<!--", position):
            position = _after(data, b"-->", position + 4)
        elif data.startswith(b"<?", position):
            position = _after(data, b"?>", position + 2)
        else:
            start = data[position : position + 10].lower()
            return start.startswith(_DTD_STARTS) or bool(
                _PARAMETER_ENTITY_REFERENCE.match(data, position)
            )
    return False


def _is_text(head: bytes) -> bool:
    """The standard's text-or-binary rule: a UTF-16/UTF-8 BOM or no binary data byte."""
    if head.startswith((b"\xfe\xff", b"\xff\xfe", b"\xef\xbb\xbf")):
        return True
    return _BINARY.isdisjoint(head[:SNIFF_BYTES])


def _binary_type(head: bytes) -> str:
    """The media type a binary signature names, else ``application/octet-stream``."""
    for media, parts in _BINARY_SIGNATURES:
        if all(head.startswith(pattern, offset) for offset, pattern in parts):
            return media
    return "application/octet-stream"


def _sniff_unknown(head: bytes, *, scriptable: bool) -> Kind:
    """The standard's "rules for identifying an unknown MIME type" (BOM skipped, see the
    module docstring): HTML and XML signatures when ``scriptable``, then binary ones."""
    if scriptable:
        data = _textual_head(head)
        start = data[_skip_whitespace(data, 0) :][:16]
        lowered = start.lower()
        for signature in _HTML_SIGNATURES:
            if lowered.startswith(signature) and lowered[len(signature) : len(signature) + 1] in (
                b" ",
                b">",
            ):
                return Kind(PageType.HTML, "text/html", sniffed=True)
        if start.startswith(b"<?xml"):
            return Kind(PageType.XML, "text/xml", sniffed=True)
    media = _binary_type(head)
    if media == "application/octet-stream" and _is_text(head):
        media = "text/plain"
    return Kind(PageType.RESOURCE, media, sniffed=True)
