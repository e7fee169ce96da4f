"""A loopback site and a crawl with the archive on, shared by the archive's tests.

``archived_crawl`` crawls a small site twice: the second pass reads every page again (a
refresh), so it meets a 304, an unchanged body, a changed one and a spooled big one.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from metadata import Metadata
from tests.crawler_fixtures import FAST
from tests.crawler_site import Page, Site, SiteResolver
from xyleme.archive import Archive, ArchiveSettings
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope

BIG = b"<big>" + b"<p>x</p>" * 40_000 + b"</big>"  # 320 KB: over the test's spool threshold


@dataclass
class SiteState:
    """What the site serves; tests change it between two crawls."""

    changing: bytes = b"<doc>first</doc>"


def build_site(site: Site, state: SiteState) -> dict[str, str]:
    """Serve the pages; returns their URLs by name."""
    urls = {
        "etag": site.add("a.test", "/etag.xml", _with_etag),
        "same": site.add("a.test", "/same.xml", Page(b"<same/>", content_type="text/xml")),
        "changing": site.add(
            "a.test", "/changing.xml", lambda request: Page(state.changing, content_type="text/xml")
        ),
        "big": site.add("a.test", "/big.xml", Page(BIG, content_type="application/xml")),
        "gzip": site.add(
            "a.test",
            "/gz.xml",
            Page(
                gzip.compress(b"<gz/>"),
                content_type="text/xml",
                headers={"Content-Encoding": "gzip"},
            ),
        ),
        "moved": site.add("a.test", "/moved", Page(status=301, headers={"Location": "/same.xml"})),
        "missing": site.url("a.test", "/missing.xml"),
        "image": site.add(
            "a.test", "/logo", Page(b"\x89PNG\r\n\x1a\n" + b"\0" * 100, content_type="image/png")
        ),
    }
    links = [
        urls[name]
        for name in ("etag", "same", "changing", "big", "gzip", "moved", "missing", "image")
    ]
    urls["home"] = site.html("a.test", "/", links)
    return urls


def _with_etag(request: web.Request) -> Page:
    if request.headers.get("If-None-Match") == '"v1"':
        return Page(status=304, headers={"ETag": '"v1"'})
    return Page(b"<tagged/>", content_type="text/xml", headers={"ETag": '"v1"'})


async def crawl(md: Metadata, archive: Archive, urls: dict[str, str], *, again: bool) -> None:
    """One crawl from the home page; ``again`` re-reads every known page as a refresh."""
    crawler = Crawler(
        md,
        CrawlerSettings(**FAST, spool_over_bytes=64 * 1024),
        Scope(["domain:test:*"]),
        clock=md.clock,
        resolver=SiteResolver(),
        exchanges=archive,
    )
    if again:
        for name in ("etag", "same", "changing", "big", "gzip"):
            crawler.submit(md.id_for(urls[name]), Level.REFRESH)
    else:
        crawler.submit(urls["home"])
    await crawler.run()


async def archived_crawl(
    site: Site, md: Metadata, folder: Path, **settings
) -> tuple[dict, SiteState]:
    """Two crawls of the site with an archive in ``folder``; the archive is closed after."""
    state = SiteState()
    urls = build_site(site, state)
    archive = Archive(folder, ArchiveSettings(**settings), md.clock)
    archive.open()
    try:
        await crawl(md, archive, urls, again=False)
        state.changing = b"<doc>second</doc>"
        md.clock.advance(3600)
        await crawl(md, archive, urls, again=True)
    finally:
        await archive.close()
    return urls, state


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()
