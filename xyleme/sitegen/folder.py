"""The ground truth of a real folder served by a plain static file server.

Why: a generated site is the project's own rehearsal; a folder of real documentation (an
mdBook, rustdoc, DocBook HTML, freedesktop XML) is the test the project did not write. This
module computes, from the files on disk alone, what a faithful crawl of the folder served by
``python -m http.server`` reads: it models that server (a URL's path names a file; a folder
without its slash is a 301 to it; a folder serves its ``index.html`` or ``index.htm``, else a
listing of its entries; the Content-Type is the server's guess from the suffix) and parses
the pages with other parsers than the crawler's (the standard library's ``html.parser`` for
HTML, lxml's XML parser for XML) by ARCHITECTURE.md's "What is a link". A crawl starts at the
seeds, stays within the scope's URL prefixes, obeys the folder's ``robots.txt`` and follows
every link of every document it reaches; the matrix holds the reachable documents, a link to
a redirect counting for its target, repeats once (the rules of :mod:`.truth`).

URLs are compared by :func:`normal` (fragment dropped, host lower-case, the path's
percent-encoding made uniform), so two spellings of one file are one URL on both sides.
"""

from __future__ import annotations

import codecs
import http.server
import os
import posixpath
import re
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

from lxml import etree
from protego import Protego

# The relations are ARCHITECTURE.md's definition of a link, not the crawler's extraction:
# the parser, the resolution and the walk below are this module's own.
from xyleme.crawler import DOCUMENT_RELATIONS, RESOURCE_RELATIONS
from xyleme.sitegen.flavours import PYTHON, Flavour

MAX_REDIRECTS = 5
_SAFE_PATH = "/!$&'()*+,;=:@-._~"
_SAFE_QUERY = "/?!$&'()*+,;=:@-._~"
_QUERY_DELIMITER = re.compile(r"(%2[6bB5]|%3[dD]|%23)")
"""Escapes of the query's own delimiters (``&``, ``+``, ``%``, ``=``, ``#``): kept escaped, since
decoding them would change what the query says."""
_XML_SUFFIXES = frozenset({"xml", "svg", "xhtml", "xht", "rss", "atom", "rdf", "xsd", "xsl"})
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_XHTML = "{http://www.w3.org/1999/xhtml}"
_SITEMAP_LOC = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"
_ATOM_LINK = "{http://www.w3.org/2005/Atom}link"
_SVG_A = "{http://www.w3.org/2000/svg}a"
_GUESSER = http.server.SimpleHTTPRequestHandler.__new__(http.server.SimpleHTTPRequestHandler)


def normal(url: str) -> str:
    """``url`` without its fragment, its host lower-case and its path's escapes uniform.

    >>> normal("HTTP://Example.ORG/a%7eb/./x/../c d.html#x"), normal("http://h/a/b/..")
    ('http://example.org/a~b/c%20d.html', 'http://h/a/')
    >>> normal("http://h/?q=a<b>%2Cc d&x=%26%3d")  # a delimiter's escape stays one
    'http://h/?q=a%3Cb%3E,c%20d&x=%26%3D'
    """
    parts = urlsplit(url.strip())
    path = quote(_without_dots(unquote(parts.path)), safe=_SAFE_PATH) or "/"
    query = "".join(
        token.upper() if _QUERY_DELIMITER.fullmatch(token) else quote(unquote(token), _SAFE_QUERY)
        for token in _QUERY_DELIMITER.split(parts.query)
    )
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, query, ""))


def _without_dots(path: str) -> str:
    """RFC 3986's remove_dot_segments (5.2.4): ``/a/./b/../c/`` is ``/a/c/``."""
    out: list[str] = []
    words = path.split("/")
    for word in words:
        if word == "..":
            if len(out) > 1:
                out.pop()
        elif word != ".":
            out.append(word)
    if words[-1] in (".", ".."):
        out.append("")
    return "/".join(out)


@dataclass(frozen=True)
class Answer:
    """What the static server answers for one URL."""

    status: int
    content_type: str = ""
    file: Path | None = None
    """The file served (None for a listing, a redirect or an error)."""
    listing: Path | None = None
    """The folder listed, when the answer is a generated listing."""
    location: str = ""

    @property
    def kind(self) -> str:
        """``html``, ``xml``, or ``resource`` (anything else, errors included)."""
        if self.status != 200:
            return "resource"
        if self.listing is not None:
            return "html"
        essence = self.content_type.split(";")[0].strip().lower()
        if essence == "text/html":
            return "html"
        if essence in ("text/xml", "application/xml") or essence.endswith("+xml"):
            return "xml"
        if essence in ("application/octet-stream", "") and self.file is not None:
            return _sniff(self.file)
        return "resource"


_HTML_SIGNATURES = tuple(
    b"<" + tag
    for tag in (b"!doctype html", b"html", b"head", b"script", b"iframe", b"h1", b"div",
                b"font", b"table", b"a", b"style", b"title", b"b", b"body", b"br", b"p")
)  # fmt: skip
"""The MIME Sniffing Standard's HTML signatures (7.1), each ended by a space or ``>``."""


def _sniff(path: Path) -> str:
    """A generic type read as the body's first bytes say (the MIME Sniffing Standard's
    rules for markup: ``<?xml``, the HTML signatures, ``<!--``)."""
    with path.open("rb") as file:
        head = file.read(512)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.lstrip(b" \t\r\n\x0c").lower()
    if head.startswith(b"<?xml"):
        return "xml"
    if head.startswith(b"<!--"):
        return "html"
    for signature in _HTML_SIGNATURES:
        if head.startswith(signature) and head[len(signature) : len(signature) + 1] in b" >":
            return "html"
    return "resource"


def well_formed(path: Path) -> str | None:
    """None when the XML file parses (no DTD loaded, no entity expanded), else why not: the
    warehouse keeps well-formed documents only, so a malformed one is read but no document."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        etree.fromstring(path.read_bytes(), parser)
    except etree.XMLSyntaxError as error:
        return f"not well-formed: {error.msg}"
    return None


class StaticServer:
    """``http.server.SimpleHTTPRequestHandler``'s answers for the folder ``root`` at
    ``origin`` (``http://127.0.0.1:PORT``)."""

    def __init__(
        self,
        root: Path,
        origin: str,
        types: dict[str, str] | None = None,
        charset: str | None = None,
        flavour: Flavour = PYTHON,
    ) -> None:
        self.root = root.resolve()
        self.flavour = flavour
        """The server's types, index files and listings (``http.server``'s by default)."""
        self.origin = origin.rstrip("/")
        self.types = types or {}
        """Content-Types by suffix, over the guessed ones (a server's ``AddType``)."""
        self.charset = charset
        """The charset a server adds to ``text/html`` (nginx's ``charset``), or None."""

    def url_of(self, path: str) -> str:
        """The URL of a path below the root (``"book/index.html"``)."""
        return normal(f"{self.origin}/{quote(path, safe=_SAFE_PATH)}")

    def answer(self, url: str) -> Answer:
        """The status, type and file of a GET of ``url`` (its query is ignored, as the
        server does)."""
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}".lower() != self.origin.lower():
            return Answer(status=0)
        words = [w for w in posixpath.normpath(unquote(parts.path)).split("/") if w]
        if any(os.path.dirname(w) or w in (os.curdir, os.pardir) for w in words):
            return Answer(status=404)
        path = self.root.joinpath(*words)
        if path.is_dir():
            if not parts.path.endswith("/"):
                location = urlunsplit(("", "", parts.path + "/", parts.query, ""))
                return Answer(status=301, location=urljoin(url, location))
            for name in self.flavour.index_files:
                if (path / name).is_file():
                    return self._file(path / name)
            return Answer(status=200, content_type="text/html; charset=utf-8", listing=path)
        if parts.path.endswith("/") or not path.is_file():
            return Answer(status=404)
        if not self.flavour.can_read(path, self.root):
            return Answer(status=403 if self.flavour.user else 404)
        return self._file(path)

    def _file(self, path: Path) -> Answer:
        guess = self.types.get(path.suffix.lower())
        kind = guess or self.flavour.type_of(path, lambda p: _GUESSER.guess_type(str(p)))
        if self.charset and kind == "text/html":
            kind += f"; charset={self.charset}"
        return Answer(status=200, content_type=kind, file=path)

    def robots(self) -> Protego | None:
        """The folder's robots.txt, if it has one."""
        path = self.root / "robots.txt"
        if not path.is_file():
            return None
        return Protego.parse(path.read_text("utf-8", errors="replace"))


@dataclass
class FolderTruth:
    """What a faithful crawl of the served folder reaches, and its link matrix."""

    documents: list[str]
    is_xml: list[bool]
    edges: list[tuple[int, int]]
    """Distinct (source, target) positions in :attr:`documents`."""
    not_documents: dict[str, str] = field(default_factory=dict)
    """In-scope URLs linked from a reachable document that are no document, and why
    (errors, resources, malformed XML: a crawl reads the last, the warehouse refuses it)."""
    scripted: int = 0
    """Reachable HTML pages that load a script: their JavaScript-built navigation (rustdoc's
    sidebars and search) is no link of theirs for this truth, nor for the crawler."""

    def position(self) -> dict[str, int]:
        """URL → position in :attr:`documents`."""
        return {url: i for i, url in enumerate(self.documents)}

    def within(self, urls: set[str]) -> FolderTruth:
        """The truth between the documents of ``urls`` only (a crawl cut short by a budget
        is compared on the pages it read)."""
        keep = [i for i, url in enumerate(self.documents) if url in urls]
        moved = {old: new for new, old in enumerate(keep)}
        return FolderTruth(
            documents=[self.documents[i] for i in keep],
            is_xml=[self.is_xml[i] for i in keep],
            edges=[(moved[s], moved[d]) for s, d in self.edges if s in moved and d in moved],
            not_documents=self.not_documents,
            scripted=self.scripted,
        )


def folder_truth(
    server: StaticServer, seeds: list[str], scope: list[str], robots_agent: str = "xyleme"
) -> FolderTruth:
    """Breadth-first from ``seeds`` over ``server``'s answers, within the URL prefixes of
    ``scope``, as robots.txt allows ``robots_agent``."""
    robots = server.robots()
    prefixes = [normal(prefix) for prefix in scope]

    def allowed(url: str) -> bool:
        return any(url.startswith(prefix) for prefix in prefixes) and (
            robots is None or robots.can_fetch(url, robots_agent)
        )

    ends: dict[str, tuple[str | None, str]] = {}

    def end_of(url: str) -> tuple[str | None, str]:
        """Where ``url`` ends after its redirects, or None and why not a document."""
        if url not in ends:
            ends[url] = _follow(server, url, allowed)
        return ends[url]

    order: list[str] = []
    kinds: dict[str, str] = {}
    links: dict[str, list[str]] = {}
    truth = FolderTruth([], [], [])
    queue = deque(normal(seed) for seed in seeds)
    queued = set(queue)
    while queue:
        end, why = end_of(queue.popleft())
        if end is None or end in kinds:
            continue
        answer = server.answer(end)
        kinds[end] = answer.kind
        order.append(end)
        found, follow, scripted = page_links(answer, end, server.flavour)
        links[end] = found
        truth.scripted += scripted
        for link in follow:
            if link not in queued:
                queued.add(link)
                queue.append(link)
    position = {url: i for i, url in enumerate(order)}
    edges: dict[tuple[int, int], None] = {}
    for source in order:
        for link in links[source]:
            end, why = end_of(link)
            if end is None:
                if why != "out of scope":
                    truth.not_documents[link] = why
            elif end in position:
                edges[(position[source], position[end])] = None
    truth.documents, truth.edges = order, list(edges)
    truth.is_xml = [kinds[url] == "xml" for url in order]
    return truth


def _follow(server: StaticServer, url: str, allowed) -> tuple[str | None, str]:
    for _ in range(MAX_REDIRECTS + 1):
        if not allowed(url):
            return None, "out of scope"
        answer = server.answer(url)
        if answer.status in (301, 302, 303, 307, 308):
            url = normal(answer.location)
            continue
        if answer.status != 200:
            return None, f"HTTP {answer.status}"
        if answer.kind == "resource":
            return None, f"resource {answer.content_type or 'untyped'}"
        if answer.kind == "xml" and answer.file is not None:
            malformed = well_formed(answer.file)
            if malformed is not None:
                return None, malformed
        return url, ""
    return None, "too many redirects"


def page_links(
    answer: Answer, url: str, flavour: Flavour = PYTHON
) -> tuple[list[str], list[str], int]:
    """A document's links (normal, distinct, in order), the ones a crawl follows (all of
    them unless the page says ``nofollow``) and 1 if an HTML page loads a script."""
    if answer.listing is not None:
        found = [normal(link) for link in flavour.listing(answer.listing, url)]
        for name in flavour.inserts:  # a file whose HTML the listing holds: its links too
            if (answer.listing / name).is_file():
                inserted = Answer(200, "text/html", answer.listing / name)
                found += page_links(inserted, url)[0]
        found = list(dict.fromkeys(found))
        return found, found, 0
    assert answer.file is not None
    body = answer.file.read_bytes()
    if answer.kind == "xml":
        found = _xml_links(body, url)
        return found, found, 0
    reader = _HtmlLinks(url)
    reader.feed(body.decode(_charset(body, answer.content_type), errors="replace"))
    reader.close()
    found = list(dict.fromkeys(reader.links))
    follow = [] if reader.nofollow_page else [u for u in found if u not in reader.nofollow]
    return found, follow, int(reader.scripted)


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([-\w:.]+)""", re.IGNORECASE)


def _charset(body: bytes, content_type: str = "") -> str:
    """The page's encoding, in the WHATWG order: a BOM, else the HTTP charset, else the
    ``<meta>`` of its first 1,024 bytes, else UTF-8; ISO-8859-1 read as windows-1252, as
    browsers do."""
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    declared = re.search(r"charset\s*=\s*[\"']?([-\w:.]+)", content_type, re.IGNORECASE)
    match = declared or _META_CHARSET.search(body[:1024])
    if match is None:
        return "utf-8"
    label = match.group(1)
    try:
        name = codecs.lookup(label if isinstance(label, str) else label.decode("ascii")).name
    except LookupError:
        return "utf-8"
    return "cp1252" if name in ("latin-1", "iso8859-1", "ascii", "cp1252") else name


def _absolute(base: str, raw: str | None) -> str | None:
    """``raw`` resolved against ``base`` as an HTTP(S) URL without its fragment, or None;
    a ``\\`` before the query is a ``/``, as the URL Standard reads it (SQLite's
    ``href="\\"`` names the site's root)."""
    if raw is None:
        return None
    raw = raw.strip().replace("\t", "").replace("\n", "").replace("\r", "")
    if not raw or raw.startswith("#"):
        return None
    path = re.match(r"[^?#]*", raw).group()
    absolute = urljoin(base, path.replace("\\", "/") + raw[len(path) :])
    if urlsplit(absolute).scheme.lower() not in ("http", "https"):
        return None
    return normal(absolute)


def _may_be_xml(source: str, declared: str | None) -> bool:
    if declared:
        essence = declared.split(";")[0].strip().lower()
        return essence in ("text/xml", "application/xml") or essence.endswith("+xml")
    name = urlsplit(source).path.rsplit("/", 1)[-1]
    return "." not in name or name.rsplit(".", 1)[1].lower() in _XML_SUFFIXES


class _HtmlLinks(HTMLParser):
    """ARCHITECTURE.md's HTML links, read by the standard library's tokenizer."""

    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = url
        self.base_set = False
        self.links: list[str] = []
        self.nofollow: set[str] = set()
        self.nofollow_page = False
        self.scripted = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value for name, value in reversed(attrs)}
        rel = (values.get("rel") or "").lower().split()
        raw: str | None = None
        if tag == "base" and not self.base_set and values.get("href"):
            self.base_set = True
            self.base = urljoin(self.base, values["href"].strip())
        elif tag in ("a", "area"):
            raw = values.get("href")
        elif tag in ("frame", "iframe"):
            raw = values.get("src")
        elif tag == "link" and DOCUMENT_RELATIONS & set(rel):
            raw = None if RESOURCE_RELATIONS & set(rel) else values.get("href")
        elif tag == "meta":
            self._meta(values)
        elif tag in ("img", "embed", "object"):
            source = values.get("data" if tag == "object" else "src") or ""
            raw = source if source and _may_be_xml(source, values.get("type")) else None
        elif tag == "script" and values.get("src"):
            self.scripted = True
        link = _absolute(self.base, raw)
        if link is not None:
            self.links.append(link)
            if "nofollow" in rel:
                self.nofollow.add(link)

    def _meta(self, values: dict[str, str | None]) -> None:
        if (values.get("name") or "").lower() == "robots":
            content = (values.get("content") or "").lower()
            self.nofollow_page |= "nofollow" in content or "none" in content
        elif (values.get("http-equiv") or "").lower() == "refresh":
            content = values.get("content") or ""
            _, _, rest = content.partition(";")
            rest = rest.strip()
            if rest.lower().startswith("url"):
                rest = rest[3:].lstrip(" =").strip("'\" ")
            link = _absolute(self.base, rest or None)
            if link is not None:
                self.links.append(link)


def _xml_links(body: bytes, url: str) -> list[str]:
    """XLink ``href``s anywhere, XHTML elements by the HTML rules (served as XML, XHTML is
    still HTML's vocabulary: ``link rel``, frames, ``base``, meta refresh), SVG ``a href``,
    sitemap ``loc``, Atom ``link`` (not ``rel=self``): the forms the real folders' XML uses."""
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, recover=True, huge_tree=True
    )
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return []
    if root is None:
        return []
    found: list[str] = []
    xhtml = _HtmlLinks(url)
    for element in root.iter(etree.Element):
        raw = element.get(_XLINK_HREF)
        tag = element.tag
        if raw is None and tag.startswith(_XHTML):
            xhtml.handle_starttag(tag[len(_XHTML) :], list(element.attrib.items()))
            found += xhtml.links
            xhtml.links.clear()
            continue
        if raw is None and (tag == _SVG_A or (tag == _ATOM_LINK and element.get("rel") != "self")):
            raw = element.get("href")
        elif raw is None and tag == _SITEMAP_LOC:
            raw = element.text
        link = _absolute(url, raw)
        if link is not None:
            found.append(link)
    return list(dict.fromkeys(found))
