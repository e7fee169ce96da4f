"""Bodies of the simulated web: deterministic functions of (seed, page, version).

Speed matters here (the server must spend at most 0.3 ms of CPU per page): the text is drawn
from a pool of paragraphs made once from the seed, so rendering a page is a few dozen
string joins, and the server caches what it rendered. Every body names its page and version,
so two versions of a page never have the same bytes.

What each kind of document carries (the forms the crawler and the loader must handle):

* HTML: ``<a href>`` links (same-host links relative, others absolute), a feed declared with
  ``<link rel="alternate">`` on home pages, the calendar link on spider-trap hosts;
* XML data documents: ``xml-stylesheet``, ``xlink:href`` links, and either a DOCTYPE whose DTD
  the host serves plus an external parsed entity (``&notice;``), valid or not against the DTD,
  or ``xsi:schemaLocation`` and ``xi:include``;
* RSS 2.0 and Atom feeds whose items link to pages; sitemaps and sitemap indexes; robots.txt.
"""

from __future__ import annotations

import calendar
import struct
import time
import zlib
from email.utils import formatdate

from xyleme.simweb.streams import fast_stream, numpy_stream
from xyleme.simweb.structure import (
    CALENDAR_PREFIX,
    DTD_PATH,
    ENTITY_PATH,
    SCHEMA_PATH,
    SITEMAP_PATH,
    STYLESHEET_PATH,
    Kind,
    Robots,
)
from xyleme.simweb.web import SimWeb

POOL_PARAGRAPHS = 512

XLINK = "http://www.w3.org/1999/xlink"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XINCLUDE = "http://www.w3.org/2001/XInclude"
RECORD_NS = "urn:simweb:record"


def http_date(at: float) -> str:
    """An RFC 9110 date (``Sun, 06 Nov 1994 08:49:37 GMT``) for simulated time ``at``."""
    return formatdate(at, usegmt=True)


def iso_date(at: float) -> str:
    """An ISO 8601 UTC date for sitemaps and Atom."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _text_pool(seed: int) -> tuple[list[str], list[str]]:
    """Pseudo-words and paragraphs made once from the seed (vectorised: it runs per server)."""
    rng = numpy_stream(seed, "text")
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    lengths = rng.integers(1, 4, 2000)
    picks = iter(rng.integers(0, len(syllables), int(lengths.sum())).tolist())
    words = ["".join([syllables[next(picks)] for _ in range(n)]) for n in lengths.tolist()]
    sizes = rng.integers(50, 100, POOL_PARAGRAPHS)
    chosen = iter(rng.integers(0, len(words), int(sizes.sum())).tolist())
    return words, [
        " ".join([words[next(chosen)] for _ in range(n)]).capitalize() + "." for n in sizes.tolist()
    ]


class Renderer:
    """Renders every document of a :class:`SimWeb` (no caching here: the server caches)."""

    def __init__(self, web: SimWeb) -> None:
        self.web = web
        self.seed = web.settings.seed
        self.words, self.paragraphs = _text_pool(self.seed)
        st = web.structure
        self._kind = st.kind.tolist()
        self._host_of = st.host_of.tolist()
        self._bomb: bytes | None = None
        self._local_items: list[str | None] = [None] * st.page_count
        self._remote_items: list[str | None] = [None] * st.page_count

    # -- pages ---------------------------------------------------------------------------
    def page(self, page: int, version: int, *, malformed: bool = False) -> bytes:
        """The body of ``version`` of ``page``; ``malformed`` breaks its markup."""
        rng = fast_stream(self.seed, "text", page, version)
        mean = self.web.settings.paragraphs_per_page
        count = max(1, mean // 2) + rng.below(mean + 1)
        first = rng.below(POOL_PARAGRAPHS)
        paragraphs = [self.paragraphs[(first + i) % POOL_PARAGRAPHS] for i in range(count)]
        words, word = self.words, rng.below(len(self.words))
        title = " ".join([words[(word + 97 * i) % len(words)] for i in range(4)]).title()
        kind = self._kind[page]
        render = (self._html, self._xml, self._rss, self._atom)[kind]
        return render(page, version, title, paragraphs, malformed).encode()

    def _href(self, source_host: int, target: int) -> str:
        if self._host_of[target] == source_host:
            return self.web.path(target)
        return self.web.url(target)

    def _anchor(self, target: int) -> str:
        return f"{self.words[target * 7919 % len(self.words)].title()} {target}"

    def _list_item(self, source_host: int, target: int) -> str:
        """``<li><a href>`` for a link to ``target`` (cached: pages share their targets)."""
        local = self._host_of[target] == source_host
        cache = self._local_items if local else self._remote_items
        item = cache[target]
        if item is None:
            href = self.web.path(target) if local else self.web.url(target)
            item = cache[target] = f'<li><a href="{href}">{self._anchor(target)}</a></li>'
        return item

    def _html(
        self, page: int, version: int, title: str, paragraphs: list[str], broken: bool
    ) -> str:
        web, host = self.web, self._host_of[page]
        st = web.structure
        links = [self._list_item(host, t) for t in web.links(page, version)]
        links += [f'<li><a href="{url}">Elsewhere</a></li>' for url in web.other_links(page)]
        head = ""
        feed = int(st.feed_of_host[host])
        if st.is_home[page] and feed >= 0:
            kind = "rss+xml" if self._kind[feed] == Kind.RSS else "atom+xml"
            head = f'<link rel="alternate" type="application/{kind}" href="{web.path(feed)}">\n'
        body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
        link_list = "\n".join(links)
        tail = "<div><p>Unclosed <b>markup <i>here\n" if broken else "</ul>\n</body>\n</html>\n"
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title}</title>\n{head}</head>\n<body>\n<h1>{title}</h1>\n"
            f'<p class="revision">Page {page}, revision {version}.</p>\n{body}\n'
            f'<ul class="links">\n{link_list}\n{tail}'
        )

    def _xml(self, page: int, version: int, title: str, paragraphs: list[str], broken: bool) -> str:
        web, host = self.web, self._host_of[page]
        st = web.structure
        targets = list(web.links(page, version))
        prolog = '<?xml version="1.0" encoding="UTF-8"?>\n'
        if st.has_stylesheet[page]:
            prolog += f'<?xml-stylesheet type="text/xsl" href="{STYLESHEET_PATH}"?>\n'
        paras = "\n".join(f"<para>{p}</para>" for p in paragraphs)
        if st.has_dtd[page]:
            hrefs = [self._href(host, t) for t in targets] + web.other_links(page)
            items = "\n".join(f'<item xlink:href="{href}">See {href}</item>' for href in hrefs)
            rogue = "<unexpected/>\n" if st.invalid[page] else ""
            doc = (
                f'{prolog}<!DOCTYPE catalog SYSTEM "{DTD_PATH}" [\n'
                f'<!ENTITY notice SYSTEM "{ENTITY_PATH}">\n]>\n'
                f'<catalog id="d{page}" revision="{version}" xmlns:xlink="{XLINK}">\n'
                f"<title>{title}</title>\n{paras}\n{rogue}{items}\n&notice;\n"
            )
            return doc + ("<para>unclosed\n" if broken else "</catalog>\n")
        include = targets.pop() if st.has_xinclude[page] and targets else None
        items = "\n".join(
            f'<related xlink:type="simple" xlink:href="{self._href(host, t)}">'
            f"{self._anchor(t)}</related>"
            for t in targets
        )
        for url in web.other_links(page):
            items += f'\n<related xlink:type="simple" xlink:href="{url}"/>'
        attributes = f'xmlns="{RECORD_NS}" xmlns:xlink="{XLINK}"'
        if st.has_schema[page]:
            attributes += f' xmlns:xsi="{XSI}" xsi:schemaLocation="{RECORD_NS} {SCHEMA_PATH}"'
        if include is not None:
            attributes += f' xmlns:xi="{XINCLUDE}"'
            items += f'\n<xi:include href="{self._href(host, include)}" parse="xml"/>'
        doc = (
            f'{prolog}<record {attributes} id="d{page}" revision="{version}">\n'
            f"<title>{title}</title>\n{paras}\n{items}\n"
        )
        return doc + ("<para>unclosed &undefined;\n" if broken else "</record>\n")

    def _items(self, page: int, version: int) -> list[tuple[str, str]]:
        return [(self.web.url(t), self._anchor(t)) for t in self.web.links(page, version)]

    def _rss(self, page: int, version: int, title: str, paragraphs: list[str], broken: bool) -> str:
        host = self._host_of[page]
        date = http_date(self.web.last_change(page, version))
        items = "\n".join(
            f"<item><title>{anchor}</title><link>{url}</link>"
            f'<guid isPermaLink="true">{url}</guid><pubDate>{date}</pubDate>'
            f"<description>{paragraphs[i % len(paragraphs)]}</description></item>"
            for i, (url, anchor) in enumerate(self._items(page, version))
        )
        doc = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n<channel>\n'
            f"<title>{title}</title>\n<link>{self.web.host_url(host)}/</link>\n"
            f"<description>Revision {version} of feed {page}.</description>\n"
            f"<lastBuildDate>{date}</lastBuildDate>\n{items}\n"
        )
        return doc + ("<item><title>unclosed\n" if broken else "</channel>\n</rss>\n")

    def _atom(
        self, page: int, version: int, title: str, paragraphs: list[str], broken: bool
    ) -> str:
        date = iso_date(self.web.last_change(page, version))
        entries = "\n".join(
            f"<entry><title>{anchor}</title><id>{url}</id>"
            f'<link href="{url}"/><updated>{date}</updated>'
            f"<summary>{paragraphs[i % len(paragraphs)]}</summary></entry>"
            for i, (url, anchor) in enumerate(self._items(page, version))
        )
        doc = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            f"<title>{title}</title>\n<id>urn:simweb:feed:{page}:r{version}</id>\n"
            f'<link rel="self" href="{self.web.url(page)}"/>\n'
            f'<link rel="alternate" href="{self.web.host_url(self._host_of[page])}/"/>\n'
            f"<updated>{date}</updated>\n"
            f"{entries}\n"
        )
        return doc + ("<entry><title>unclosed\n" if broken else "</feed>\n")

    # -- per-host resources --------------------------------------------------------------
    def robots(self, host: int) -> bytes:
        """robots.txt of a host whose robots answer (see :class:`~xyleme.simweb.Robots`)."""
        st = self.web.structure
        if st.robots[host] != Robots.NORMAL:
            raise ValueError(f"host {host} serves no robots.txt body")
        # A group for another robot comes first: a crawler must pick the group that names it
        # (or "*"), not the first one.
        lines = ["User-agent: BadBot", "Disallow: /", "", "User-agent: *"]
        lines.append("Disallow: /private/" if st.disallow[host] else "Disallow:")
        if st.crawl_delay[host]:
            lines.append(f"Crawl-delay: {self.web.settings.crawl_delay_seconds:g}")
        lines += ["", f"Sitemap: {self.web.host_url(host)}{SITEMAP_PATH}", ""]
        return "\n".join(lines).encode()

    def sitemap_count(self, host: int) -> int:
        """How many sitemap files a host serves beneath its index (0: a plain sitemap)."""
        st = self.web.structure
        size = int(st.host_start[host + 1] - st.host_start[host])
        chunk = self.web.settings.sitemap_chunk
        return 0 if size <= chunk else -(-size // chunk)

    def sitemap(self, host: int, at: float, part: int | None = None) -> bytes:
        """``/sitemap.xml`` (a urlset, or an index for big hosts) or ``/sitemap-{part}.xml``."""
        base = self.web.host_url(host)
        head = '<?xml version="1.0" encoding="UTF-8"?>\n'
        ns = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        parts = self.sitemap_count(host)
        if part is None and parts:
            maps = "\n".join(
                f"<sitemap><loc>{base}/sitemap-{i}.xml</loc></sitemap>" for i in range(parts)
            )
            return f"{head}<sitemapindex {ns}>\n{maps}\n</sitemapindex>\n".encode()
        pages = self.web.sitemap_pages(host, at)
        if part is not None:
            st = self.web.structure
            chunk = self.web.settings.sitemap_chunk
            low = int(st.host_start[host]) + part * chunk
            pages = [p for p in pages if low <= p < low + chunk]
        urls = "\n".join(f"<url><loc>{self.web.url(p)}</loc></url>" for p in pages)
        return f"{head}<urlset {ns}>\n{urls}\n</urlset>\n".encode()

    def dtd(self) -> bytes:
        """The DTD of ``catalog`` documents (every host serves the same one)."""
        return (
            "<!ELEMENT catalog (title, para*, item*, notice)>\n"
            "<!ATTLIST catalog id ID #REQUIRED revision CDATA #REQUIRED\n"
            f'  xmlns:xlink CDATA #FIXED "{XLINK}">\n'
            "<!ELEMENT title (#PCDATA)>\n<!ELEMENT para (#PCDATA)>\n"
            "<!ELEMENT item (#PCDATA)>\n"
            '<!ATTLIST item xlink:type (simple) #FIXED "simple" xlink:href CDATA #REQUIRED>\n'
            "<!ELEMENT notice (#PCDATA)>\n"
        ).encode()

    def entity(self, host: int) -> bytes:
        """The external parsed entity ``&notice;``."""
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f"<notice>Published by {self.web.host_names[host]} under the simweb licence.</notice>\n"
        ).encode()

    def stylesheet(self) -> bytes:
        """An XSLT style sheet the ``xml-stylesheet`` instructions point to."""
        return (
            b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">\n'
            b'<xsl:template match="/"><html><body><xsl:value-of select="//title"/></body></html>'
            b"</xsl:template>\n</xsl:stylesheet>\n"
        )

    def schema(self) -> bytes:
        """The XML Schema named by ``xsi:schemaLocation`` (lax: any content)."""
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            f'targetNamespace="{RECORD_NS}" elementFormDefault="qualified">\n'
            '<xs:element name="record"><xs:complexType><xs:sequence>'
            '<xs:any minOccurs="0" maxOccurs="unbounded" processContents="lax"/>'
            '</xs:sequence><xs:anyAttribute processContents="lax"/></xs:complexType>'
            "</xs:element>\n</xs:schema>\n"
        ).encode()

    # -- spider trap ---------------------------------------------------------------------
    def calendar(self, year: int, month: int, day: int | None = None) -> bytes:
        """A page of the endless calendar: every month links to the next and the previous."""
        nxt = (year + month // 12, month % 12 + 1)
        prev = (year - (month == 1), (month - 2) % 12 + 1)
        links = [f"{CALENDAR_PREFIX}{y:04d}/{m:02d}/" for y, m in (prev, nxt)]
        if day is None:
            days = calendar.monthrange(year, month)[1]
            links += [f"{CALENDAR_PREFIX}{year}/{month:02d}/{d:02d}/" for d in range(1, days + 1)]
        anchors = "\n".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
        title = f"Events {year}-{month:02d}" + (f"-{day:02d}" if day else "")
        return (
            f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n"
            f"<body><h1>{title}</h1>\n<p>No events.</p>\n<ul>\n{anchors}\n</ul></body></html>\n"
        ).encode()

    # -- fault bodies ----------------------------------------------------------------------
    @staticmethod
    def padded(body: bytes, size: int) -> bytes:
        """``body`` grown to ``size`` bytes by a trailing comment (an over-size page)."""
        filler = max(0, size - len(body) - 7)
        return body + b"<!--" + b"x" * filler + b"-->"

    def gzip_bomb(self, inflated: int) -> bytes:
        """A valid gzip stream of ``inflated`` zero bytes, about 1000 times smaller.

        Made in a fraction of a second by repeating one fully flushed deflate block.
        """
        if self._bomb is None:
            chunk = bytes(1 << 20)
            blocks = max(1, inflated >> 20)
            deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
            deflate.compress(chunk)
            deflate.flush(zlib.Z_FULL_FLUSH)
            block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
            crc = 0
            for _ in range(blocks):
                crc = zlib.crc32(chunk, crc)
            header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
            trailer = deflate.flush(zlib.Z_FINISH) + struct.pack(
                "<II", crc, (blocks << 20) & 0xFFFFFFFF
            )
            self._bomb = header + block * blocks + trailer
        return self._bomb

    def soft_404(self, page: int) -> bytes:
        """What a dead page answers with 200 OK under a soft-404 lifecycle model."""
        return (
            "<!DOCTYPE html>\n<html><head><title>Page not found</title></head>"
            f"<body><h1>Sorry</h1><p>Page {page} is no longer here.</p></body></html>\n"
        ).encode()
