"""Links and robots directives of an HTML page (paper §3: "parsed on the fly ... all URLs
contained in the page are added to the FIFO").

What counts as a link follows ARCHITECTURE "What is a link": ``a``/``area`` href,
``frame``/``iframe`` src, ``link`` href when its ``rel`` names a document relation (next,
prev, alternate, canonical, search, index, contents, help, start, up, chapter…; never when
it names a resource: stylesheet, icon, preload, prefetch, manifest…), the URL of a
``<meta http-equiv=refresh>``, and ``img``/``object``/``embed`` sources only when they may be
XML (SVG: an XML-ish suffix or none, or a ``type`` attribute that says XML). Fragment-only
references and non-HTTP schemes (``mailto:``, ``javascript:``…) are not links.

The body is decoded as the HTML Standard says (:mod:`~xyleme.crawler.htmlencoding`), then
``<base href>`` is honoured and every link resolved and canonicalised
(:func:`metadata.canonicalize_url`) with its query in the page's encoding (URL Standard),
so one page has one spelling.

:func:`extract_links_off_loop` runs it on a thread of its own: the parse is most of a page's
cost on the crawler's event loop, libxml2 runs it without the GIL, and it must hold
:data:`loader.parselock.PARSE_LOCK` (lxml swaps libxml2's process-wide entity loader around
every parse), which the event loop must never wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urljoin

from lxml import etree

from loader import PARSE_LOCK
from metadata import InvalidURL, URLTooLong, canonicalize_url
from xyleme.crawler.content import is_xml_type, parse_mime_type
from xyleme.crawler.denylist import XML_SUFFIXES, url_suffix
from xyleme.crawler.htmlencoding import decode_html, url_codec

# lxml's HTML parser (libxml2's, the one behind lxml.html) without lxml.html's Python element
# classes: those cost a Python lookup per element, a third of the parse on the hot path. The
# body reaches it as UTF-8 (decoded first), so its own guess from <meta> never applies.
_PARSER = etree.HTMLParser(recover=True, remove_comments=True, remove_pis=True, encoding="utf-8")
_LINK_ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_MAYBE_XML_ATTRIBUTE = {"img": "src", "embed": "src", "object": "data"}
_TAGS = ("a", "area", "frame", "iframe", "link", "base", "meta", "img", "embed", "object")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_HTTP = ("http:", "https:")

DOCUMENT_RELATIONS = frozenset(
    {
        "alternate",
        "appendix",
        "archives",
        "author",
        "bookmark",
        "canonical",
        "chapter",
        "contents",
        "copyright",
        "describedby",
        "edituri",
        "feed",
        "first",
        "glossary",
        "help",
        "home",
        "index",
        "last",
        "license",
        "meta",
        "next",
        "prev",
        "previous",
        "related",
        "search",
        "section",
        "sitemap",
        "start",
        "subsection",
        "toc",
        "top",
        "up",
    }
)
"""``<link rel>`` values that point to a document (a link of the page, §5's graph)."""

RESOURCE_RELATIONS = frozenset(
    {
        "stylesheet",
        "icon",
        "shortcut",
        "apple-touch-icon",
        "apple-touch-icon-precomposed",
        "apple-touch-startup-image",
        "mask-icon",
        "fluid-icon",
        "preload",
        "prefetch",
        "modulepreload",
        "prerender",
        "preconnect",
        "dns-prefetch",
        "manifest",
        "pingback",
        "webmention",
        "import",
        "serviceworker",
        "expect",
    }
)
"""``<link rel>`` values that point to a resource the page uses: never a link, even beside a
document relation (``alternate stylesheet`` is a style sheet)."""


# Site-wide links recur on every page: canonicalising costs ~13 µs a URL (yarl), most of a
# page's parse time, so recent answers are remembered. A one-argument cache has
# functools' fast path (the URL is its own key): the common case, a UTF-8 or ASCII query.
_canonical_cached = lru_cache(maxsize=1 << 16)(canonicalize_url)
_canonical_encoded = lru_cache(maxsize=1 << 12)(canonicalize_url)


_BEFORE_QUERY = re.compile(r"[^?#]*")
"""A reference's path: all before its query or fragment."""
_RELATIVE_PATH = re.compile(r"(?![^/?#]*:)[^/?#;]")
"""A relative-path reference (``x.html``, ``../a/``, ``c?q``): its resolution keeps
nothing of the base but the folder (no scheme; no ``/``, ``?``, ``#`` or ``;`` first, which
keep more of it)."""


def _path_start(url: str) -> int:
    """Where ``url``'s path begins: its first ``/`` after the ``//`` of the authority (-1
    when it has no path)."""
    return url.find("/", url.find("//") + 2)


def _folder(base: str) -> str | None:
    """``base`` up to the last ``/`` of its path, which :func:`_join` resolves a relative
    path against; None when it has no path or an empty or dot segment in it."""
    head = base.split("?", 1)[0].split("#", 1)[0]
    start = _path_start(head)
    if start < 0 or not head[: head.find(":")].islower():
        return None
    folder = head[: head.rfind("/") + 1]
    path = folder[start:]
    return None if "//" in path or "/./" in path or "/../" in path else folder


def _join(folder: str, raw: str) -> str:
    """``urljoin(folder, raw)`` for a relative path ``raw`` (:data:`_RELATIVE_PATH`) and a
    :func:`_folder`, the same string in a third of the time; the rare forms whose spelling
    ``urljoin`` changes (params, an empty segment, query or fragment) are left to it."""
    path = _BEFORE_QUERY.match(raw).group()
    tail = raw[len(path) :]
    if ";" in path or "//" in path or tail.endswith(("?", "#")) or "?#" in tail:
        return urljoin(folder, raw)
    start = _path_start(folder)
    resolved = folder[start:-1].split("/")  # "" then the folder's segments
    segments = path.split("/")
    for segment in segments:
        if segment == "..":
            if resolved:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")
    joined = "/".join(resolved) or "/"
    return folder[:start] + ("" if joined[0] == "/" else "/") + joined + tail


def _resolve(base: str, folder: str | None, raw: str, codec: str) -> str:
    """``raw`` resolved against ``base`` (whose :func:`_folder` is ``folder``) and
    canonicalised (raises InvalidURL); a non-ASCII query is encoded with ``codec``, the
    page's.

    Absolute and root-relative links skip ``urljoin``: the origin plus the path is the same
    URL once canonicalised (which also removes dot segments). A relative path is joined to
    the base's folder by :func:`_join`, which spells it as ``urljoin`` does (the canonical
    forms' cache is asked the same keys: a ``../`` link's normalised string is shared by
    the pages of other folders).
    """
    if raw.startswith(("http://", "https://", "HTTP://", "HTTPS://")):
        absolute = raw
    elif raw[0] == "/" and raw[1:2] != "/":
        end = _path_start(base)
        absolute = (base if end < 0 else base[:end]) + raw
    elif folder is not None and _RELATIVE_PATH.match(raw):
        absolute = _join(folder, raw)
    else:
        absolute = urljoin(base, raw)
    if codec == "utf-8" or raw.isascii():  # an ASCII query reads the same in every encoding
        return _canonical_cached(absolute)
    return _canonical_encoded(absolute, codec)


RECORDED_DIRECTIVES = ("noarchive", "nofollow", "noindex")
"""The robots meta directives the crawler honours and records (``none`` is noindex+nofollow)."""


class MalformedHTML(ValueError):
    """The body is not HTML that lxml can make a tree of."""


@dataclass(slots=True)
class HtmlLinks:
    """What one HTML page says: its links and its robots directives.

    ``links`` are canonical, distinct, in document order; ``nofollow`` the subset marked
    ``rel=nofollow`` (recorded as children, never followed). ``robots`` holds the
    ``<meta name=robots>`` directives (``noindex``, ``nofollow``, ``noarchive``…),
    ``canonical`` the canonicalised ``rel=canonical`` URL, ``invalid`` the (url, reason) of
    links that have no canonical form, ``encoding`` the encoding the page was read in (the
    Encoding Standard's name).
    """

    links: list[str] = field(default_factory=list)
    nofollow: set[str] = field(default_factory=set)
    robots: frozenset[str] = frozenset()
    canonical: str | None = None
    invalid: list[tuple[str, str]] = field(default_factory=list)
    encoding: str = "utf-8"

    @property
    def follows_links(self) -> bool:
        """False when the page's robots meta says ``nofollow`` (or ``none``)."""
        return "nofollow" not in self.robots and "none" not in self.robots

    @property
    def follow(self) -> list[str]:
        """The links the crawler may follow (none when the page says ``nofollow``)."""
        if not self.follows_links:
            return []
        return [link for link in self.links if link not in self.nofollow]

    @property
    def directives(self) -> str | None:
        """The recorded directives, sorted and comma-joined (``"noarchive,noindex"``), or None.

        >>> HtmlLinks(robots=frozenset({"none", "nosnippet"})).directives
        'nofollow,noindex'
        """
        robots = self.robots | {"noindex", "nofollow"} if "none" in self.robots else self.robots
        return ",".join(name for name in RECORDED_DIRECTIVES if name in robots) or None


def extract_links(
    body: bytes, url: str, robots_agent: str = "xyleme", *, content_type: str | None = None
) -> HtmlLinks:
    """Parse an HTML body and return its links and directives.

    Parameters
    ----------
    body : bytes
        The body (gzip already undone), in whatever encoding the page is written in.
    url : str
        The page's URL: the base for relative links unless ``<base href>`` says otherwise.
    robots_agent : str
        ``<meta name=ROBOTS_AGENT>`` directives apply as well as ``<meta name=robots>``.
    content_type : str, optional
        The response's Content-Type: its ``charset`` comes before the page's ``<meta>``.

    Returns
    -------
    HtmlLinks

    Raises
    ------
    MalformedHTML
        When lxml cannot build a tree (an empty body is a page without links, not an error).

    Examples
    --------
    >>> page = b'<base href="/d/"><a href="x.html">x</a><a rel="nofollow" href="y">y</a>'
    >>> found = extract_links(page, "http://a.example/")
    >>> found.links, found.follow
    (['http://a.example/d/x.html', 'http://a.example/d/y'], ['http://a.example/d/x.html'])
    >>> extract_links("<a href='päge?q=ä'>".encode("cp1252"), "http://a.example/",
    ...               content_type="text/html; charset=windows-1252").links
    ['http://a.example/p%C3%A4ge?q=%E4']
    """
    if not body.strip():
        return HtmlLinks()
    mime = parse_mime_type(content_type)
    decoded = decode_html(body, mime.params.get("charset") if mime is not None else None)
    try:
        with PARSE_LOCK:
            root = etree.fromstring(decoded.utf8, _PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as error:
        raise MalformedHTML(str(error) or "unparsable HTML") from None
    extractor = _Extractor(url, url_codec(decoded.encoding), robots_agent)
    extractor.found.encoding = decoded.encoding
    if root is not None:
        add, take = extractor.add, extractor.take
        for element in root.iter(_TAGS):
            if element.tag == "a":  # most of them: the short way
                add(element.get("href"), element.get("rel"))
            else:
                take(element)
    extractor.found.robots = frozenset(extractor.robots)
    return extractor.found


_PARSING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="xyleme-html")
"""One thread: the parses hold one process-wide lock anyway, and the walk after each holds
the GIL; a pool of the crawler's own, so the loop's default executor's long jobs never delay
a page."""


async def extract_links_off_loop(
    body: Callable[[], bytes],
    url: str,
    robots_agent: str = "xyleme",
    *,
    content_type: str | None = None,
) -> HtmlLinks:
    """:func:`extract_links` of ``body()`` (read in the thread too: it may be a spooled
    file) on the HTML thread, awaited from the event loop."""
    return await asyncio.get_running_loop().run_in_executor(
        _PARSING, lambda: extract_links(body(), url, robots_agent, content_type=content_type)
    )


class _Extractor:
    """One page's walk: the base URL, the query codec, and what was found so far."""

    def __init__(self, url: str, codec: str, robots_agent: str) -> None:
        self.url = self.base = url
        self.folder = _folder(url)
        self.codec = codec
        self.found = HtmlLinks()
        self.seen: set[str] = set()
        self.robots: set[str] = set()
        self.robots_names = {"robots", robots_agent.lower()}
        self.base_set = False

    def take(self, element: etree._Element) -> None:
        """Note what one element of ``_TAGS`` contributes."""
        tag = element.tag
        if tag == "base":
            self._base(element.get("href"))
        elif tag == "meta":
            self._meta(element)
        elif tag == "link":
            rel = (element.get("rel") or "").lower().split()
            href = element.get("href")
            if "canonical" in rel and href:
                self.found.canonical = self._canonical(href)
            if not RESOURCE_RELATIONS.isdisjoint(rel) or DOCUMENT_RELATIONS.isdisjoint(rel):
                return
            self.add(href, element.get("rel"))
        elif tag in _LINK_ATTRIBUTE:
            self.add(element.get(_LINK_ATTRIBUTE[tag]), element.get("rel"))
        elif _may_be_xml(element):
            self.add(element.get(_MAYBE_XML_ATTRIBUTE[tag]), None)

    def _base(self, href: str | None) -> None:
        """The first ``<base href>`` sets the base URL (a bad one leaves the page's URL)."""
        if self.base_set or not href:
            return
        self.base_set = True
        href = _clean(href)
        if _SCHEME.match(href) and not href.lower().startswith(_HTTP):
            return
        with contextlib.suppress(InvalidURL, ValueError):
            self.base = canonicalize_url(urljoin(self.url, href), self.codec)
            self.folder = _folder(self.base)

    def _meta(self, element: etree._Element) -> None:
        if (element.get("name") or "").lower() in self.robots_names:
            content = (element.get("content") or "").lower()
            self.robots.update(part.strip() for part in content.split(",") if part.strip())
        elif (element.get("http-equiv") or "").strip().lower() == "refresh":
            self.add(refresh_url(element.get("content") or ""), None)

    def add(self, raw: str | None, rel: str | None) -> None:
        """Take the reference ``raw`` as a link (nofollow when ``rel`` says so)."""
        if not raw:
            return
        link = self._canonical(raw)
        if link is None:
            return
        if rel and "nofollow" in rel.lower().split():
            self.found.nofollow.add(link)
        if link not in self.seen:
            self.seen.add(link)
            self.found.links.append(link)

    def _canonical(self, raw: str) -> str | None:
        """The canonical absolute form of a link, or None (noted in ``found.invalid`` if
        bad; a fragment-only reference or another scheme than HTTP(S) is no link at all)."""
        raw = raw.strip(_C0_AND_SPACE)
        if "\t" in raw or "\n" in raw or "\r" in raw or "\\" in raw:
            raw = _clean(raw)
        if not raw or raw[0] == "#":
            return None
        if raw[0] != "/" and _SCHEME.match(raw) and not raw.lower().startswith(_HTTP):
            return None
        try:
            return _resolve(self.base, self.folder, raw, self.codec)
        except URLTooLong as error:  # its scope is judged all the same: by its canonical form
            self.found.invalid.append((error.canonical, error.reason))
            return None
        except (InvalidURL, ValueError) as error:
            self.found.invalid.append((raw, getattr(error, "reason", str(error))))
            return None


def _clean(raw: str) -> str:
    """A reference as the URL Standard reads it: outer C0 controls and spaces stripped, tabs
    and newlines removed, ``\\`` before the query read as ``/``."""
    raw = raw.strip(_C0_AND_SPACE)
    if "\t" in raw or "\n" in raw or "\r" in raw:
        raw = raw.replace("\t", "").replace("\n", "").replace("\r", "")
    if "\\" in raw:
        before, question, query = raw.partition("?")
        raw = before.replace("\\", "/") + question + query
    return raw


def _may_be_xml(element: etree._Element) -> bool:
    """An ``img``/``object``/``embed`` whose target may be XML: a ``type`` that says so, or
    (no type) an XML-ish suffix or none."""
    declared = element.get("type")
    if declared:
        mime = parse_mime_type(declared)
        return mime is not None and is_xml_type(mime.essence)
    source = element.get(_MAYBE_XML_ATTRIBUTE[element.tag]) or ""
    suffix = url_suffix(_clean(source).split("#", 1)[0])
    return suffix == "" or suffix in XML_SUFFIXES


def refresh_url(content: str) -> str | None:
    """The URL of a ``<meta http-equiv=refresh content=…>`` (the HTML Standard's "shared
    declarative refresh steps"), or None when it names none (a refresh of the page itself).

    >>> refresh_url("5; URL='next.html'"), refresh_url("0;url=a b"), refresh_url("30")
    ('next.html', 'a b', None)
    """
    text = content.lstrip(" \t\n\x0c\r")
    position = 0
    while position < len(text) and (text[position].isdigit() or text[position] == "."):
        position += 1
    if position == 0 or position == len(text) or text[position] not in ";, \t\n\x0c\r":
        return None
    rest = text[position:].lstrip(" \t\n\x0c\r")
    if rest[:1] in (";", ","):
        rest = rest[1:]
    url = rest.lstrip(" \t\n\x0c\r")
    match = re.match(r"url\s*=\s*", url, re.IGNORECASE)
    if match is not None:
        url = url[match.end() :]
    if url[:1] in ("'", '"'):
        url = url[1:].split(url[0], 1)[0]
    return url or None
