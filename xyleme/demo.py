"""``xyleme demo``: the daemon keeping a warehouse of the simulated web fresh, on fast time.

The demo is the README's first command, so it must work unattended and end by itself:

1. it generates a simulated web (:mod:`xyleme.simweb`) and measures the crawler's capacity on
   it (pages per real second, a few seconds against a frozen copy served by a child process);
2. it picks the clock speed (unless given) so that the whole web can be read in the first
   simulated days, and a bandwidth G per day that the crawler sustains, with θ for
   discovery, writes them into the repository's ``xyleme.toml`` and prints them;
3. it serves the web in a child process on a free loopback port, and runs a
   :class:`~xyleme.daemon.Daemon` on the same simulated clock for ``days`` simulated days,
   showing progress (a rich live view on a terminal, plain lines otherwise);
4. it ends (or is interrupted with Ctrl-C) with a summary scored against the simulated web's
   ground truth, and the commands to explore the repository it leaves.
"""

from __future__ import annotations

import asyncio
import logging
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from xyleme.commands import RepositoryTarget
from xyleme.config import Config, as_toml
from xyleme.crawler import Crawler, CrawlerSettings, Scope
from xyleme.daemon import Daemon
from xyleme.dashboard import run_with_dashboard
from xyleme.simweb import DOMAIN, GroundTruth, SimWebProcess, SimWebSettings

log = logging.getLogger(__name__)

DAY = 86_400.0
READ_DAYS = 3.0
"""Simulated days in which the demo wants the whole web read once (then refreshes show)."""
REFRESH_SHARE = 0.5
"""Share of the measured capacity per day given to the refresh policy as G (headroom)."""
MAX_SPEED = 86_400.0
MAX_REAL_SECONDS = 300.0
"""The demo lasts at most about this long: a slow crawler gets a faster clock instead."""
CALIBRATION_SECONDS = 2.0

DEMO_CRAWLER = {
    # the simulated web is ours and on loopback: no politeness delay between requests
    "min_delay": 0.0,
    "max_crawl_delay": 0.0,
    "per_host_concurrency": 4,
    "concurrency": 64,
    "shutdown_deadline": 2.0,
}


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

    def config(self) -> Config:
        """The repository's configuration for this plan.

        The crawler reads at most twice a host's share of the pages on each host: the
        simulated web has a spider trap (an endless calendar) whose pages would otherwise
        join the refresh set without end and dilute G.
        """
        budget = 2 * math.ceil(self.pages / self.hosts)
        return (
            Config()
            .replace("clock", speed=self.speed)
            .replace("bandwidth", G=self.G, theta=self.theta)
            .replace("daemon", checkpoint_seconds=2.0)
            .replace("crawler", **DEMO_CRAWLER, host_page_budget=budget, scope=[DOMAIN])
        )

    def describe(self) -> str:
        real = self.days * DAY / self.speed
        read_days = self.pages * self.speed / (self.capacity * DAY)
        return (
            f"crawler capacity {self.capacity:.0f} pages/s; clock speed x{self.speed:.0f} "
            f"(a simulated day every {DAY / self.speed:.2g} s, {self.days:g} days in "
            f"~{real:.0f} s, the web read in ~{read_days:.1f} days); "
            f"G = {self.G:.0f} pages per day, θ = {self.theta:g}"
        )


def choose_plan(
    pages: int, hosts: int, days: float, capacity: float, speed: float | None, theta: float = 0.1
) -> DemoPlan:
    """Speed and G such that the web is read within ``READ_DAYS`` and refreshes keep up.

    The speed also keeps the whole run within about ``MAX_REAL_SECONDS``: a crawler too slow
    for both reads the web in more days (``describe`` says how many).

    Examples
    --------
    >>> plan = choose_plan(20_000, 50, 30, capacity=1000.0, speed=None)
    >>> round(plan.speed), round(plan.G)
    (12960, 3333)
    >>> round(choose_plan(20_000, 50, 30, capacity=250.0, speed=None).speed)
    8640
    """
    if speed is None:
        fast_enough = days * DAY / MAX_REAL_SECONDS
        speed = min(MAX_SPEED, max(READ_DAYS * DAY * capacity / pages, fast_enough))
    per_day = capacity * DAY / speed  # pages the crawler can read in a simulated day
    G = max(1.0, min(REFRESH_SHARE * per_day, pages / READ_DAYS))
    return DemoPlan(pages, hosts, days, capacity, float(speed), float(math.floor(G)), theta)


def web_settings(pages: int) -> SimWebSettings:
    """A simulated web of ``pages`` pages on about one host per 400 pages."""
    return SimWebSettings(pages=pages, hosts=max(2, min(200, pages // 400)))


async def measure_capacity(settings: SimWebSettings, seconds: float = CALIBRATION_SECONDS) -> float:
    """Pages per real second the demo's crawler reads from a frozen copy of the web."""
    with tempfile.TemporaryDirectory() as scratch, SimWebProcess(settings, frozen=True) as web:
        clock = web.clock()
        with Metadata.create(Path(scratch) / "metadata.db", clock=clock) as md:
            crawler = Crawler(
                md,
                CrawlerSettings(**DEMO_CRAWLER),
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


# ---------------------------------------------------------------------- progress


def progress_facts(daemon: Daemon, start: float, days: float) -> dict[str, Any]:
    """The figures of the live view, sampled from the running daemon."""
    counts = daemon.md.count_by_type()
    live = daemon.live_status()
    policy = live.get("policy", {})
    return {
        "day": (daemon.clock.now() - start) / DAY,
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
    }


async def show_progress(
    daemon: Daemon, start: float, days: float, show: Callable[[dict], None], every: float
) -> None:
    """Call ``show`` with fresh progress facts every ``every`` real seconds, forever (and
    look again soon while the daemon has not opened the repository yet: the first line is
    the start's, even when something else, like the dashboard, starts first)."""
    while True:
        if daemon.md is not None and daemon.crawler is not None:
            show(progress_facts(daemon, start, days))
            await asyncio.sleep(every)
        else:
            await asyncio.sleep(min(every, 0.01))


# ---------------------------------------------------------------------- summary


def freshness(md: Metadata, truth: GroundTruth, at: float) -> tuple[float, int]:
    """Share of the read pages whose stored version is still the web's one at ``at``.

    A page is fresh when it has not changed since we last read it (paper §6: freshness is
    the complement of obsolescence).
    """
    view = md.refresh_view()
    read = np.isin(view["type"], [PAGE_TYPE_CODE[PageType.HTML], PAGE_TYPE_CODE[PageType.XML]])
    ids, last = view["id"][read], view["last_access"][read]
    fresh = total = 0
    for url, seen in zip(md.urls_of(ids.tolist()), last.tolist(), strict=True):
        try:
            page = truth.page_id(url)
        except KeyError:
            continue
        changes = truth.change_times(page, at)
        total += 1
        fresh += not changes or changes[-1] <= seen
    return (fresh / total if total else float("nan")), total


def rate_error(md: Metadata, truth: GroundTruth) -> float | None:
    """Median relative error of the estimated λ against the true one (None: no estimate)."""
    ids, estimated = md.scores("change_rate")
    errors = []
    for url, rate in zip(md.urls_of(ids.tolist()), estimated.tolist(), strict=True):
        try:
            true_rate = truth.change_rates()[truth.page_id(url)]
        except KeyError:
            continue
        if true_rate > 0:
            errors.append(abs(rate - true_rate) / true_rate)
    return float(np.median(errors)) if errors else None


def top_pages(md: Metadata, column: str, page_type: PageType, count: int = 5) -> list[tuple]:
    """The ``count`` pages of a type with the highest score in ``column``: (score, URL)."""
    view = md.refresh_view()
    of_type = (view["type"] == PAGE_TYPE_CODE[page_type]) & ~np.isnan(view[column])
    ids, values = view["id"][of_type], view[column][of_type]
    best = np.argsort(-values, kind="stable")[:count]
    urls = md.urls_of(ids[best].tolist())
    return list(zip(values[best].tolist(), urls, strict=True))


def policy_lines(daemon: Daemon, plan: DemoPlan) -> list[str]:
    """Obsolescence against Ω(G) and refreshes per unit against G_r, over the run's second half
    (the first one is the discovery of the web). Each refresh pass records the obsolescence
    averaged over the unit before it, so their mean is the second half's time average: the
    quantity Ω(G) is the optimum of (paper §6.4)."""
    history = daemon.obsolescence_history
    late = history[len(history) // 2 :]
    if not late:
        return ["  obsolescence: no refresh pass ran (the run was shorter than a time unit)"]
    measured = float(np.mean([obsolescence for _, obsolescence, _ in late]))
    optimum = float(np.mean([omega for _, _, omega in late]))
    refreshes = daemon.refreshes_per_unit[len(daemon.refreshes_per_unit) // 2 :]
    g_r = plan.G * (1 - plan.theta)
    return [
        f"  obsolescence (Σ r·λ·age, time average over the second half): {measured:.4g},"
        f" optimum Ω(G) = S²/(2·G_r) = {optimum:.4g} (ratio {measured / optimum:.2f})",
        f"  refreshes per day (second half): {np.mean(refreshes):.0f} for G_r = {g_r:.0f}",
    ]


def summary(
    repository: Path, plan: DemoPlan, truth: GroundTruth, at: float, policy: list[str]
) -> str:
    """The closing report: what was read, how fresh it is, how well λ was learnt, the top pages."""
    with Metadata.open(repository / "metadata.db", readonly=True) as md:
        counts = md.count_by_type()
        fresh, scored = freshness(md, truth, at)
        error = rate_error(md, truth)
        top_xml = top_pages(md, "importance", PageType.XML)
        xml_title = "top XML by importance"
        if not top_xml:  # no ranking pass yet: OPIC's on-line estimate of the same PageRank
            top_xml = top_pages(md, "opic_importance", PageType.XML)
            xml_title = "top XML by importance (OPIC's on-line estimate)"
        top_html = top_pages(md, "interest", PageType.HTML)
    lines = [
        "",
        "Summary",
        "  pages: " + ", ".join(f"{count} {kind.value}" for kind, count in counts.items() if count),
        f"  freshness: {fresh:.1%} of {scored} pages read are current"
        f" (G = {plan.G:.0f}/day for {plan.pages} pages)",
        *policy,
        "  λ estimates: "
        + (
            f"median relative error {error:.0%} against the simulated web's truth"
            if error is not None
            else "none yet (no refresh pass has estimated a change rate)"
        ),
    ]
    for title, rows in ((xml_title, top_xml), ("top HTML by interest", top_html)):
        lines.append(f"  {title}:" + ("" if rows else " none yet (no ranking computed)"))
        lines += [f"    {score:.4g}  {url}" for score, url in rows]
    lines += [
        "",
        f"The repository stays in {repository}; explore it with:",
        f"  xyleme --repo {repository} status",
        f"  xyleme --repo {repository} export pages --format csv",
        f"  xyleme --repo {repository} config show",
        f"  xyleme --repo {repository} page URL",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------- the whole demo


async def run_demo(
    plan: DemoPlan,
    settings: SimWebSettings,
    repository: Path,
    show: Callable[[dict], None],
    every: float,
    http: tuple[str, int] | None = None,
    announce: Callable[[str], None] = print,
) -> tuple[float, list[str]]:
    """Serve the web, run the daemon for ``plan.days``; the simulated end time and the
    policy's lines of the summary. With ``http`` the daemon serves its dashboard there too
    and ``announce`` gets its address."""
    config = plan.config()
    (repository / "xyleme.toml").write_text(as_toml(config), encoding="utf-8")
    with SimWebProcess(settings, speed=plan.speed) as web:
        clock = web.clock()
        start = clock.now()
        with Metadata.open(repository / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(
            repository,
            config,
            clock=clock,
            resolver=web.resolver(),
            stop_at=start + plan.days * DAY,
        )
        progress = asyncio.create_task(show_progress(daemon, start, plan.days, show, every))
        try:
            if http is None:
                await daemon.run()
            else:
                await run_with_dashboard(daemon, *http, announce=announce)
        finally:
            progress.cancel()
        return clock.now(), policy_lines(daemon, plan)
