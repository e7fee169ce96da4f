"""The crawler against small loopback sites, what goes wrong: faults, XML handed to the loader,
events and shutdown.

Every test starts its own virtual-host site on 127.0.0.1 (tests/crawler_site.py); names
under ``.test`` resolve to it, anything else fails like DNS would.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import itertools
import time

import pytest

from loader import LoadOutcome, LoadResult
from metadata import PageType
from tests.crawler_fixtures import FAST, children_urls, listen, make_crawler
from tests.crawler_site import Page
from tests.loader_fakes import OneByOneSink
from xyleme import signals
from xyleme.crawler import Level, Scope

# ---------------------------------------------------------------------- faults


async def test_each_fault_is_recorded_with_its_reason(site, md):
    bomb = gzip.compress(b"<p>" + b"a" * 3_000_000 + b"</p>")
    urls = {
        "dns": "http://no-such-host.invalid/",
        "refused": "http://closed.test:9/",
        "timeout": site.add("a.test", "/slow", Page(b"<p>late</p>", delay=2.0)),
        "500": site.add("a.test", "/500", Page(b"oops", 500)),
        "404": site.add("a.test", "/404", Page(b"gone", 404)),
        "410": site.add("a.test", "/410", Page(b"gone", 410)),
        "huge": site.add("a.test", "/huge", Page(b"<p>" + b"x" * 300_000)),
        "bomb": site.add("a.test", "/bomb", Page(bomb, headers={"Content-Encoding": "gzip"})),
        "loop": site.add("a.test", "/loop1", Page(b"", 302, headers={"Location": "/loop2"})),
        "unsupported": site.add("a.test", "/br", Page(b"x", headers={"Content-Encoding": "br"})),
    }
    site.add("a.test", "/loop2", Page(b"", 302, headers={"Location": "/loop1"}))
    crawler = make_crawler(
        md,
        scope=Scope(["domain:test:*", "host:no-such-host.invalid"]),
        read_timeout=0.3,
        connect_timeout=2.0,
        max_body_bytes=100_000,
        max_decoded_bytes=1_000_000,
    )
    for url in urls.values():
        crawler.submit(url, Level.DISCOVERY)
    stats = await crawler.run()

    def record(name):
        return md.page_by_url(urls[name])

    expected = {
        "dns": (PageType.DEAD, "DNS failure"),
        "refused": (PageType.ERROR, "connection failed"),
        "timeout": (PageType.ERROR, "timeout"),
        "500": (PageType.ERROR, "HTTP 500"),
        "404": (PageType.DEAD, "HTTP 404"),
        "410": (PageType.DEAD, "HTTP 410"),
        "huge": (PageType.ERROR, "over the 100000-byte cap"),
        "bomb": (PageType.ERROR, "decompression bomb"),
        "unsupported": (PageType.ERROR, "unsupported Content-Encoding"),
    }
    for name, (page_type, reason) in expected.items():
        page = record(name)
        assert page.page_type is page_type, (name, page.reason)
        assert reason in page.reason, (name, page.reason)
        assert page.failures == 1
    loop2 = md.page_by_url(site.url("a.test", "/loop2"))
    assert loop2.page_type is PageType.ERROR and "redirect loop" in loop2.reason
    assert record("loop").redirect_to == loop2.url_id
    assert stats["errors"]["dns"] == 1 and stats["errors"]["timeout"] == 1


async def test_redirects_record_each_hop_with_its_own_url_id(site, md):
    first = site.add("a.test", "/old", Page(b"", 301, headers={"Location": "/middle"}))
    site.add("a.test", "/middle", Page(b"", 307, headers={"Location": site.url("b.test", "/")}))
    site.html("b.test", "/", [])
    chain = [
        site.add("a.test", f"/r{n}", Page(b"", 302, headers={"Location": f"/r{n + 1}"}))
        for n in range(8)
    ]
    crawler = make_crawler(md, max_redirects=3)
    crawler.submit(first)
    crawler.submit(chain[0])
    await crawler.run()
    old, middle = md.page_by_url(first), md.page_by_url(site.url("a.test", "/middle"))
    final = md.page_by_url(site.url("b.test", "/"))
    assert (old.status, old.redirect_to) == (301, middle.url_id)
    assert (middle.status, middle.redirect_to) == (307, final.url_id)
    assert final.page_type is PageType.HTML
    assert md.children(old.url_id).tolist() == [middle.url_id]
    too_far = md.page_by_url(chain[3])
    assert too_far.page_type is PageType.ERROR and "more than 3 redirects" in too_far.reason


async def test_gzip_pages_are_decoded_and_their_links_followed(site, md):
    body = gzip.compress(b'<a href="/next.html">next</a>')
    home = site.add("a.test", "/", Page(body, headers={"Content-Encoding": "gzip"}))
    site.html("a.test", "/next.html", [])
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    assert children_urls(md, home) == [site.url("a.test", "/next.html")]
    assert md.page_by_url(home).md5 == hashlib.md5(gzip.decompress(body)).hexdigest()


# ---------------------------------------------------------------------- XML and the loader


class RecordingSink(OneByOneSink):
    """The loader's DocumentSink contract: synchronous calls (the crawler runs them in a
    worker thread)."""

    def __init__(self):
        self.loaded = []
        self.failed = []

    def load(self, url_id, url, body, headers, fetched_at):
        self.loaded.append((url_id, url, body, headers["Content-Type"], fetched_at))
        return LoadResult(url_id, LoadOutcome.STORED)

    def dependency_failed(self, url_id, url, reason):
        self.failed.append((url_id, url, reason))
        return []


async def test_xml_goes_to_the_sink_once_per_version(site, md):
    xml = b"<?xml version='1.0'?><catalog><item/></catalog>"
    home = site.html("a.test", "/", ["/catalog.xml", "/feed"])
    site.add("a.test", "/catalog.xml", Page(xml, 200, "application/xml"))
    site.add("a.test", "/feed", Page(b"<rss/>", 200, "application/rss+xml"))
    sink = RecordingSink()
    crawler = make_crawler(md, sink=sink)
    crawler.submit(home)
    await crawler.run()
    catalog = md.page_by_url(site.url("a.test", "/catalog.xml"))
    assert catalog.page_type is PageType.XML
    assert catalog.md5 == hashlib.md5(xml).hexdigest()
    assert md.page_by_url(site.url("a.test", "/feed")).page_type is PageType.XML
    assert sorted(entry[1] for entry in sink.loaded) == sorted(
        [catalog.url, site.url("a.test", "/feed")]
    )
    assert (catalog.url_id, xml, 1_000_000.0) in [(e[0], e[2], e[4]) for e in sink.loaded]

    crawler.submit(catalog.url_id, Level.REFRESH)  # same MD5: the loader has it already
    await crawler.run()
    assert len(sink.loaded) == 2


async def test_a_reload_reads_unconditionally_and_hands_even_an_unchanged_body(site, md):
    xml = b"<?xml version='1.0'?><catalog/>"
    etag = '"v1"'

    def page(request):
        if request.headers.get("If-None-Match") == etag:
            return Page(b"", 304, headers={"ETag": etag})
        return Page(xml, 200, "application/xml", headers={"ETag": etag})

    url = site.add("a.test", "/catalog.xml", page)
    sink = RecordingSink()
    crawler = make_crawler(md, sink=sink)
    crawler.submit(url)
    await crawler.run()
    url_id = md.page_by_url(url).url_id
    crawler.submit(url_id, Level.REFRESH)  # a 304: nothing for the loader
    await crawler.run()
    assert site.hits[-1].headers.get("If-None-Match") == etag and len(sink.loaded) == 1

    crawler.submit(url_id, Level.REFRESH, reload=True)  # a load a crash cut off
    await crawler.run()
    assert "If-None-Match" not in site.hits[-1].headers
    assert [entry[2] for entry in sink.loaded] == [xml, xml]


async def test_a_slow_loader_holds_the_fetchers_back(site, md):
    paths = [f"/doc{n}.xml" for n in range(40)]
    home = site.html("a.test", "/", paths)
    for path in paths:
        site.add("a.test", path, Page(b"<doc/>", 200, "application/xml"))
    backlogs = []

    class SlowSink(RecordingSink):
        def load(self, *args):
            backlogs.append(crawler.backlog())
            time.sleep(0.01)
            return super().load(*args)

    sink = SlowSink()
    crawler = make_crawler(md, sink=sink, max_pending_loads=2, max_pending_writes=4)
    crawler.submit(home)
    await crawler.run()
    assert len(sink.loaded) == 40
    # bodies queued for the loader + results queued for the writer + fetches in flight
    assert max(backlogs) <= 2 + 4 + FAST["concurrency"]


async def test_without_a_sink_xml_is_stored_with_its_md5(site, md):
    xml = site.add("a.test", "/doc.xml", Page(b"<doc/>", 200, "text/xml"))
    crawler = make_crawler(md)
    crawler.submit(xml)
    await crawler.run()
    page = md.page_by_url(xml)
    assert page.page_type is PageType.XML and page.md5 == hashlib.md5(b"<doc/>").hexdigest()


async def test_dependencies_obey_the_scope(site, md):
    crawler = make_crawler(md)
    assert not crawler.request("http://outside.example/x.dtd", referrer_id=None)
    assert md.rejected()[0].reason.startswith("out of scope")
    assert len(crawler.frontier) == 0


# ---------------------------------------------------------------------- events and shutdown


async def test_failing_listeners_never_stop_the_crawl(site, md):
    home = site.html("a.test", "/", ["/gone"])
    crawler = make_crawler(md)

    def broken(event):
        raise RuntimeError("listener bug")

    crawler.signals.connect(signals.page_fetched, broken)
    dead = listen(crawler, signals.page_dead)
    crawler.submit(home)
    await crawler.run()
    assert [event.url for event in dead] == [site.url("a.test", "/gone")]
    assert md.page_by_url(home).page_type is PageType.HTML


async def test_stop_returns_the_stats(site, md):
    home = site.html("a.test", "/", [])
    crawler = make_crawler(md)
    crawler.submit(home)
    task = asyncio.create_task(crawler.run(until_idle=False))
    for _ in range(3000):  # at least 30 s: a deadline, not an expected duration
        if crawler.stats.pages >= 1 or task.done():
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the crawler fetched no page in 30 s")
    assert not task.done(), task.exception()
    crawler.stop()
    stats = await asyncio.wait_for(task, 5.0)
    assert stats["pages"] == 1 and stats["queues"] == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0}
    assert stats["by_status"] == {200: 1}


async def test_a_refused_batch_is_recorded_page_by_page(site, md, monkeypatch, caplog):
    home = site.html("a.test", "/", ["/bad.html", "/good.html"])
    site.html("a.test", "/bad.html", [])
    site.html("a.test", "/good.html", [])
    bad_id = md.id_for(site.url("a.test", "/bad.html"))
    record_fetches = md.record_fetches

    def refuse_the_bad_page(results):
        if any(result.url_id == bad_id for result in results):
            raise RuntimeError("disk trouble")
        return record_fetches(results)

    monkeypatch.setattr(md, "record_fetches", refuse_the_bad_page)
    crawler = make_crawler(md, write_interval=0.5)  # one batch for both children
    crawler.submit(home)
    stats = await crawler.run()
    assert md.page_by_url(site.url("a.test", "/good.html")).page_type is PageType.HTML
    assert md.page(bad_id).page_type is PageType.UNKNOWN
    assert "could not record the fetch of " + site.url("a.test", "/bad.html") in caplog.text
    assert stats["errors"] == {"metadata": 1}


async def test_per_ip_limit_spans_hosts_on_one_address(site, md):
    pages = []
    for host in ("a.test", "b.test"):
        site.add(host, "/robots.txt", Page(b"", 404))
        pages += [site.add(host, f"/{n}", Page(b"<p>slow</p>", delay=0.2)) for n in range(2)]
    crawler = make_crawler(md, per_host_concurrency=2, per_ip_concurrency=1)
    for url in pages:
        crawler.submit(url)
    await crawler.run()
    arrivals = sorted(hit.at for hit in site.hits if hit.path != "/robots.txt")
    assert len(arrivals) == 4
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.19  # one request at a time on 127.0.0.1, whatever the host


async def test_tls_failure_is_recorded(site, md):
    url = f"https://a.test:{site.port}/"  # a plain HTTP server cannot do a TLS handshake
    crawler = make_crawler(md)
    crawler.submit(url)
    await crawler.run()
    page = md.page_by_url(url)
    assert page.page_type is PageType.ERROR
    assert "robots.txt unreachable" in page.reason and "TLS" in page.reason, page.reason


async def test_the_seen_table_outlives_the_crawler(site, md):
    home = site.html("a.test", "/", ["/a.html"])
    site.html("a.test", "/a.html", [])
    first = make_crawler(md)
    first.submit(home)
    await first.run()
    site.hits.clear()
    second = make_crawler(md)  # a new process, say: the seen-URL table comes from metadata
    second.submit(home)  # a seed is always fetched; its known link is left to refresh
    await second.run()
    assert [hit.path for hit in site.hits] == ["/robots.txt", "/"]
    assert site.url("a.test", "/a.html") in second.seen


async def test_a_page_that_failed_is_read_again_without_validators(site, md):
    answers = iter(
        [Page(b"<p>v1</p>", headers={"ETag": '"v1"'}), Page(b"", 500), Page(b"<p>v1</p>")]
    )
    home = site.add("a.test", "/", lambda request: next(answers))
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    url_id = md.page_by_url(home).url_id
    for _ in range(2):
        crawler.submit(url_id, Level.REFRESH)
        await crawler.run()
    assert "If-None-Match" in site.hits[-2].headers  # after a success: conditional
    assert "If-None-Match" not in site.hits[-1].headers  # after the 500: the body is needed
    assert md.page(url_id).page_type is PageType.HTML


async def test_a_huge_robots_txt_is_read_up_to_its_cap(site, md):
    rules = b"User-agent: *\nDisallow: /no\n" + b"# padding\n" * 20_000
    site.add("a.test", "/robots.txt", Page(rules, 200, "text/plain"))
    home = site.html("a.test", "/", ["/no", "/yes"])
    site.html("a.test", "/yes", [])
    crawler = make_crawler(md, robots_max_bytes=1_000)
    crawler.submit(home)
    await crawler.run()
    assert md.page_by_url(site.url("a.test", "/no")).reason == "robots.txt disallows"
    assert md.page_by_url(site.url("a.test", "/yes")).page_type is PageType.HTML


async def test_a_dependency_redirect_is_followed_even_to_a_known_url(site, md):
    site.add("a.test", "/old.dtd", Page(b"", 301, headers={"Location": "/new.dtd"}))
    site.add("a.test", "/new.dtd", Page(b"<!ELEMENT a ANY>", 200, "application/xml-dtd"))
    crawler = make_crawler(md)
    crawler.seen.add(site.url("a.test", "/new.dtd"))  # fetched once already, say
    assert crawler.request(site.url("a.test", "/old.dtd"), referrer_id=None)
    await crawler.run()
    assert md.page_by_url(site.url("a.test", "/new.dtd")).page_type is PageType.DTD


async def test_html_the_parser_rejects_is_recorded_as_malformed(site, md, monkeypatch):
    from lxml import etree

    from xyleme.crawler import htmlparse

    def refuse(body, parser):
        raise etree.ParserError("Document is empty")

    monkeypatch.setattr(htmlparse.etree, "fromstring", refuse)
    home = site.add("a.test", "/", Page(b"<html>\x00</html>"))
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    page = md.page_by_url(home)
    assert page.page_type is PageType.ERROR
    assert page.reason == "malformed HTML: Document is empty"


async def test_a_stop_that_races_the_start_of_a_run_is_not_lost(site, md):
    """resume then pause at once: stop() lands after run() is scheduled, before it starts."""
    crawler = make_crawler(md)
    running = asyncio.ensure_future(crawler.run(until_idle=False))
    crawler.stop()
    await asyncio.wait_for(running, timeout=10)
    # the stop was answered: the next run crawls again until stopped
    home = site.html("a.test", "/", [])
    assert crawler.submit(home)
    stats = await asyncio.wait_for(crawler.run(), timeout=30)
    assert stats["pages"] == 1


DEPENDENCY_FAILURES = {
    "/gone.dtd": ({}, "http 404"),
    "/private/robots.dtd": ({}, "robots.txt disallows"),
    "/slow.dtd": ({"read_timeout": 0.2, "total_timeout": 0.3}, "timeout"),
    "/big.dtd": ({"max_body_bytes": 1_000}, "1000"),
    "/denied/scope.dtd": ({}, "deny"),
}


@pytest.mark.parametrize("path", list(DEPENDENCY_FAILURES))
async def test_a_dependency_that_cannot_be_had_is_reported_to_the_loader(site, md, path):
    """Whatever keeps a DTD the loader asked for (from its worker thread, mid-load) from
    being had, ``dependency_failed`` hears of it with the reason, so the documents waiting
    on it are kept not validated at once instead of waiting for the dependency timeout."""
    settings, reason = DEPENDENCY_FAILURES[path]
    robots = b"User-agent: *\nDisallow: /private/"
    site.add("a.test", "/robots.txt", Page(robots, 200, "text/plain"))
    site.add("a.test", "/doc.xml", Page(b'<!DOCTYPE d SYSTEM "x.dtd"><d/>', 200, "application/xml"))
    site.add("a.test", "/slow.dtd", Page(b"<!ELEMENT d ANY>", 200, "application/xml-dtd", delay=2))
    site.add("a.test", "/big.dtd", Page(b"<!-- -->" * 500, 200, "application/xml-dtd"))
    dependency = site.url("a.test", path)

    class AskingSink(RecordingSink):
        def load(self, url_id, url, body, headers, fetched_at):
            if url.endswith("/doc.xml"):
                crawler.request(dependency, url_id)  # as the loader does, from its thread
            return super().load(url_id, url, body, headers, fetched_at)

    sink = AskingSink()
    scope = Scope(["domain:test:*", "deny:glob:*/denied/*"])
    crawler = make_crawler(md, scope=scope, sink=sink, **settings)
    crawler.submit(site.url("a.test", "/doc.xml"))
    await asyncio.wait_for(crawler.run(), 20)
    assert [(url, url_id) for url_id, url, _ in sink.failed] == [
        (dependency, md.id_for(dependency, create=False))
    ]
    assert reason in sink.failed[0][2].lower()
