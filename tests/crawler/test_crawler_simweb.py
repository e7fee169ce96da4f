"""The crawler against the simulated web, checked against its ground truth.

A small web served in-process on 127.0.0.1, resolved with the simweb's resolver, on a manual
clock shared by the server and the metadata (so HTTP dates and observations agree).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import deque

import numpy as np
import pytest

from metadata import ManualClock, Metadata, PageType
from xyleme import signals
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope
from xyleme.simweb import FaultSettings, GroundTruth, SimWebServer, SimWebSettings

DAY = 86_400.0
QUICK = {
    "min_delay": 0.0,
    "max_crawl_delay": 0.0,
    "concurrency": 16,
    "per_host_concurrency": 4,
    "write_interval": 0.01,
    "max_scout_depth": 1_000,
}


def simweb_crawler(md, server, clock, **crawler_settings) -> Crawler:
    """A crawler of the simulated web ``server`` serves (QUICK settings unless overridden)."""
    return Crawler(
        md,
        CrawlerSettings(**{**QUICK, **crawler_settings}),
        Scope(domains=frozenset({"simweb.test"})),
        clock=clock,
        resolver=server.resolver(),
    )


def record_starts(crawler: Crawler) -> list[tuple[str, float]]:
    """Every request the crawler starts (robots.txt included): (URL, real time)."""
    starts: list[tuple[str, float]] = []
    request = crawler.fetcher.request

    def recorded_request(url, headers=None):
        starts.append((url, time.monotonic()))
        return request(url, headers)

    crawler.fetcher.request = recorded_request
    return starts


@contextlib.asynccontextmanager
async def crawled(settings: SimWebSettings, tmp_path, clock, **crawler_settings):
    """Serve ``settings``' web and crawl it from its home pages: (server, metadata, crawler)."""
    async with SimWebServer(settings, clock) as server:
        with Metadata.create(tmp_path / "metadata.db", clock=clock) as md:
            crawler = simweb_crawler(md, server, clock, **crawler_settings)
            for url in server.seed_urls:
                crawler.submit(url)
            await crawler.run()
            yield server, md, crawler


def reachable_through_html(truth: GroundTruth, seeds: list[int], at: float) -> set[int]:
    """Pages a crawler without an XML loader reaches: links of robots-allowed HTML pages."""
    seen, queue = set(seeds), deque(seeds)
    while queue:
        page = queue.popleft()
        record = truth.page(page, at)
        if record.page_type != "HTML" or not record.robots_allowed or record.status != 200:
            continue
        for target in record.links:
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


@pytest.fixture
def clean_web():
    return SimWebSettings(hosts=4, pages=300, seed=3).without_faults()


async def test_full_crawl_equals_the_ground_truth_link_graph(clean_web, tmp_path):
    clock = ManualClock(clean_web.epoch)
    async with crawled(clean_web, tmp_path, clock) as (server, md, _):
        truth = GroundTruth(server.web)
        at = clock.now()
        seeds = [truth.page_id(url) for url in server.seed_urls]
        expected = reachable_through_html(truth, seeds, at)
        assert len(expected) > 200
        fetched = 0
        for page in expected:
            record = truth.page(page, at)
            ours = md.page_by_url(record.url)
            if not record.robots_allowed:
                assert ours.page_type is PageType.ERROR
                assert ours.reason == "robots.txt disallows"
                continue
            fetched += 1
            assert ours.page_type.value == record.page_type, record.url
            if record.page_type == "HTML":
                children = {truth.page_id(url) for url in md.urls_of(md.children(ours.url_id))}
                assert children == set(record.links), record.url
        counts = md.count_by_type()
        assert counts[PageType.HTML] + counts[PageType.XML] == fetched


async def test_refresh_observations_match_the_true_changes(clean_web, tmp_path):
    clock = ManualClock(clean_web.epoch)
    async with crawled(clean_web, tmp_path, clock) as (server, md, crawler):
        truth = GroundTruth(server.web)
        first = clock.now()
        view = md.refresh_view()
        read = view["id"][view["type"] <= 1].tolist()  # HTML and XML pages
        clock.advance(2 * DAY)
        changed_events = []
        crawler.signals.connect(signals.page_changed, changed_events.append)
        for url_id in read:
            crawler.submit(url_id, Level.REFRESH)
        stats = await crawler.run()
        assert stats["not_modified"] > 0
        changed_pages = 0
        for url_id in read:
            page = truth.page_id(md.url_of(url_id))
            truly_changed = truth.page(page, clock.now()).version != truth.page(page, first).version
            observed = md.observations(url_id)[-1]
            assert observed.changed is truly_changed, md.url_of(url_id)
            changed_pages += truly_changed
        assert 0 < changed_pages < len(read)
        assert len(changed_events) == changed_pages


async def test_every_simweb_fault_is_recorded_with_its_reason(tmp_path):
    faults = FaultSettings(
        dying_fraction=0.1,
        redirect_fraction=0.04,
        slow_fraction=0.02,
        slow_seconds=1.0,
        oversize_fraction=0.02,
        oversize_bytes=300_000,
        gzip_fraction=0.05,
        gzip_bomb_bytes=50_000_000,
        malformed_fraction=0.03,
        wrong_type_fraction=0.03,
        missing_type_fraction=0.03,
        robots_404_fraction=0.125,
        robots_500_fraction=0.125,
        robots_timeout_fraction=0.125,
        robots_timeout_seconds=1.0,
        dead_host_link_fraction=0.02,
        spider_trap_hosts=1,
    )
    web = SimWebSettings(hosts=8, pages=500, seed=11, faults=faults)
    clock = ManualClock(web.epoch + 40 * DAY)  # some pages died, some were born
    async with crawled(
        web,
        tmp_path,
        clock,
        read_timeout=0.4,
        max_body_bytes=200_000,
        max_decoded_bytes=5_000_000,
        max_scout_depth=30,
    ) as (server, md, crawler):
        truth = GroundTruth(server.web)
        at = clock.now()
        reasons: dict[str, list[str]] = {}
        for page in range(truth.page_count):
            record = truth.page(page, at)
            ours = md.page_by_url(record.url) if md.id_for(record.url, create=False) else None
            if ours is None or (ours.page_type is PageType.UNKNOWN and ours.status is None):
                continue
            host = truth.host(truth.web.structure.host_of[page])
            if host.robots in ("server_error", "timeout"):
                assert ours.page_type is PageType.ERROR
                assert "robots.txt unreachable" in ours.reason
                continue
            if not record.robots_allowed:
                continue
            kind = record.fault if record.state == "alive" else record.state
            reasons.setdefault(kind, []).append(
                f"{ours.page_type.value}:{ours.status}:{ours.reason}"
            )
        for outcome in reasons.get("dead", []) + reasons.get("unborn", []):
            assert outcome.startswith("DEAD:404:HTTP 404") or outcome.startswith("DEAD:410")
        for outcome in reasons.get("slow", []):
            assert outcome.startswith("ERROR:None:timeout")
        for outcome in reasons.get("oversize", []):
            assert "200000-byte cap" in outcome
        assert all("decompression bomb" in o for o in reasons.get("gzip_bomb", []))
        for kind in ("gzip", "malformed", "wrong_type", "missing_type", "none"):
            for outcome in reasons.get(kind, []):
                assert outcome.split(":")[0] in ("HTML", "XML"), (kind, outcome)
        redirects = ("redirect", "redirect_chain", "redirect_loop")
        for outcome in [o for kind in redirects for o in reasons.get(kind, [])]:
            assert outcome.split(":")[:2] in (["UNKNOWN", "301"], ["UNKNOWN", "302"])
        for kind in ("dead", "slow", "oversize", "gzip", "redirect", "malformed"):
            assert reasons.get(kind), f"the test web has no reachable {kind} page"
        every_url = md.urls_of(range(1, md.max_url_id() + 1))
        hops = [md.page_by_url(url) for url in every_url if "/moved/" in url or "/hop/" in url]
        assert hops and all(page.status in (200, 301, 307) for page in hops)
        loop = [md.page_by_url(url) for url in every_url if "/loop/" in url]
        if reasons.get("redirect_loop"):
            assert any("redirect loop" in (page.reason or "") for page in loop)
        unreachable_robots = [
            host for host in range(8) if truth.host(host).robots in ("server_error", "timeout")
        ]
        assert unreachable_robots, "the test web has no host with an unreachable robots.txt"
        for host in unreachable_robots:
            home = md.page_by_url(server.seed_urls[host])
            assert home.page_type is PageType.ERROR and "robots.txt unreachable" in home.reason
        gone = [md.page_by_url(url) for url in every_url if "//gone" in url]
        assert gone and all(page.page_type is PageType.DEAD for page in gone)
        assert all("DNS failure" in page.reason for page in gone)
        stats = crawler.snapshot()
        assert stats["errors"]["timeout"] >= 1 and stats["errors"]["too_large"] >= 1


async def test_politeness_gaps_respect_the_delay_and_crawl_delay(tmp_path):
    web = SimWebSettings(
        hosts=3, pages=45, seed=4, crawl_delay_host_fraction=0.5, crawl_delay_seconds=0.12
    ).without_faults()
    clock = ManualClock(web.epoch)
    async with SimWebServer(web, clock) as server:
        with Metadata.create(tmp_path / "metadata.db", clock=clock) as md:
            crawler = simweb_crawler(
                md, server, clock, min_delay=0.05, max_crawl_delay=30.0, per_host_concurrency=1
            )
            starts = record_starts(crawler)
            for url in server.seed_urls:
                crawler.submit(url)
            await crawler.run()
            truth = GroundTruth(server.web)
            delays = {truth.host(h).host: truth.host(h).crawl_delay for h in range(3)}
    assert any(delays.values()), "the test web has no host with a Crawl-delay"
    for host, delay in delays.items():
        times = [at for url, at in starts if url.split("/")[2] == host]
        gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
        wanted = max(0.05, delay or 0.0)
        assert len(times) > 3 and min(gaps) >= wanted, (host, wanted, min(gaps))


async def test_cancellation_mid_crawl_leaves_a_consistent_database(clean_web, tmp_path):
    clock = ManualClock(clean_web.epoch)
    async with SimWebServer(clean_web, clock) as server:
        with Metadata.create(tmp_path / "metadata.db", clock=clock) as md:
            crawler = simweb_crawler(md, server, clock, concurrency=4, shutdown_deadline=0.2)
            fetched = []
            crawler.signals.connect(signals.page_fetched, fetched.append)
            for url in server.seed_urls:
                crawler.submit(url)
            task = asyncio.create_task(crawler.run())
            for _ in range(6000):  # at least 30 s: a deadline, not an expected duration
                if len(fetched) >= 40 or task.done():
                    break
                await asyncio.sleep(0.005)
            else:
                pytest.fail(f"{len(fetched)} pages fetched in 30 s, 40 wanted")
            assert not task.done(), "the crawl ended before it could be cancelled"
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert crawler.fetcher._session is None  # the session was closed
        with Metadata.open(tmp_path / "metadata.db", readonly=True) as reader:
            truth = GroundTruth(server.web)
            view = reader.refresh_view()
            read = view["id"][~np.isnan(view["last_access"])].tolist()
            assert 40 <= len(read) < 300
            for url_id in read:
                page = reader.page(url_id)
                if page.page_type is PageType.HTML:  # recorded whole: record, links, observation
                    true_links = truth.page(truth.page_id(page.url), clock.now()).links
                    children = reader.urls_of(reader.children(url_id))
                    assert {truth.page_id(url) for url in children} == set(true_links)
                    assert page.md5 is not None and len(page.observations) == 1


async def test_a_dtd_request_overtakes_a_full_discovery_queue(tmp_path):
    web = SimWebSettings(hosts=1, pages=120, seed=6).without_faults()
    clock = ManualClock(web.epoch)
    asked_at: list[int] = []
    async with SimWebServer(web, clock) as server:
        with Metadata.create(tmp_path / "metadata.db", clock=clock) as md:
            crawler = simweb_crawler(md, server, clock, concurrency=1, per_host_concurrency=1)
            starts = record_starts(crawler)
            dtd = server.seed_urls[0] + "dtd/catalog.dtd"

            def ask_for_the_dtd(event):
                if not asked_at and crawler.frontier.sizes()[Level.SCOUTING] > 20:
                    asked_at.append(len(starts))
                    crawler.request(dtd, event.result.url_id)

            crawler.signals.connect(signals.page_fetched, ask_for_the_dtd)
            crawler.submit(server.seed_urls[0])
            await crawler.run()
            assert asked_at, "the discovery queue never filled"
            started = [url for url, _ in starts]
            assert started.index(dtd) <= asked_at[0]  # the very next request started
            assert md.page_by_url(dtd).page_type is PageType.DTD


async def test_with_the_loader_xml_is_loaded_dependencies_fetched_and_its_links_crawled(
    clean_web, tmp_path
):
    from loader import Loader
    from metadata import LoadStatus

    clock = ManualClock(clean_web.epoch)
    async with SimWebServer(clean_web, clock) as server:
        with Metadata.create(tmp_path / "metadata.db", clock=clock) as md:
            crawler = simweb_crawler(md, server, clock)
            crawler.sink = Loader(tmp_path / "documents", md, crawler, clock)
            for url in server.seed_urls:
                crawler.submit(url)
            await crawler.run()
            truth = GroundTruth(server.web)
            at = clock.now()
            seeds = [truth.page_id(url) for url in server.seed_urls]
            reachable, queue = set(seeds), deque(seeds)
            while queue:  # through HTML and XML links alike, now that the loader reads XML
                record = truth.page(queue.popleft(), at)
                if record.robots_allowed and record.status == 200:
                    for target in set(record.links) - reachable:
                        reachable.add(target)
                        queue.append(target)
            xml_pages = 0
            for page in reachable:
                record = truth.page(page, at)
                if not record.robots_allowed or record.page_type != "XML":
                    continue
                xml_pages += 1
                ours = md.page_by_url(record.url)
                status = md.status(ours.url_id)
                assert status is not None and status[0] in (LoadStatus.LOADED, LoadStatus.FAILED)
                children = {truth.page_id(url) for url in md.urls_of(md.children(ours.url_id))}
                assert set(record.links) <= children, record.url  # a feed also links to itself
            assert xml_pages > 20
            assert md.count_by_type()[PageType.DTD] >= 1  # asked by the loader, level 0
