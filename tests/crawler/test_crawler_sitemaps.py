"""Sitemaps as the web serves them (issue 16): named by robots.txt or a sitemap index, a
``.xml.gz`` gzip file is read despite the ``.gz`` deny rule, a text sitemap's lines are links,
and a gzip bomb is refused with its reason; an ordinary link to a ``.tar.gz`` stays refused."""

from __future__ import annotations

import gzip

from loader import Loader
from metadata import LoadStatus, PageType
from tests import crawler_fixtures
from tests.crawler_site import Page
from xyleme.crawler import Level
from xyleme.crawler.sitemapbody import SITEMAP_JUNK, SITEMAP_MAX_URLS, read_text_sitemap
from xyleme.jobs import SitemapQueue

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(urls: list[str]) -> bytes:
    locs = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{locs}</urlset>\n'.encode()


def index(urls: list[str]) -> bytes:
    maps = "".join(f"<sitemap><loc>{url}</loc></sitemap>" for url in urls)
    return f'<?xml version="1.0"?>\n<sitemapindex {NS}>{maps}</sitemapindex>\n'.encode()


def crawl(md, tmp_path, **settings):
    crawler = crawler_fixtures.make_crawler(md, **settings)
    crawler.sink = Loader(tmp_path / "documents", md, crawler, md.clock)
    SitemapQueue(crawler)
    return crawler


async def test_gzip_text_and_indexed_sitemaps_named_by_robots_are_all_read(site, md, tmp_path):
    url = site.url
    pages = {name: site.html("a.test", f"/{name}.html") for name in ("p1", "p2", "p3", "p4")}
    site.html("a.test", "/", ["/x.tar.gz"])
    site.add("a.test", "/x.tar.gz", Page(gzip.compress(b"tar"), 200, "application/gzip"))
    site.add(
        "a.test",
        "/sitemap.xml.gz",
        Page(gzip.compress(urlset([pages["p1"]])), 200, "application/x-gzip"),
    )
    text = f"{pages['p2']}\n\nnot a url\r\n  {pages['p2']}  \nhttp://elsewhere.example/out\n"
    site.add("a.test", "/sitemap.txt", Page(text.encode(), 200, "text/plain; charset=utf-8"))
    site.add("a.test", "/index.xml", Page(index([url("a.test", "/part.xml.gz")]), 200, "text/xml"))
    part = gzip.compress(urlset([pages["p3"], pages["p4"]]))
    site.add("a.test", "/part.xml.gz", Page(part, 200, "application/octet-stream"))
    robots = "".join(
        f"Sitemap: {url('a.test', path)}\n"
        for path in ("/sitemap.xml.gz", "/sitemap.txt", "/index.xml")
    )
    site.add("a.test", "/robots.txt", Page(f"User-agent: *\n{robots}".encode(), 200, "text/plain"))
    crawler = crawl(md, tmp_path)
    crawler.submit(url("a.test", "/"))
    await crawler.run()

    for name, page_url in pages.items():
        assert md.page_by_url(page_url).page_type is PageType.HTML, name
    for path in ("/sitemap.xml.gz", "/part.xml.gz", "/index.xml"):
        sitemap = md.page_by_url(url("a.test", path))
        assert sitemap.page_type is PageType.XML, path
        assert md.status(sitemap.url_id)[0] is LoadStatus.LOADED, path
    assert md.page_by_url(url("a.test", "/sitemap.txt")).page_type is PageType.RESOURCE
    assert crawler.stats.rejected[SITEMAP_JUNK] == 1
    indexed = md.page_by_url(url("a.test", "/part.xml.gz")).url_id
    assert indexed in md.children(md.page_by_url(url("a.test", "/index.xml")).url_id).tolist()
    rejected = {entry.url: entry.reason for entry in md.rejected()}
    assert url("a.test", "/part.xml.gz") not in rejected  # an index's entry is a sitemap
    assert rejected[url("a.test", "/x.tar.gz")] == "suffix .gz: binary media"
    assert "http://elsewhere.example/out" in rejected  # out of scope, as any link
    assert not any(hit.path == "/x.tar.gz" for hit in site.hits)


async def test_a_known_sitemap_is_read_as_one_again_when_refreshed(site, md, tmp_path):
    """The fact that a URL is a sitemap is kept per page: a refresh names only its URL-Id
    (as the refresh plan does, in a later run), and the ``.xml.gz`` is still unpacked under
    the sitemap rules, its ``.gz`` suffix spared, its new entries read."""
    first, second = site.html("a.test", "/p1.html"), site.html("a.test", "/p2.html")
    gz = site.add(
        "a.test", "/map.xml.gz", Page(gzip.compress(urlset([first])), 200, "application/gzip")
    )
    robots = f"User-agent: *\nSitemap: {gz}\n".encode()
    site.add("a.test", "/robots.txt", Page(robots, 200, "text/plain"))
    crawler = crawl(md, tmp_path)
    crawler.submit(site.html("a.test", "/"))
    await crawler.run()
    url_id = md.page_by_url(gz).url_id
    assert md.sitemap_urls() == {gz}

    site.add(
        "a.test",
        "/map.xml.gz",
        Page(gzip.compress(urlset([first, second])), 200, "application/gzip"),
    )
    # A new run that reads no robots.txt job: only the page's record says what it is.
    later = crawler_fixtures.make_crawler(md)
    later.sink = Loader(tmp_path / "documents", md, later, md.clock)
    assert later.submit(url_id, Level.REFRESH, reload=True)
    await later.run()
    assert md.page_by_url(gz).page_type is PageType.XML
    assert md.page_by_url(second).page_type is PageType.HTML  # its new entry was read
    assert [hit.path for hit in site.hits].count("/map.xml.gz") == 2

    site.add("a.test", "/map.xml.gz", Page(status=404))  # gone: still known as a sitemap
    again = crawler_fixtures.make_crawler(md)
    assert again.submit(gz, Level.SCOUTING)  # by URL (a restart's unread pages): not refused
    await again.run()
    assert md.page_by_url(gz).page_type is not PageType.XML


async def test_a_gzip_bomb_sitemap_is_refused_with_its_reason(site, md, tmp_path):
    bomb = gzip.compress(b"<" + b" " * (3 * 1024 * 1024))
    site.add("a.test", "/bomb.xml.gz", Page(bomb, 200, "application/gzip"))
    site.add(
        "a.test",
        "/robots.txt",
        Page(f"Sitemap: {site.url('a.test', '/bomb.xml.gz')}\n".encode(), 200, "text/plain"),
    )
    home = site.html("a.test", "/")
    crawler = crawl(md, tmp_path, max_decoded_bytes=1024 * 1024)
    crawler.submit(home)
    await crawler.run()
    page = md.page_by_url(site.url("a.test", "/bomb.xml.gz"))
    assert page.page_type is PageType.ERROR
    assert page.reason == (
        "gzip sitemap over 1048576 bytes uncompressed "
        "(sitemap protocol cap: 50 MB; decompression bomb?)"
    )


def test_a_text_sitemap_stops_at_the_protocols_50000_urls():
    body = "".join(f"http://a.test/{i}\n" for i in range(SITEMAP_MAX_URLS + 5)).encode()
    found = read_text_sitemap(body)
    assert len(found.urls) == SITEMAP_MAX_URLS
    assert found.capped
    assert found.note().endswith("capped at 50000 URLs (sitemap protocol)")
