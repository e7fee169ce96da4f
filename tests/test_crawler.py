"""The crawler against small loopback sites: links, robots, politeness, 304s, faults."""

from __future__ import annotations

import gzip

import pytest
from metadata import Metadata, PageType
from metadata.clock import ManualClock

from tests.crawler_site import Page, Site, SiteResolver
from xyleme import signals
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope

FAST = dict(min_delay=0.0, concurrency=8, per_host_concurrency=2, write_interval=0.01)


@pytest.fixture
async def site():
    web = Site()
    await web.start()
    yield web
    await web.stop()


@pytest.fixture
def md(tmp_path):
    with Metadata.create(tmp_path / "metadata.db", clock=ManualClock(1_000_000.0)) as metadata:
        yield metadata


def make_crawler(md, **settings) -> Crawler:
    return Crawler(
        md,
        CrawlerSettings(**{**FAST, **settings}),
        Scope(domains=frozenset({"test"})),
        clock=md.clock,
        resolver=SiteResolver(),
    )


def children_urls(md, url):
    page = md.page_by_url(url)
    return sorted(md.urls_of(md.children(page.url_id).tolist()))


async def test_crawl_records_pages_and_link_graph(site, md):
    home = site.html("a.test", "/", ["/x.html", "http://b.test:{p}/y.html".format(p=0)])
    # b.test's link needs the port: register after the server knows it.
    home = site.html("a.test", "/", ["/x.html", site.url("b.test", "/y.html")])
    site.html("a.test", "/x.html", ["/"])
    site.html("b.test", "/y.html", [site.url("a.test", "/x.html")])
    crawler = make_crawler(md)
    assert crawler.submit(home)
    stats = await crawler.run()
    assert stats["pages"] == 3
    assert children_urls(md, home) == sorted(
        [site.url("a.test", "/x.html"), site.url("b.test", "/y.html")]
    )
    assert children_urls(md, site.url("b.test", "/y.html")) == [site.url("a.test", "/x.html")]
    page = md.page_by_url(home)
    assert page.page_type is PageType.HTML and page.md5 is not None and page.status == 200
