"""The daemon on a small simulated web, its jobs driven by a manual clock, for a few days."""

import numpy as np
import pytest
import pytest_asyncio

from metadata import PAGE_TYPE_CODE, LoadStatus, ManualClock, Metadata, PageType
from tests.daemon_fixtures import make_repository
from xyleme.commands import RepositoryTarget
from xyleme.config import Config
from xyleme.daemon import Daemon
from xyleme.jobs import RecheckRequest, queue_unread
from xyleme.simweb import DOMAIN, SimWebServer, SimWebSettings

DAY = 86_400.0
G = 120.0
DAYS = 8
STEPS = 8
"""Steps of the manual clock per day: the daemon's release job, RELEASES_PER_UNIT coarser."""


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def run(tmp_path_factory):
    """The daemon after reading the web once and running DAYS refresh passes (once for all
    the tests of this module: they only read it)."""
    # without faults: the spider trap would keep adding pages and dilute G (tested elsewhere)
    settings = SimWebSettings(hosts=3, pages=240, seed=8).without_faults()
    clock = ManualClock(settings.epoch)
    repo = make_repository(tmp_path_factory.mktemp("e2e") / "repo")
    config = (
        Config()
        .replace("bandwidth", G=G, theta=0.1)
        .replace("daemon", scope=[DOMAIN])
        .replace("crawler", min_delay=0.0, max_crawl_delay=0.0, per_host_concurrency=4)
    )
    async with SimWebServer(settings, clock) as web:
        with Metadata.open(repo / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(repo, config, clock=clock, resolver=web.resolver())
        daemon.open()
        try:
            queue_unread(daemon.md, daemon.crawler)
            await daemon.crawler.run()  # the first read of the web, at the epoch
            read_once = daemon.md.count_by_type()
            for _ in range(DAYS):
                await daemon.refresh.run()
                await daemon.crawler.run()
                for _ in range(STEPS):  # the unit's refreshes, each released at its moment
                    clock.advance(DAY / STEPS)
                    await daemon.refresh.release()
                    await daemon.crawler.run()
            await daemon.ranking.run()
            yield daemon, read_once
        finally:
            daemon.close()


async def test_the_web_is_read_and_xml_loaded(run):
    daemon, read_once = run
    assert read_once[PageType.HTML] > 100 and read_once[PageType.XML] > 20
    assert daemon.crawler.lane.loaded >= read_once[PageType.XML]  # first versions, then changes
    view = daemon.md.refresh_view()
    xml = view["id"][view["type"] == PAGE_TYPE_CODE[PageType.XML]].tolist()
    statuses = [daemon.md.status(url_id) for url_id in xml]
    loaded = [status for status in statuses if status and status[0] is LoadStatus.LOADED]
    assert len(loaded) > 0.8 * len(xml)  # the rest wait for a DTD or failed validation
    assert (daemon.repository / "documents").exists()


async def test_refreshes_come_at_about_g_per_unit(run):
    daemon, _ = run
    g_r = G * 0.9
    # each pass records the refreshes fetched since the one before: the first has none
    fetched = daemon.refresh.refreshes_per_unit[1:]
    assert 0.75 * g_r <= np.mean(fetched) <= 1.25 * g_r, daemon.refresh.refreshes_per_unit


async def test_obsolescence_stays_near_the_optimum(run):
    """The time-averaged obsolescence of the second half against Ω(G): 1.00 here (1.00–1.11
    over simulated webs of seeds 1–6 and 8–11); 1.98 when every refresh waited for the daily
    pass. With 240 pages one page whose λ estimate leaps inside the window (three changes
    seen within minutes of exposure) can double it: seed 7 gives 2.09 since the censored
    eq. 10 counts the first access as half a change, and seed 11 gave 1.75 before."""
    daemon, _ = run
    late = daemon.refresh.obsolescence_history[DAYS // 2 :]
    ratio = np.mean([o for _, o, _ in late]) / np.mean([omega for _, _, omega in late])
    assert 0.85 < ratio < 1.25, daemon.refresh.obsolescence_history


async def test_change_rates_and_opic_are_stored(run):
    daemon, _ = run
    ids, rates = daemon.md.scores("change_rate")
    assert len(ids) > 50 and np.all(rates >= 0)
    daemon.checkpoints.write()
    ids, history = daemon.md.scores("opic_importance")
    assert len(ids) > 100 and history.sum() == pytest.approx(1.0, abs=0.05)


async def test_rankings_are_computed_for_every_page(run):
    daemon, _ = run
    ids, importance = daemon.md.scores("importance")
    with daemon.md.link_matrix() as matrix:  # every page that is or may be a document
        assert ids.tolist() == matrix.ids.tolist()
        xml = matrix.types == PAGE_TYPE_CODE[PageType.XML]
    assert importance.sum() == pytest.approx(1.0, rel=1e-6)
    _, interest = daemon.md.scores("interest")
    assert len(interest) == len(ids) and np.all(interest[xml] > 0)  # E' seeds the XML pages
    assert daemon.ranking.last == daemon.clock.now()


async def test_the_sitemaps_robots_txt_names_are_read(run):
    daemon, _ = run
    view = daemon.md.refresh_view()
    read = view["id"][view["type"] == PAGE_TYPE_CODE[PageType.XML]].tolist()
    sitemaps = [url for url in daemon.md.urls_of(read) if url.endswith("/sitemap.xml")]
    assert sitemaps  # http://siteN.simweb.test/sitemap.xml, named only in robots.txt


async def test_a_recheck_runs_in_the_background_on_the_daemons_crawler(run):
    """Last in this module: the re-check records its verdicts."""
    daemon, _ = run
    request = RecheckRequest(strategy="pa_pm", sample=10, budget=30, method="get")
    refused = await daemon.control.recheck(request.as_args())
    assert not refused.ok and "paused" in refused.message  # its crawler is not fetching
    daemon.workers.start()
    try:
        answer = await daemon.control.recheck(request.as_args())
        assert answer.ok and answer.data["started"] and answer.data["planned"] == 30
        again = await daemon.control.recheck(request.as_args())
        assert not again.ok and "already running" in again.message
        await daemon.rechecks.task
        status = daemon.live_status()["recheck"]
        assert status["state"] == "done" and status["fetches"] == 30
        assert status["alive"] + status["dead"] + status["unknown"] == 30
        assert status["alive"] >= 25  # a web without faults, re-read a moment ago
        unbounded = await daemon.control.recheck(RecheckRequest(strategy="i").as_args())
        assert unbounded.ok
        await daemon.set_paused(True)  # stops the re-check with the fetching
        assert daemon.rechecks.task.done() and daemon.rechecks.status["state"] == "cancelled"
    finally:
        await daemon.workers.stop()
