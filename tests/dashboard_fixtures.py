"""A small repository made by a short crawl of the simulated web, for the dashboard's tests.

The crawler (Xyro) reads a :class:`SimWebServer` on 127.0.0.1 from its home pages, hands XML
to the loader (which asks it for DTDs and entities), and OPIC is fed by every committed
fetch, as in the daemon. Then, a simulated day at a time on a manual clock, every known page
is submitted again at the refresh level, so pages gather observations marked changed and
unchanged. Finally the ranking module ranks the repository and OPIC checkpoints its scores;
the refresh module estimates λ from the observations itself, when the dashboard asks.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from loader import Loader
from metadata import Metadata
from metadata.clock import ManualClock
from ranking.opic import OPIC
from xyleme import signals
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope
from xyleme.jobs.opic import FetchListener
from xyleme.jobs.ranking import rank_repository
from xyleme.simweb import FaultSettings, SimWebServer, SimWebSettings

DAY = 86_400.0
WEB = SimWebSettings(
    hosts=3,
    pages=90,
    seed=11,
    faults=FaultSettings(
        slow_fraction=0.0,
        oversize_fraction=0.0,
        gzip_bomb=False,
        redirect_loop=False,
        robots_timeout_fraction=0.0,
        spider_trap_hosts=0,
        dying_fraction=0.1,
        mean_lifetime_days=3.0,
    ),
)
CRAWLER = CrawlerSettings(
    min_delay=0.0,
    max_crawl_delay=0.0,
    concurrency=16,
    per_host_concurrency=4,
    write_interval=0.01,
)
CONFIG = "[clock]\ntime_unit = 86400.0\n\n[bandwidth]\nG = 40.0\ntheta = 0.1\n"


class TickingClock(ManualClock):
    """A manual clock that also moves a millisecond at every reading, as real time would: a
    page read twice in one round (as a link and as a DTD) is read at two instants."""

    def now(self) -> float:
        return self.advance(0.001)


@dataclass
class RunSummary:
    """What the run did, for tests that check the dashboard against it."""

    rounds: int
    fetches: int
    end: float


async def short_simweb_run(repo_dir: Path, rounds: int = 5) -> RunSummary:
    """Fill ``repo_dir`` (created here) by a crawl and ``rounds - 1`` daily refresh rounds."""
    repo_dir.mkdir(parents=True, exist_ok=True)
    (repo_dir / "xyleme.toml").write_text(CONFIG)
    clock = TickingClock(WEB.epoch)
    opic = OPIC()
    fetches = 0
    async with SimWebServer(WEB, clock) as server:
        with Metadata.create(repo_dir / "metadata.db", clock=clock) as md:
            crawler = Crawler(
                md,
                CRAWLER,
                Scope(domains=frozenset({"simweb.test"})),
                clock=clock,
                resolver=server.resolver(),
            )
            loader = Loader(repo_dir / "documents", md, crawler, clock)
            crawler.sink = loader
            credit = FetchListener(opic, md)
            crawler.signals.connect(signals.page_fetched, lambda event: credit(event.result))
            for url in server.seed_urls:
                crawler.submit(url)
            try:
                fetches += (await crawler.run())["pages"]
                for _ in range(rounds - 1):
                    clock.advance(DAY)
                    for url_id in range(1, md.max_url_id() + 1):
                        crawler.submit(url_id, Level.REFRESH)
                    fetches += (await crawler.run())["pages"]
            finally:
                loader.close()
            opic.checkpoint(md)
            rank_repository(md, repo_dir / "ranking")
    return RunSummary(rounds, fetches, clock.now())


def built_repository(tmp_path_factory, name: str) -> Path:
    """A repository filled by :func:`short_simweb_run` in a new temporary folder (for the
    module-scoped ``repo`` fixtures of the dashboard's tests)."""
    path = tmp_path_factory.mktemp(name) / "repo"
    asyncio.run(short_simweb_run(path))
    return path
