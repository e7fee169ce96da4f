"""What the crawler records beyond links: robots meta directives and rel=canonical (issue 4),
and large bodies handed to the loader as spooled files that are removed after the load."""

from __future__ import annotations

import gzip
import hashlib
import tracemalloc
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from loader import Loader
from metadata import LoadStatus, PageType
from tests import crawler_fixtures
from tests.crawler_site import Page
from tests.loader_fakes import OneByOneSink
from xyleme.crawler import Crawler, CrawlerSettings
from xyleme.crawler.fetcher import SPOOLED_BODIES, Fetcher, FetchError

MIB = 1024 * 1024


def vouch_loopback(host: str, address: str) -> bool:
    """The fetcher tests talk to 127.0.0.1 directly: their SSRF guard lets them."""
    return True


def make_crawler(md, **settings) -> Crawler:
    """The shared test crawler with 4 requests in flight."""
    return crawler_fixtures.make_crawler(md, **{"concurrency": 4, **settings})


def spooled_files(folder: Path) -> list[Path]:
    return list(folder.glob(SPOOLED_BODIES))


# ---------------------------------------------------------------------- robots and canonical


async def test_robots_directives_and_canonical_are_recorded_and_honoured(site, md):
    home = site.html(
        "a.test",
        "/",
        ["/hidden.html", "/copy.html"],
        '<meta name="robots" content="NOINDEX, noarchive">',
    )
    site.html(
        "a.test", "/hidden.html", ["/behind-nofollow.html"], '<meta name="robots" content="none">'
    )
    site.html("a.test", "/behind-nofollow.html")
    site.html("a.test", "/copy.html", extra='<link rel="canonical" href="/original.html#top">')
    site.html("a.test", "/original.html", extra='<link rel="canonical" href="/original.html">')
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()

    page = md.page_by_url(home)
    assert (page.page_type, page.robots, page.canonical_to) == (
        PageType.HTML,
        "noarchive,noindex",
        None,
    )
    # noindex/noarchive: the page stays in the metadata, its links followed.
    hidden = md.page_by_url(site.url("a.test", "/hidden.html"))
    assert hidden.page_type is PageType.HTML and hidden.robots == "nofollow,noindex"
    # nofollow: the links are children (the link graph) but never fetched by scouting.
    behind = md.page_by_url(site.url("a.test", "/behind-nofollow.html"))
    assert md.urls_of(md.children(hidden.url_id).tolist()) == [behind.url]
    assert behind.page_type is PageType.UNKNOWN
    assert "/behind-nofollow.html" not in [hit.path for hit in site.hits]
    # rel=canonical: another page gets a URL-Id, is recorded, and is scouted; a self-reference
    # records nothing.
    copy = md.page_by_url(site.url("a.test", "/copy.html"))
    original = md.page_by_url(site.url("a.test", "/original.html"))
    assert (copy.robots, copy.canonical_to) == (None, original.url_id)
    assert original.page_type is PageType.HTML and original.canonical_to is None


async def test_an_out_of_scope_canonical_is_not_recorded(site, md):
    page = site.html("a.test", "/", extra='<link rel="canonical" href="http://elsewhere.org/">')
    crawler = make_crawler(md)
    crawler.submit(page)
    await crawler.run()
    assert md.page_by_url(page).canonical_to is None
    assert md.id_for("http://elsewhere.org/", create=False) is None


# ---------------------------------------------------------------------- spooled bodies


class SpoolCheckingSink(OneByOneSink):
    """Records how each body arrived; optionally fails, as a loader bug would."""

    def __init__(self, fail: bool = False):
        self.fail = fail
        self.seen: list[tuple[str, bool, str]] = []  # (url, came as a file, md5 of it)
        self.paths: list[Path] = []

    def load(self, url_id, url, body, headers, fetched_at):
        data = body.read_bytes() if isinstance(body, Path) else body
        self.seen.append((url, isinstance(body, Path), hashlib.md5(data).hexdigest()))
        if isinstance(body, Path):
            self.paths.append(body)
        if self.fail:
            raise RuntimeError("loader bug")

    def dependency_failed(self, url_id, url, reason):
        return []


def big_xml(size: int) -> bytes:
    item = b"<item>spooled body</item>\n"
    return b"<?xml version='1.0'?>\n<catalog>\n" + item * (size // len(item)) + b"</catalog>\n"


@pytest.mark.parametrize("fail", [False, True], ids=["loaded", "loader-fails"])
async def test_a_large_xml_body_reaches_the_loader_as_a_file_removed_afterwards(
    site, md, fail, tmp_path
):
    large, small = big_xml(3 * MIB), big_xml(10_000)
    site.html("a.test", "/", ["/large.xml", "/small.xml", "/large.gz.xml"])
    site.add("a.test", "/large.xml", Page(large, 200, "application/xml"))
    site.add("a.test", "/small.xml", Page(small, 200, "application/xml"))
    site.add(
        "a.test",
        "/large.gz.xml",
        Page(gzip.compress(large), 200, "application/xml", {"Content-Encoding": "gzip"}),
    )
    sink = SpoolCheckingSink(fail=fail)
    crawler = make_crawler(md, sink=sink, spool_over_bytes=MIB, spool_dir=str(tmp_path))
    crawler.submit(site.url("a.test", "/"))
    await crawler.run()

    md5 = {"large": hashlib.md5(large).hexdigest(), "small": hashlib.md5(small).hexdigest()}
    assert sorted(
        (url.rsplit("/", 1)[1], as_file, digest) for url, as_file, digest in sink.seen
    ) == [
        ("large.gz.xml", True, md5["large"]),
        ("large.xml", True, md5["large"]),
        ("small.xml", False, md5["small"]),
    ]
    assert md.page_by_url(site.url("a.test", "/large.xml")).md5 == md5["large"]
    assert md.page_by_url(site.url("a.test", "/large.xml")).size == len(large)
    assert all(path.parent == tmp_path for path in sink.paths)
    assert not any(path.exists() for path in sink.paths)
    assert spooled_files(tmp_path) == []


async def test_large_bodies_the_loader_does_not_need_leave_no_file(site, md, tmp_path):
    large = big_xml(2 * MIB)
    site.add("a.test", "/large.xml", Page(large, 200, "application/xml"))
    site.add(
        "a.test",
        "/big.html",
        Page(b"<html><body>" + b" " * 2 * MIB + b'<a href="/x">x</a></body></html>'),
    )
    crawler = make_crawler(md, spool_over_bytes=MIB, spool_dir=str(tmp_path))  # no loader
    crawler.submit(site.url("a.test", "/large.xml"))
    crawler.submit(site.url("a.test", "/big.html"))
    await crawler.run()
    assert md.page_by_url(site.url("a.test", "/large.xml")).md5 == hashlib.md5(large).hexdigest()
    big = md.page_by_url(site.url("a.test", "/big.html"))
    assert md.urls_of(md.children(big.url_id).tolist()) == [site.url("a.test", "/x")]
    assert spooled_files(tmp_path) == []


async def streamed_server(body: bytes, encoding: str | None) -> tuple[web.AppRunner, int]:
    """A server that writes ``body`` in 64 KiB pieces, so it never holds a copy itself."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        if encoding:
            response.headers["Content-Encoding"] = encoding
        await response.prepare(request)
        view = memoryview(body)
        for start in range(0, len(body), 64 * 1024):
            await response.write(view[start : start + 64 * 1024])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    server = web.TCPSite(runner, "127.0.0.1", 0)
    await server.start()
    return runner, server._server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("encoding", [None, "gzip"])
async def test_a_spooled_body_is_never_whole_in_memory(encoding):
    body = big_xml(6 * MIB)
    wire = gzip.compress(body) if encoding else body
    runner, port = await streamed_server(wire, encoding)
    fetcher = Fetcher(CrawlerSettings(), aiohttp.DefaultResolver(), vouch_loopback)
    await fetcher.open()
    try:
        tracemalloc.start()
        async with fetcher.request(f"http://127.0.0.1:{port}/") as response:
            read, size = await fetcher.read_body(response, 10 * MIB, spool_over=MIB)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert isinstance(read.content, Path) and size == len(wire)
        assert read.size == len(body) and read.md5 == hashlib.md5(body).hexdigest()
        assert read.content.read_bytes() == body
        assert peak < 3 * MIB  # held: at most the threshold's pieces (and a gzip body's wire)
        read.discard()
        assert not read.content.exists()
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        await fetcher.close()
        await runner.cleanup()


async def test_a_body_cut_at_the_cap_leaves_no_spooled_file(tmp_path):
    runner, port = await streamed_server(big_xml(3 * MIB), None)  # chunked: no Content-Length
    fetcher = Fetcher(CrawlerSettings(), aiohttp.DefaultResolver(), vouch_loopback)
    await fetcher.open()
    try:
        async with fetcher.request(f"http://127.0.0.1:{port}/") as response:
            with pytest.raises(FetchError, match="cap: cut"):
                await fetcher.read_body(response, 2 * MIB, spool_over=MIB, spool_dir=str(tmp_path))
    finally:
        await fetcher.close()
        await runner.cleanup()
    assert spooled_files(tmp_path) == []


async def test_the_real_loader_stores_a_spooled_document_and_its_links(site, md, tmp_path):
    item = b'<item href="/next.html">a spooled item</item>\n'
    xml = b"<?xml version='1.0'?>\n<catalog>\n" + item * (2 * MIB // len(item)) + b"</catalog>\n"
    url = site.add("a.test", "/catalog.xml", Page(xml, 200, "application/xml"))
    site.html("a.test", "/next.html")
    spool = tmp_path / "spool"
    spool.mkdir()
    crawler = make_crawler(md, spool_over_bytes=MIB, spool_dir=str(spool))
    crawler.sink = Loader(tmp_path / "documents", md, crawler, md.clock)
    crawler.submit(url)
    await crawler.run()
    catalog = md.page_by_url(url)
    assert md.status(catalog.url_id)[0] is LoadStatus.LOADED
    assert md.page_by_url(site.url("a.test", "/next.html")).page_type is PageType.HTML
    assert spooled_files(spool) == []
