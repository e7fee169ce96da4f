"""The crawler against small loopback sites: links, robots, politeness, priorities, 304s.

Every test starts its own virtual-host site on 127.0.0.1 (tests/crawler_site.py); names
under ``.test`` resolve to it, anything else fails like DNS would.
"""

from __future__ import annotations

import hashlib
import itertools

from metadata import PageType
from tests.crawler_fixtures import children_urls, listen, make_crawler
from tests.crawler_site import Page
from xyleme import signals
from xyleme.crawler import Level

# ---------------------------------------------------------------------- link graph


async def test_crawl_equals_the_link_graph_of_robots_allowed_pages(site, md):
    site.add(
        "a.test", "/robots.txt", Page(b"User-agent: *\nDisallow: /private/", 200, "text/plain")
    )
    b_page = site.url("b.test", "/y.html")
    home = site.html("a.test", "/", ["/x.html", b_page, "/private/p.html", "x.html#frag"])
    site.html("a.test", "/x.html", ["/", "./sub/../x.html"])
    site.html("a.test", "/private/p.html", ["/never-reached.html"])
    site.html("b.test", "/y.html", [site.url("a.test", "/x.html")])
    crawler = make_crawler(md)
    assert crawler.submit(home)
    stats = await crawler.run()

    x_page, private = site.url("a.test", "/x.html"), site.url("a.test", "/private/p.html")
    assert children_urls(md, home) == sorted([x_page, b_page, private])
    assert children_urls(md, x_page) == sorted([home, x_page])
    assert children_urls(md, b_page) == [x_page]
    assert md.page_by_url(private).reason == "robots.txt disallows"
    assert md.page_by_url(private).page_type is PageType.ERROR
    assert not any(hit.path.startswith("/private/") for hit in site.hits)
    home_record = md.page_by_url(home)
    assert home_record.page_type is PageType.HTML and home_record.status == 200
    assert home_record.md5 == hashlib.md5(site.pages[("a.test", "/")].body).hexdigest()
    assert stats["by_type"] == {"ERROR": 1, "HTML": 3}
    assert stats["robots_fetches"] == 2
    assert all("xyleme-xyro" in hit.headers["User-Agent"] for hit in site.hits)


async def test_out_of_scope_and_unwanted_links_are_recorded_never_fetched(site, md):
    home = site.html(
        "a.test",
        "/",
        ["http://elsewhere.example/", "/photo.jpg", "/deep/" + "a/" * 30, "/ok.html"],
    )
    site.html("a.test", "/ok.html", [])
    crawler = make_crawler(md, max_path_segments=10)
    crawler.submit(home)
    await crawler.run()

    home_id = md.page_by_url(home).url_id
    rejected = {link.url: link for link in md.rejected()}
    assert rejected["http://elsewhere.example/"].reason.startswith("out of scope")
    assert rejected["http://elsewhere.example/"].referrer == home_id
    assert rejected[site.url("a.test", "/photo.jpg")].reason.startswith("suffix .jpg")
    assert any(link.reason.startswith("spider trap") for link in rejected.values())
    assert children_urls(md, home) == [site.url("a.test", "/ok.html")]
    assert "elsewhere.example" not in crawler.fetcher._resolver.lookups  # never resolved
    assert {hit.path for hit in site.hits} == {"/robots.txt", "/", "/ok.html"}


async def test_scouting_stops_at_the_host_page_budget_and_depth(site, md):
    pages = [site.html("a.test", f"/{n}.html", [f"/{n + 1}.html"]) for n in range(10)]
    crawler = make_crawler(md, host_page_budget=3)
    crawler.submit(pages[0])
    await crawler.run()
    fetched = [hit.path for hit in site.hits if hit.path != "/robots.txt"]
    assert fetched == ["/0.html", "/1.html", "/2.html"]  # three pages read, the seed's included
    assert "host page budget of 3 pages read" in md.rejected()[0].reason

    md2_site = make_crawler(md, max_scout_depth=1)
    site.hits.clear()
    md2_site.submit(pages[5])
    await md2_site.run()
    assert [hit.path for hit in site.hits if hit.path != "/robots.txt"] == ["/5.html", "/6.html"]


# ---------------------------------------------------------------------- robots.txt


async def test_robots_5xx_disallows_the_host_and_records_why(site, md):
    site.add("a.test", "/robots.txt", Page(b"", 503, "text/plain"))
    home = site.html("a.test", "/", [])
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    page = md.page_by_url(home)
    assert page.page_type is PageType.ERROR
    assert "robots.txt unreachable (HTTP 503)" in page.reason
    assert [hit.path for hit in site.hits] == ["/robots.txt"]


async def test_redirected_robots_is_cached_for_the_asking_host(site, md):
    site.add("a.test", "/robots.txt", Page(b"", 301, headers={"Location": "/elsewhere.txt"}))
    site.add("a.test", "/elsewhere.txt", Page(b"User-agent: *\nDisallow: /no", 200, "text/plain"))
    home = site.html("a.test", "/", ["/no.html", "/yes.html"])
    site.html("a.test", "/yes.html", [])
    site.html("a.test", "/no.html", [])
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    assert md.page_by_url(site.url("a.test", "/no.html")).reason == "robots.txt disallows"
    assert md.page_by_url(site.url("a.test", "/yes.html")).page_type is PageType.HTML
    assert [hit.path for hit in site.hits].count("/robots.txt") == 1


# ---------------------------------------------------------------------- politeness


async def test_requests_to_one_host_keep_the_delay_and_crawl_delay(site, md):
    site.add("a.test", "/robots.txt", Page(b"User-agent: *\nCrawl-delay: 0.3", 200, "text/plain"))
    home = site.html("a.test", "/", [f"/{n}.html" for n in range(3)])
    for n in range(3):
        site.html("a.test", f"/{n}.html", [])
    other = site.html("b.test", "/", [f"/{n}.html" for n in range(3)])
    for n in range(3):
        site.html("b.test", f"/{n}.html", [])
    crawler = make_crawler(md, min_delay=0.15, per_host_concurrency=1, max_crawl_delay=10.0)
    crawler.submit(home)
    crawler.submit(other)
    await crawler.run()
    for host, delay in (("a.test", 0.3), ("b.test", 0.15)):
        times = [hit.at for hit in site.hits_to(host)]
        assert len(times) == 5
        gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
        assert min(gaps) >= delay * 0.95, (host, gaps)  # 5% for timer granularity


async def test_retry_after_backs_the_host_off_then_the_page_is_fetched(site, md):
    answers = iter([Page(b"", 429, headers={"Retry-After": "1"}), Page(b"<p>ok</p>")])
    home = site.add("a.test", "/", lambda request: next(answers))
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    hits = [hit.at for hit in site.hits_to("a.test") if hit.path == "/"]
    assert len(hits) == 2 and hits[1] - hits[0] >= 0.95
    assert md.page_by_url(home).page_type is PageType.HTML


async def test_persistent_503_ends_as_error_with_its_reason(site, md):
    home = site.add("a.test", "/", Page(b"", 503, headers={"Retry-After": "0"}))
    crawler = make_crawler(md, max_retries=1)
    crawler.submit(home)
    await crawler.run()
    page = md.page_by_url(home)
    assert page.page_type is PageType.ERROR and page.reason.startswith("HTTP 503 after 2 tries")


async def test_a_slow_host_does_not_stall_the_others(site, md):
    slow = site.add("slow.test", "/", Page(b"<p>slow</p>", delay=2.5))
    fast = site.html("fast.test", "/", [f"/{n}.html" for n in range(6)])
    for n in range(6):
        site.html("fast.test", f"/{n}.html", [])
    crawler = make_crawler(md, per_host_concurrency=1)
    crawler.submit(slow)
    crawler.submit(fast)
    await crawler.run()
    slow_started = next(hit.at for hit in site.hits_to("slow.test") if hit.path == "/")
    fast_done = max(hit.at for hit in site.hits_to("fast.test"))
    assert fast_done < slow_started + 2.5  # all of fast.test was read while slow.test slept


# ---------------------------------------------------------------------- priorities


async def test_priority_zero_overtakes_a_full_discovery_queue(site, md):
    site.add("a.test", "/schema.dtd", Page(b"<!ELEMENT a ANY>", 200, "application/xml-dtd"))
    links = [f"/{n}.html" for n in range(60)]
    home = site.html("a.test", "/", links)
    for link in links:
        site.html("a.test", link, [], delay=0.005)
    crawler = make_crawler(md, concurrency=1, per_host_concurrency=1)
    asked_at: list[int] = []

    def ask_for_the_dtd(event):
        if not asked_at and len(crawler.frontier) > 30:
            asked_at.append(len(site.hits))
            crawler.request(site.url("a.test", "/schema.dtd"), event.result.url_id)

    crawler.signals.connect(signals.page_fetched, ask_for_the_dtd)
    crawler.submit(home)
    await crawler.run()
    paths = [hit.path for hit in site.hits]
    assert asked_at, "the discovery queue never filled"
    # at most the request already in flight goes before it
    assert paths.index("/schema.dtd") <= asked_at[0] + 1
    assert md.page_by_url(site.url("a.test", "/schema.dtd")).page_type is PageType.DTD


async def test_submissions_by_url_id_at_every_level(site, md):
    home = site.html("a.test", "/", [])
    url_id = md.id_for(home)
    crawler = make_crawler(md)
    assert crawler.submit(url_id, Level.REFRESH, score=2.0)
    assert not crawler.submit(url_id, Level.BACKGROUND)  # already queued more urgently
    assert crawler.frontier.sizes() == {0: 0, 1: 1, 2: 0, 3: 0, 4: 0}
    assert not crawler.submit("mailto:someone@example.com")
    assert md.rejected()[0].reason.startswith("scheme")
    await crawler.run()
    assert md.page(url_id).page_type is PageType.HTML


# ---------------------------------------------------------------------- change detection


async def test_conditional_get_304_and_md5_change_detection(site, md):
    state = {"body": b"<p>v1</p>"}

    def page(request):
        etag = '"' + hashlib.md5(state["body"]).hexdigest() + '"'
        if request.headers.get("If-None-Match") == etag:
            return Page(b"", 304, headers={"ETag": etag})
        headers = {"ETag": etag, "Last-Modified": "Mon, 12 Jan 1970 13:46:40 GMT"}
        return Page(state["body"], headers=headers)

    home = site.add("a.test", "/", page)
    crawler = make_crawler(md)
    changed = listen(crawler, signals.page_changed)
    fetched = listen(crawler, signals.page_fetched)
    crawler.submit(home)
    await crawler.run()
    url_id = md.page_by_url(home).url_id

    md.clock.advance(3600.0)
    crawler.submit(url_id, Level.REFRESH)
    await crawler.run()
    conditional = site.hits[-1].headers
    assert conditional["If-None-Match"] == md.page(url_id).etag
    assert conditional["If-Modified-Since"] == "Mon, 12 Jan 1970 13:46:40 GMT"
    record = md.page(url_id)
    assert (record.status, record.refreshes, record.unchanged_accesses) == (304, 1, 1)
    assert record.page_type is PageType.HTML
    assert [obs.changed for obs in md.observations(url_id)] == [None, False]

    state["body"] = b"<p>v2</p>"
    md.clock.advance(3600.0)
    crawler.submit(url_id, Level.REFRESH)
    await crawler.run()
    assert [obs.changed for obs in md.observations(url_id)] == [None, False, True]
    assert len(fetched) == 3 and [event.url for event in changed] == [home]
    assert changed[0].result.md5 == hashlib.md5(b"<p>v2</p>").hexdigest()


async def test_same_md5_without_validators_is_no_change(site, md):
    home = site.add("a.test", "/", Page(b"<p>same</p>"))
    crawler = make_crawler(md)
    crawler.submit(home)
    await crawler.run()
    url_id = md.page_by_url(home).url_id
    crawler.submit(url_id, Level.REFRESH)
    await crawler.run()
    assert "If-None-Match" not in site.hits[-1].headers
    assert [obs.changed for obs in md.observations(url_id)] == [None, False]
