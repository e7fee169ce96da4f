"""The re-check through the crawler's probe on an aged simulated web: crawl it at its epoch,
age it (advance the clock), re-check, compare with the ground truth."""

import asyncio
import json
import sys
import time
from asyncio.subprocess import PIPE

import numpy as np
import pytest

from metadata import ManualClock, Metadata, PageType
from ranking.liverank import LiveRankSettings, cost, make_liverank
from xyleme.crawler import Crawler, CrawlerSettings, Scope, Verdict, host_key
from xyleme.crawler.probe import CrawlerProbe, looks_like_soft_404
from xyleme.jobs import load_snapshot, recheck
from xyleme.simweb import DAY, GroundTruth, SimWeb, SimWebServer, SimWebSettings
from xyleme.simweb.aging import AgingModel, Fate, age_graph, aging_lifecycle, simweb_graph

AGED_DAYS = 30
SETTINGS = CrawlerSettings(concurrency=16, min_delay=0.0, per_host_concurrency=2)
SCOPE = Scope(domains=frozenset({"simweb.test"}))
MODEL = AgingModel(seed=2, host_death=0.3, soft_404=0.5)


@pytest.fixture(scope="module")
def web():
    settings = SimWebSettings(
        hosts=6, pages=300, seed=4, crawl_delay_host_fraction=0.0
    ).without_faults()  # no Crawl-delay: the test does not wait on politeness
    return SimWeb(settings, lifecycle=aging_lifecycle(MODEL, over_days=AGED_DAYS))


@pytest.fixture(scope="module")
def fates(web):
    return age_graph(simweb_graph(web.structure), MODEL).fate


@pytest.fixture
async def crawled(web, tmp_path):
    """A repository crawled at the epoch, and a server whose clock then jumps past the aging."""
    clock = ManualClock(web.settings.epoch)
    async with SimWebServer(web, clock) as server:
        with Metadata.create(tmp_path / "metadata.db") as md:
            crawler = Crawler(md, SETTINGS, SCOPE, clock=clock, resolver=server.resolver())
            for seed in server.seed_urls:
                crawler.submit(seed)
            await crawler.run()
            clock.set(web.settings.epoch + AGED_DAYS * DAY + 1)
            yield server, md, clock


def page_of(web, url):
    host, _, path = url.removeprefix("http://").partition("/")
    if path == "":
        return int(web.structure.home[web.host_index[host]])
    return web.page_by_path["/" + path]


async def test_recheck_matches_the_ground_truth(web, crawled):
    server, md, clock = crawled
    snapshot = load_snapshot(md)
    read = {u: md.page(u).page_type for u in snapshot.url_ids.tolist()}
    session = make_liverank(snapshot.graph, LiveRankSettings(strategy="pa_pm", sample=10))
    async with CrawlerProbe(
        md, SETTINGS, SCOPE, clock=clock, resolver=server.resolver(), method="get"
    ) as probe:
        report = await recheck(session, snapshot.url_ids, probe, concurrency=8)
    assert report.complete and sorted(report.url_ids) == sorted(snapshot.url_ids.tolist())
    truth = GroundTruth(web).alive(clock.now())
    urls = md.urls_of(report.url_ids)
    checked = 0
    for url_id, url, answer in zip(report.url_ids, urls, report.answers, strict=True):
        if read[url_id] not in (PageType.HTML, PageType.XML):
            continue  # robots-disallowed in the crawl: not tested then, not now
        checked += 1
        assert (answer.verdict is Verdict.ALIVE) == truth[page_of(web, url)], (url, answer)
        stored = md.page(url_id)
        if answer.verdict is Verdict.DEAD:
            assert stored.page_type is PageType.DEAD and stored.reason == answer.reason
        else:
            assert stored.page_type in (PageType.HTML, PageType.XML)
    assert checked > 150
    # cost of the run's own order (§2.1), from the verdicts
    order = np.arange(len(report.url_ids))
    assert cost(order, report.alive, 0.5) >= 1.0


async def test_dead_pages_carry_their_reason(web, fates, crawled):
    server, md, clock = crawled
    expected = {
        Fate.GONE: ("HTTP 404", "get"),
        Fate.HOST_DOWN: ("DNS failure", "head"),
        Fate.SOFT_404: ("soft 404", "get"),
    }
    for fate, (reason, method) in expected.items():
        page = int(np.flatnonzero(fates == fate)[0])
        url_id = md.id_for(web.url(page), create=False)
        async with CrawlerProbe(
            md, SETTINGS, SCOPE, clock=clock, resolver=server.resolver(), method=method
        ) as probe:
            answer = await probe.probe(url_id)
        assert answer.verdict is Verdict.DEAD and reason in answer.reason, (fate, answer)
        assert md.page(url_id).page_type is PageType.DEAD
        assert reason in md.page(url_id).reason


async def test_head_cannot_see_a_soft_404_and_sends_no_get(web, fates, crawled):
    server, md, clock = crawled
    page = int(np.flatnonzero(fates == Fate.SOFT_404)[0])
    url_id = md.id_for(web.url(page), create=False)
    before = server.requests_served
    async with CrawlerProbe(
        md, SETTINGS, SCOPE, clock=clock, resolver=server.resolver(), method="head"
    ) as probe:
        answer = await probe.probe(url_id)
        assert answer.verdict is Verdict.ALIVE and "HEAD" in answer.reason
        assert probe.fetches == 2  # robots.txt, then one HEAD
    assert server.requests_served - before == 2


async def test_a_probe_sharing_a_running_crawler_uses_its_session_robots_and_slots(
    web, fates, crawled
):
    server, md, clock = crawled
    crawler = Crawler(md, SETTINGS, SCOPE, clock=clock, resolver=server.resolver())
    await crawler.fetcher.open()  # as its run does first
    running = asyncio.create_task(crawler.run(until_idle=False))
    url = web.url(int(np.flatnonzero(fates == Fate.GONE)[0]))
    try:
        async with CrawlerProbe.sharing(crawler, method="head") as probe:
            assert probe.fetcher is crawler.fetcher and probe.frontier is crawler.frontier
            answer = await probe.probe(md.id_for(url, create=False))
        assert answer.verdict is Verdict.DEAD and answer.reason == "HTTP 404"
        key = host_key(url)
        assert crawler.robots.lookup(key, time.monotonic()) is not None  # learnt for both
        slot = crawler.frontier.slot(key)
        assert slot.active == 0 and slot.last_used > 0  # the probe took and freed its slot
        async with crawler.fetcher.request(url, method="HEAD") as response:
            assert response.status == 404  # the probe left the crawler's session open
    finally:
        crawler.stop()
        await running


def test_soft_404_rule_reads_titles_and_headings_only():
    assert looks_like_soft_404(b"<title>Sorry - this page no longer exists</title>")
    assert looks_like_soft_404(b"<p>item not found in stock</p>") is None
    assert looks_like_soft_404(b"<title>Shop</title>") is None


async def run_cli(*args):
    """The CLI in a child process; awaited, so this loop keeps serving the simulated web."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "xyleme", *args, stdout=PIPE, stderr=PIPE
    )
    out, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode == 0, err.decode()
    return out.decode()


async def test_cli_recheck_reports_progress_and_summary(web, crawled, tmp_path):
    server, _, _ = crawled
    base = [
        "--repo",
        str(tmp_path),
        "recheck",
        "--simweb-port",
        str(server.port),
        "--delay",
        "0",
    ]
    lines = (await run_cli(*base, "--strategy", "ai", "--budget", "40")).splitlines()
    assert lines[0].startswith("fetches ") and "per fetch" in lines[0]
    summary = next(line for line in lines if line.startswith("ai: "))
    assert "40 of" in summary and "budget spent" in summary
    result = json.loads(await run_cli(*base, "--budget", "10", "--method", "get", "--json"))
    assert result["fetches"] == 10 and result["alive"] + result["dead"] + result["unknown"] == 10
    assert not result["complete"] and result["method"] == "get"
