"""A sitemap's body as the web serves it (sitemaps.org): gzip files and plain-text lists.

Sites name ``sitemap.xml.gz`` files that are gzip *files* (``application/gzip``,
``application/x-gzip`` or ``application/octet-stream``), not a gzip Content-Encoding, so the
fetcher hands them over still packed: a sitemap body starting with gzip's magic bytes is
unpacked here, under the fetcher's decompression-bomb cap and the protocol's 50 MB
(uncompressed) cap, whichever is smaller. A sitemap that is not XML is the protocol's text
form: one absolute URL per line, UTF-8; blank lines and lines that are no http(s) URL are
skipped and counted, and the list stops at the protocol's 50,000 URLs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xyleme.crawler.fetcher import Body, FetchError, _Spool, decoded_pieces

GZIP_MAGIC = b"\x1f\x8b"
SITEMAP_MAX_BYTES = 50 * 1024 * 1024
"""The protocol's cap on a sitemap, uncompressed (sitemaps.org: 50 MB, 52,428,800 bytes)."""
SITEMAP_MAX_URLS = 50_000
"""The protocol's cap on the URLs of one sitemap."""
SITEMAP_JUNK = "text sitemap junk line"
"""The crawl stats' ``rejected`` counter of the lines of text sitemaps that are no URL."""


def is_gzip(body: Body) -> bool:
    """Whether the body is a gzip file (its magic bytes, whatever its Content-Type)."""
    return body.head.startswith(GZIP_MAGIC)


def gunzip_sitemap(
    body: Body, decoded_cap: int, spool_over: int | None, spool_dir: str | None
) -> Body:
    """The unpacked sitemap, spooled as the fetcher spools a body (the packed one is
    discarded). Raises :class:`FetchError` (``too_large``, ``encoding``) with the reason."""
    limit = min(decoded_cap, SITEMAP_MAX_BYTES)
    spool = _Spool(spool_over, spool_dir)
    try:
        try:
            for piece in decoded_pieces(body.data(), "gzip", limit):
                spool.write(piece)
        except FetchError as error:
            if error.kind == "too_large":
                raise FetchError(
                    "too_large",
                    f"gzip sitemap over {limit} bytes uncompressed "
                    "(sitemap protocol cap: 50 MB; decompression bomb?)",
                ) from None
            raise
        return spool.finish()
    except BaseException:
        spool.discard()
        raise
    finally:
        body.discard()


@dataclass(frozen=True, slots=True)
class TextSitemap:
    """The URLs of a text sitemap, with the lines skipped and whether the cap cut it."""

    urls: list[str]
    blank: int
    junk: int
    capped: bool

    def note(self) -> str:
        """What was read, for the page's record."""
        note = f"text sitemap: {len(self.urls)} URLs, {self.junk} junk and {self.blank} blank lines"
        if self.capped:
            note += f"; capped at {SITEMAP_MAX_URLS} URLs (sitemap protocol)"
        return note


def read_text_sitemap(data: bytes) -> TextSitemap:
    """One absolute http(s) URL per line (sitemaps.org text form); the rest is skipped.

    >>> found = read_text_sitemap(b"http://a.example/1\\n\\nnot a url\\r\\nhttps://a.example/2")
    >>> found.urls, found.blank, found.junk
    (['http://a.example/1', 'https://a.example/2'], 1, 1)
    """
    urls: list[str] = []
    blank = junk = 0
    capped = False
    for raw in data[:SITEMAP_MAX_BYTES].decode("utf-8", "replace").splitlines():
        line = raw.strip().removeprefix("\ufeff")
        if not line:
            blank += 1
        elif not line.lower().startswith(("http://", "https://")) or any(c.isspace() for c in line):
            junk += 1
        elif len(urls) >= SITEMAP_MAX_URLS:
            capped = True
            break
        else:
            urls.append(line)
    return TextSitemap(urls, blank, junk, capped)
