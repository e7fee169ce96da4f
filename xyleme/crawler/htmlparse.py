"""Links and robots directives of an HTML page (paper §3: "parsed on the fly ... all URLs
contained in the page are added to the FIFO").

What counts as a link follows ARCHITECTURE "What is a link": ``a``/``area``/frames/``link
rel=alternate``; ``img``/``object``/``embed`` sources only when they may be XML (an XML-ish
suffix such as .svg, or none at all). ``<base href>`` is honoured, every link resolved and
canonicalised (:func:`metadata.canonicalize_url`), so one page has one spelling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urljoin

from lxml import etree

from metadata import InvalidURL, canonicalize_url
from xyleme.crawler.scope import XML_SUFFIXES, url_suffix

# lxml's HTML parser (libxml2's, the one behind lxml.html) without lxml.html's Python element
# classes: those cost a Python lookup per element, a third of the parse on the hot path.
_PARSER = etree.HTMLParser(recover=True, remove_comments=True, remove_pis=True)
_LINK_ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_MAYBE_XML_ATTRIBUTE = {"img": "src", "embed": "src", "object": "data"}
_TAGS = ("a", "area", "frame", "iframe", "link", "base", "meta", "img", "embed", "object")
_NOT_PAGES = ("mailto:", "javascript:", "tel:", "data:", "about:", "ftp:", "news:", "#")


# Site-wide links recur on every page: canonicalising costs ~13 µs a URL (yarl), most of a
# page's parse time, so recent answers are remembered.
_canonical_cached = lru_cache(maxsize=1 << 16)(canonicalize_url)


def _resolve(base: str, raw: str) -> str:
    """``raw`` resolved against ``base`` and canonicalised (raises InvalidURL).

    Absolute and root-relative links (most of them) skip ``urljoin``: the origin plus the
    path is the same URL once canonicalised (which also removes dot segments).
    """
    if raw.startswith(("http://", "https://", "HTTP://", "HTTPS://")):
        return _canonical_cached(raw)
    if raw[0] == "/" and raw[1:2] != "/":
        end = base.find("/", base.find("//") + 2)
        return _canonical_cached((base if end < 0 else base[:end]) + raw)
    return _canonical_cached(urljoin(base, raw))


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
    links that have no canonical form.
    """

    links: list[str] = field(default_factory=list)
    nofollow: set[str] = field(default_factory=set)
    robots: frozenset[str] = frozenset()
    canonical: str | None = None
    invalid: list[tuple[str, str]] = field(default_factory=list)

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


def _may_be_xml(url: str) -> bool:
    suffix = url_suffix(url)
    return suffix == "" or suffix in XML_SUFFIXES


def extract_links(body: bytes, url: str, robots_agent: str = "xyleme") -> HtmlLinks:
    """Parse an HTML body and return its links and directives.

    Parameters
    ----------
    body : bytes
        The decoded (not gzipped) body; its encoding is found by lxml (meta charset).
    url : str
        The page's URL: the base for relative links unless ``<base href>`` says otherwise.
    robots_agent : str
        ``<meta name=ROBOTS_AGENT>`` directives apply as well as ``<meta name=robots>``.

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
    """
    found = HtmlLinks()
    if not body.strip():
        return found
    try:
        root = etree.fromstring(body, _PARSER)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as error:
        raise MalformedHTML(str(error) or "unparsable HTML") from None
    if root is None:
        return found
    base = url
    seen: set[str] = set()
    robots: set[str] = set()
    robots_names = {"robots", robots_agent.lower()}
    for element in root.iter(_TAGS):
        tag = element.tag
        if tag == "base":
            href = element.get("href")
            if href and base is url:
                base = urljoin(url, href.strip())
            continue
        if tag == "meta":
            if (element.get("name") or "").lower() in robots_names:
                content = (element.get("content") or "").lower()
                robots.update(part.strip() for part in content.split(",") if part.strip())
            continue
        if tag == "link":
            rel = (element.get("rel") or "").lower().split()
            if "canonical" in rel and element.get("href"):
                found.canonical = _canonical(element.get("href"), base, found)
            if "alternate" not in rel:
                continue
            attribute = "href"
        elif tag in _LINK_ATTRIBUTE:
            attribute = _LINK_ATTRIBUTE[tag]
        else:
            attribute = _MAYBE_XML_ATTRIBUTE[tag]
        raw = element.get(attribute)
        if not raw:
            continue
        link = _canonical(raw, base, found)
        if link is None or (tag in _MAYBE_XML_ATTRIBUTE and not _may_be_xml(link)):
            continue
        if "nofollow" in (element.get("rel") or "").lower().split():
            found.nofollow.add(link)
        if link not in seen:
            seen.add(link)
            found.links.append(link)
    found.robots = frozenset(robots)
    return found


def _canonical(raw: str, base: str, found: HtmlLinks) -> str | None:
    """The canonical absolute form of a link, or None (noted in ``found.invalid`` if bad)."""
    raw = raw.strip()
    if not raw or raw.lower().startswith(_NOT_PAGES):
        return None
    try:
        return _resolve(base, raw)
    except (InvalidURL, ValueError) as error:
        found.invalid.append((raw, getattr(error, "reason", str(error))))
        return None
