"""``xyleme demo``: the daemon keeping a warehouse of the simulated web fresh, on fast time.

The demo is the README's first command, so it must work unattended, from any folder, and
end by itself in about two minutes:

1. it generates a simulated web (:mod:`xyleme.simweb`) and measures the crawler's capacity on
   it (pages per real second, a few seconds against a frozen copy served by a child process);
2. it sizes the bandwidth G from the web (every page read about every ``CYCLE_DAYS`` on
   average, so even a short run shows refresh cycles) and the clock speed from the capacity
   (G is a ``REFRESH_SHARE`` of what the crawler can read in a simulated day), writes them
   into the repository's ``xyleme.toml`` and prints them: a longer ``--days`` runs longer at
   the same pace, and shows more cycles, ranking passes and plot points, never fewer;
3. it serves the web in a child process on a free loopback port, and runs a
   :class:`~xyleme.daemon.Daemon` on the same simulated clock for ``days`` simulated days,
   showing progress (a rich live view on a terminal, plain lines otherwise), and starts a
   LiveRank re-check of the repository at ``RECHECK_AT`` of the run;
4. it ends (or is interrupted with Ctrl-C) with a summary scored against the simulated web's
   ground truth and plots (:mod:`xyleme.demo_report`), and the commands to explore the
   repository it leaves.

The folder the demo works in carries a marker (``DEMO_MARKER``) from before anything else is
written, so a folder an interrupted demo left is recognised: it is refused with a message, or
started over with ``fresh`` (:func:`prepare_folder`); a folder the demo did not make is never
emptied.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metadata import Metadata, MetadataSettings, PageType
from xyleme.commands import RepositoryTarget
from xyleme.config import Config, as_toml
from xyleme.crawler import Crawler, CrawlerSettings, Scope
from xyleme.daemon import Daemon
from xyleme.dashboard import run_with_dashboard
from xyleme.jobs import RecheckRequest
from xyleme.simweb import DOMAIN, FaultSettings, SimWebProcess, SimWebSettings

log = logging.getLogger(__name__)

DAY = 86_400.0
CYCLE_DAYS = 2.0
"""G reads as many pages per this many days as the web holds: the mean refresh interval."""
REFRESH_SHARE = 0.6
"""Share of the measured capacity per day given to the policy as G (headroom for discovery,
scouting, the loader and the ranking passes); the web is read in the first
REFRESH_SHARE·CYCLE_DAYS days."""
MAX_SPEED = 86_400.0
MAX_DAY_SECONDS = 6.0
"""Real seconds a simulated day lasts at most: the default 18 days in about two minutes. A
crawler too slow for G at that pace (a loaded machine) gets a smaller G, so longer cycles."""
RANK_EVERY_DAYS = 2.0
"""Days between two ranking passes (a third of a shorter run)."""
RECHECK_AT = 0.6
"""Share of the run after which the LiveRank re-check starts."""
RECHECK_SHARE = 0.2
"""Share of the web's pages the re-check probes (its budget)."""
CALIBRATION_SECONDS = 2.0
SIMWEB_CACHE_BYTES = 4 << 20
"""The simulated web's body cache: its default (256 MiB) would be most of the demo's memory."""
OVERSIZE_BYTES = 2 << 20
GZIP_BOMB_BYTES = 256 << 20
"""The demo's over-size pages and gzip bomb, past the demo crawler's caps (``DEMO_CRAWLER``)
as the defaults are past the default caps, but each costing a few MiB, not tens."""
DEMO_CACHE_MB = 4
"""SQLite's page cache per connection: the demo's metadata is a few MiB."""
DEMO_MARKER = "demo.json"
"""The file that says a folder is the demo's, with the plan and how far the run got."""

DEMO_CRAWLER = {
    # the simulated web is ours and on loopback: no politeness delay between requests
    "min_delay": 0.0,
    "max_crawl_delay": 0.0,
    "per_host_concurrency": 4,
    "concurrency": 64,
    "shutdown_deadline": 2.0,
    # caps scaled down with the demo's faults (OVERSIZE_BYTES, GZIP_BOMB_BYTES): same refusals
    "max_body_bytes": 1 << 20,
    "max_decoded_bytes": 4 << 20,
}


class DemoFolderError(ValueError):
    """The ``--dir`` given cannot hold a new demo (the message says why and what to do)."""


@dataclass(frozen=True)
class DemoPlan:
    """What the demo chose, from the web's size and the crawler's measured capacity."""

    pages: int
    hosts: int
    days: float
    capacity: float
    """Pages per real second the crawler reached on the simulated web."""
    speed: float
    G: float
    theta: float

    @property
    def rank_every(self) -> float:
        """Days between two ranking passes: at least three in any run."""
        return min(RANK_EVERY_DAYS, self.days / 3)

    def config(self) -> Config:
        """The repository's configuration for this plan.

        The crawler reads at most twice a host's share of the pages on each host: the
        simulated web has a spider trap (an endless calendar) whose pages would otherwise
        join the refresh set without end and dilute G. The memory sized for a large crawl
        (SQLite's page cache, the seen-URL table, the ranking's budget, the exchanges waiting
        for the archive's writer) is sized for the demo's web instead.
        """
        budget = 2 * math.ceil(self.pages / self.hosts)
        return (
            Config()
            .replace("clock", speed=self.speed)
            .replace("bandwidth", G=self.G, theta=self.theta)
            .replace("daemon", checkpoint_seconds=2.0, rank_every=self.rank_every)
            .replace("metadata", cache_mb=DEMO_CACHE_MB)
            .replace("ranking", memory="32MB")
            .replace("archive", queue_records=32)
            .replace(
                "crawler",
                **DEMO_CRAWLER,
                host_page_budget=budget,
                scope=[DOMAIN],
                expected_urls=16 * self.pages,
            )
        )

    def describe(self) -> str:
        real = self.days * DAY / self.speed
        read_days = self.pages * self.speed / (self.capacity * DAY)
        return (
            f"crawler capacity {self.capacity:.0f} pages/s; clock speed x{self.speed:.0f} "
            f"(a simulated day every {DAY / self.speed:.2g} s, {self.days:g} days in "
            f"~{real:.0f} s, the web read in ~{read_days:.1f} days); "
            f"G = {self.G:.0f} pages per day, θ = {self.theta:g}; ranking every "
            f"{self.rank_every:.2g} days, a LiveRank re-check on day {RECHECK_AT * self.days:.2g}"
        )


def choose_plan(
    pages: int, hosts: int, days: float, capacity: float, speed: float | None, theta: float = 0.1
) -> DemoPlan:
    """G such that the web is refreshed every ``CYCLE_DAYS`` on average, and the speed at
    which the crawler sustains it with headroom (``REFRESH_SHARE``), a simulated day lasting
    at most ``MAX_DAY_SECONDS``: a crawler too slow for that gets a smaller G instead.

    Neither depends on ``days``: a longer run is the same run, longer. A given ``speed`` is
    kept, and G is then cut to the share of the capacity it leaves.

    Examples
    --------
    >>> plan = choose_plan(2_000, 5, 20, capacity=400.0, speed=None)
    >>> round(plan.G), round(plan.speed), round(plan.days * DAY / plan.speed)
    (1000, 20736, 83)
    >>> slow = choose_plan(2_000, 5, 18, capacity=100.0, speed=None)
    >>> round(slow.G), round(slow.days * DAY / slow.speed)
    (360, 108)
    """
    G = pages / CYCLE_DAYS
    if speed is None:
        sustained = REFRESH_SHARE * capacity * DAY / G
        speed = min(MAX_SPEED, max(sustained, DAY / MAX_DAY_SECONDS))
    per_day = capacity * DAY / speed  # pages the crawler can read in a simulated day
    G = max(1.0, min(G, REFRESH_SHARE * per_day))
    return DemoPlan(pages, hosts, days, capacity, float(speed), float(math.floor(G)), theta)


def web_settings(pages: int) -> SimWebSettings:
    """A simulated web of ``pages`` pages on about one host per 400 pages."""
    hosts = max(2, min(200, pages // 400))
    faults = FaultSettings(oversize_bytes=OVERSIZE_BYTES, gzip_bomb_bytes=GZIP_BOMB_BYTES)
    return SimWebSettings(pages=pages, hosts=hosts, cache_bytes=SIMWEB_CACHE_BYTES, faults=faults)


async def measure_capacity(settings: SimWebSettings, seconds: float = CALIBRATION_SECONDS) -> float:
    """Pages per real second the demo's crawler reads from a frozen copy of the web."""
    sized = MetadataSettings(cache_mb=DEMO_CACHE_MB)
    with tempfile.TemporaryDirectory() as scratch, SimWebProcess(settings, frozen=True) as web:
        clock = web.clock()
        with Metadata.create(Path(scratch) / "metadata.db", clock=clock, settings=sized) as md:
            crawler = Crawler(
                md,
                CrawlerSettings(**DEMO_CRAWLER, expected_urls=16 * settings.pages),
                Scope(domains=frozenset({DOMAIN})),
                clock=clock,
                resolver=web.resolver(),
            )
            for url in web.seed_urls:
                crawler.submit(url)
            crawl = asyncio.create_task(crawler.run())
            await asyncio.wait({crawl}, timeout=seconds)
            crawler.stop()
            stats = await crawl
    return max(1.0, stats["pages"] / max(stats["elapsed_s"], 1e-3))


# ---------------------------------------------------------------------- the folder


def prepare_folder(directory: Path | None, fresh: bool) -> Path:
    """The repository folder of a new run, marked as the demo's before anything is in it.

    ``None``: a new temporary folder. A folder that holds anything is refused with
    :class:`DemoFolderError`, unless it is an earlier demo's (its marker says so) and
    ``fresh`` asks to start over: then it is emptied first.
    """
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="xyleme-demo-")) / "repo"
    elif directory.exists() and not directory.is_dir():
        raise DemoFolderError(f"{directory} is a file, not a folder")
    elif directory.exists() and any(directory.iterdir()):
        _start_over(directory, fresh)
    directory.mkdir(parents=True, exist_ok=True)
    _mark(directory, {"state": "starting"})
    return directory


def _start_over(directory: Path, fresh: bool) -> None:
    """Empty an earlier demo's folder when ``fresh``; refuse any other non-empty folder."""
    marker = directory / DEMO_MARKER
    if not marker.is_file():
        what = (
            "holds a xyleme repository" if (directory / "xyleme.toml").exists() else "is not empty"
        )
        raise DemoFolderError(
            f"{directory} already {what} that no demo made; the demo starts in a new or "
            "empty folder (or its own earlier folder with --fresh): choose another --dir"
        )
    state = _read_marker(marker).get("state", "unknown")
    if not fresh:
        earlier = "a finished demo" if state == "done" else "an interrupted or failed demo"
        raise DemoFolderError(
            f"{directory} holds {earlier}'s repository (state: {state}); "
            "add --fresh to delete it and start over, or choose another --dir"
        )
    log.info("starting over in %s (an earlier demo's, state %s)", directory, state)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _read_marker(marker: Path) -> dict[str, Any]:
    try:
        facts = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


def _mark(directory: Path, facts: dict[str, Any]) -> None:
    marker = directory / DEMO_MARKER
    merged = {**_read_marker(marker), **facts}
    marker.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")


def mark_done(directory: Path, state: str) -> None:
    """Record how the run ended (``done``, ``interrupted``, ``failed``) in the marker."""
    _mark(directory, {"state": state})


# ---------------------------------------------------------------------- the run


@dataclass
class DemoRun:
    """What the run leaves for the summary and the plots, besides the repository."""

    start: float
    end: float = 0.0
    timeline: list[dict[str, Any]] = field(default_factory=list)
    """The progress facts sampled along the run (:func:`progress_facts`)."""
    obsolescence: list[tuple[float, float, float]] = field(default_factory=list)
    refreshes_per_unit: list[int] = field(default_factory=list)
    rankings: int = 0
    recheck_day: float | None = None
    recheck: dict[str, Any] | None = None
    recheck_refused: str | None = None


def progress_facts(daemon: Daemon, run: DemoRun, days: float) -> dict[str, Any]:
    """The figures of the live view, sampled from the running daemon."""
    counts = daemon.md.count_by_type()
    live = daemon.live_status()
    policy = live.get("policy", {})
    return {
        "day": (daemon.clock.now() - run.start) / DAY,
        "days": days,
        "known": sum(counts.values()),
        "read": sum(counts[kind] for kind in (PageType.HTML, PageType.XML, PageType.DTD)),
        "xml": counts[PageType.XML],
        "stored": live["loaded"],
        "errors": counts[PageType.ERROR] + counts[PageType.DEAD],
        "fetch_rate": live["fetch_rate"],
        "queues": live["queues"],
        "obsolescence": policy.get("obsolescence"),
        "omega": policy.get("omega"),
        "refreshed": sum(daemon.refresh.refreshes_per_unit),
        "rankings": run.rankings,
        "recheck": (daemon.rechecks.status or {}).get("line"),
    }


async def watch(
    daemon: Daemon, run: DemoRun, days: float, show: Callable[[dict], None], every: float
) -> None:
    """Every ``every`` real seconds: count the ranking passes, start the re-check when its
    day comes, and give ``show`` fresh facts, kept in the run's timeline; forever. (It looks
    again soon while the daemon has not opened the repository yet: the first line is the
    start's, even when something else, like the dashboard, starts first.)"""
    last_ranking = None
    while True:
        if daemon.md is None or daemon.crawler is None:
            await asyncio.sleep(min(every, 0.01))
            continue
        if daemon.ranking.last not in (None, last_ranking):
            last_ranking = daemon.ranking.last
            run.rankings += 1
        facts = progress_facts(daemon, run, days)
        if run.recheck_day is None and facts["day"] >= RECHECK_AT * days:
            await start_recheck(daemon, run, facts["day"], budget_pages=facts["read"])
        run.timeline.append(facts)
        show(facts)
        await asyncio.sleep(every)


async def start_recheck(daemon: Daemon, run: DemoRun, day: float, budget_pages: int) -> None:
    """Hand the daemon a LiveRank re-check of a share of the pages read (``xyleme recheck``)."""
    request = RecheckRequest(budget=max(20, round(RECHECK_SHARE * budget_pages)))
    answer = await daemon.rechecks.start(request.as_args())
    run.recheck_day = day
    if not answer.ok:
        run.recheck_refused = answer.message


async def run_demo(
    plan: DemoPlan,
    settings: SimWebSettings,
    repository: Path,
    show: Callable[[dict], None],
    every: float,
    http: tuple[str, int] | None = None,
    announce: Callable[[str], None] = print,
) -> DemoRun:
    """Serve the web, run the daemon for ``plan.days``; what the summary and plots need.
    With ``http`` the daemon serves its dashboard there too and ``announce`` gets its
    address."""
    config = plan.config()
    (repository / "xyleme.toml").write_text(as_toml(config), encoding="utf-8")
    with SimWebProcess(settings, speed=plan.speed) as web:
        clock = web.clock()
        run = DemoRun(start=clock.now())
        with Metadata.open(repository / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(
            repository,
            config,
            clock=clock,
            resolver=web.resolver(),
            stop_at=run.start + plan.days * DAY,
        )
        watching = asyncio.create_task(watch(daemon, run, plan.days, show, every))
        try:
            if http is None:
                await daemon.run()
            else:
                await run_with_dashboard(daemon, *http, announce=announce)
        finally:
            watching.cancel()
            run.end = clock.now()
            if hasattr(daemon, "refresh"):  # the daemon opened the repository
                run.obsolescence = list(daemon.refresh.obsolescence_history)
                run.refreshes_per_unit = list(daemon.refresh.refreshes_per_unit)
                run.recheck = daemon.rechecks.status
        return run
