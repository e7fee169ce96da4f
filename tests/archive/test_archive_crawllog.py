"""The crawl log: one parseable line per fetch, matching the metadata; rotation."""

from __future__ import annotations

import hashlib
from datetime import datetime

import pytest

from tests.archive_fixtures import archived_crawl
from tests.crawler_fixtures import FAST
from tests.crawler_site import Page, SiteResolver
from xyleme.archive import Archive, ArchiveSettings, Fetch
from xyleme.archive.crawllog import COLUMNS, HEADER, LOG_NAME, RotatingLog, format_line, parse_line
from xyleme.crawler import Crawler, CrawlerSettings, Scope
from xyleme.crawler.exchanges import NO_RESPONSE_CODES


def read_log(folder):
    lines = (folder / LOG_NAME).read_text().splitlines(keepends=True)
    assert lines[0] == HEADER
    return [parse_line(line) for line in lines[1:]]


async def test_one_line_per_fetch_matching_the_metadata(site, md, tmp_path):
    urls, _ = await archived_crawl(site, md, tmp_path / "archive")
    rows = read_log(tmp_path / "archive")
    first = {}
    for row in rows:
        first.setdefault(row["url"], row)
    home = first[urls["home"]]
    assert home["status"] == 200 and home["hops"] is None and home["referrer"] is None
    assert home["content_type"].startswith("text/html") and home["type"] == "HTML"
    same = first[urls["same"]]
    page = md.page_by_url(urls["same"])
    assert (same["md5"], same["size"], same["hops"]) == (page.md5, 7, "L")
    assert same["referrer"] == urls["home"] and same["level"] == 3
    assert first[urls["missing"]]["status"] == 404 and first[urls["missing"]]["type"] == "DEAD"
    moved = first[urls["moved"]]
    assert moved["status"] == 301
    # the redirect's target was already read through the home page's link: no second line
    for row in rows:
        assert row["duration_ms"] >= 0
        datetime.fromisoformat(row["time"])  # ISO 8601
        assert datetime.fromisoformat(row["clock"]).timestamp() in (1_000_000.0, 1_003_600.0)
    prerequisites = [row for row in rows if row["hops"] == "P"]
    # each of the two crawls (a new crawler each) reads robots.txt once, before the rest
    assert [row["url"] for row in prerequisites] == [urls["home"] + "robots.txt"] * 2
    refreshes = [row for row in rows if row["level"] == 1 and row["hops"] != "P"]
    assert {row["url"] for row in refreshes} == {
        urls[name] for name in ("etag", "same", "changing", "big", "gzip")
    }
    assert next(r for r in refreshes if r["url"] == urls["etag"])["status"] == 304


def test_a_fetch_without_response_has_a_negative_code_and_a_line_always_parses():
    fetch = Fetch(
        wall=0.0,
        at=86_400.0,
        status=NO_RESPONSE_CODES["robots"],
        size=None,
        url="http://a.test/x\ty",
        hops="LLR",
        referrer=None,
        content_type=None,
        duration_ms=3,
        md5=None,
        level=3,
        page_type="error",
        reason="disallowed by\nrobots.txt",
    )
    row = parse_line(format_line(fetch))
    assert list(row) == list(COLUMNS)
    assert row["status"] == -9998 and row["size"] is None and row["url"] == "http://a.test/x y"
    assert row["time"] == "1970-01-01T00:00:00.000Z" and row["clock"] == "1970-01-02T00:00:00.000Z"
    assert row["reason"] == "disallowed by robots.txt"
    with pytest.raises(ValueError, match="13 columns"):
        parse_line("a\tb\n")


def test_the_log_rotates_by_size_and_keeps_its_backups(tmp_path):
    log = RotatingLog(tmp_path, max_bytes=1000, backups=2)
    for number in range(100):
        log.write(f"line {number:03d}" + "x" * 90 + "\n")
    log.close()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["crawl.log", "crawl.log.1", "crawl.log.2"]
    for path in tmp_path.iterdir():
        text = path.read_text()
        assert text.startswith(HEADER) and len(text.encode()) <= 1000
    assert "line 099" in (tmp_path / "crawl.log").read_text()


async def crawl_log_of(md, folder, seed):
    """The crawl log's lines of a crawl from ``seed`` with an archive in ``folder``."""
    archive = Archive(folder, ArchiveSettings(), md.clock)
    archive.open()
    try:
        crawler = Crawler(
            md,
            CrawlerSettings(**FAST),
            Scope(["domain:test:*"]),
            clock=md.clock,
            resolver=SiteResolver(),
            exchanges=archive,
        )
        crawler.submit(seed)
        await crawler.run()
    finally:
        await archive.close()
    return read_log(folder)


async def test_robots_txt_and_a_retried_503_each_have_their_line(site, md, tmp_path):
    """Every fetch gets its line: the robots.txt GET (discovery path ``P``, Heritrix's
    prerequisite, referrer the page that needed it) and a 503 tried again later."""
    robots = b"User-agent: *\nDisallow: /private\n"
    robots_url = site.add("r.test", "/robots.txt", Page(robots, content_type="text/plain"))
    answers = iter([Page(b"busy", status=503, headers={"Retry-After": "0"})])
    flaky = site.add(
        "r.test",
        "/flaky.xml",
        lambda request: next(answers, Page(b"<ok/>", content_type="text/xml")),
    )
    home = site.html("r.test", "/", [flaky])
    rows = await crawl_log_of(md, tmp_path / "archive", home)
    assert [(row["url"], row["status"]) for row in rows] == [
        (robots_url, 200),  # first: the home page waited for it
        (home, 200),
        (flaky, 503),
        (flaky, 200),
    ]
    first = rows[0]
    assert (first["hops"], first["referrer"], first["size"]) == ("P", home, len(robots))
    assert first["md5"] == hashlib.md5(robots).hexdigest()
    assert first["content_type"] == "text/plain" and first["type"] is None
    busy, ok = rows[2], rows[3]
    assert busy["reason"] == "HTTP 503: tried again in 0 s" and busy["hops"] == "L"
    assert (ok["type"], ok["reason"], ok["referrer"]) == ("XML", None, home)
    assert md.page_by_url(flaky).status == 200  # the retry is logged, not recorded


async def test_a_robots_txt_that_cannot_be_fetched_is_logged_with_its_failure(site, md, tmp_path):
    """A robots.txt on a host that refuses connections: its own -2 line, then the page's,
    refused without a try: -61, Heritrix's "prerequisite robots.txt fetch failed" (not the
    robots.txt fetch's -2, which would count a second network error), robots.txt's reason."""
    robots, page = await crawl_log_of(md, tmp_path / "archive", "http://closed.test:1/page")
    assert (robots["url"], robots["status"], robots["hops"]) == (
        "http://closed.test:1/robots.txt",
        -2,
        "P",
    )
    assert robots["reason"] and robots["size"] is None and robots["md5"] is None
    assert (page["url"], page["status"], page["hops"]) == ("http://closed.test:1/page", -61, None)
    assert page["reason"].startswith("robots.txt unreachable")
