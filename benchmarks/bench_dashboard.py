"""The dashboard under heavy queries: status latency and the daemon's crawl rate.

The daemon crawls the simulated web (a child process) with its dashboard mounted on its own
event loop, as ``xyleme run --http`` does. A client in another process (a session of its own,
as users' browsers are) polls ``/api/status`` all the time and, in the *loaded* windows only,
ten clients ask for an expensive XPath query each, again and again (waiting ``Retry-After``
when the dashboard answers 429). Quiet and loaded windows alternate after a warm-up in the
order quiet, loaded, loaded, quiet, … and every window, of either kind, is followed by the
same short pause, so the crawl's drift (discovery first, then refreshes; a growing repository
costs more per page) falls on both kinds alike. A loaded window ends with its clients hanging
up: the dashboard stops their queries, running or queued, within the pause, so none runs
into the next window. Same daemon, same seeds, same budget for both kinds: only the queries
differ.

Reported: the status's p99 latency in quiet and loaded windows, the daemon's pages/s in both
and their ratio (pages over seconds, all windows of a kind together), the ratio of each
quiet/loaded pair of windows and their median (on a shared machine one pair can be far off:
the spread says how far), and beside them what explains them: the p99 lateness of a 10 ms
sleep on the daemon's loop (a status request waits as long for its turn), the ratio of pages
per CPU second of the daemon's process (what the queries cost the daemon itself, whatever
CPU the machine's other work left it), the process's and the event loop thread's CPU
milliseconds per page, and the loop's CPU seconds per second (its own work, which a loaded
machine changes little: when the share nears 1 the loop is saturated and its lateness is the
length of one round of ready callbacks; far below 1, it waits for a core or the GIL).
Targets (issue 18): ``status_p99_ms_loaded`` < 200 and ``pages_per_s_ratio`` ≥ 0.9.

Run ``python benchmarks/bench_dashboard.py`` (a few minutes), ``--quick`` (< 60 s) or
``--smoke`` (a few seconds, tiny sizes). The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import aiohttp
import numpy as np
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from metadata import Metadata
from xyleme.cli import cli
from xyleme.commands import RepositoryTarget
from xyleme.daemon import Daemon
from xyleme.dashboard import DaemonFigures, DashboardSettings, create_app, serving
from xyleme.demo import DemoPlan, web_settings
from xyleme.logs import configure_logging
from xyleme.simweb import SimWebProcess

HEAVY = "count(//node()[count(//node()[count(//node()) > 0]) > 0])"
"""Cubic in a document's size: every query runs to its time limit."""
QUERY_CLIENTS = 10
STATUS_PERIOD_S = 0.1
SETTLE_S = 0.5
"""Seconds between two windows, after either kind alike (so the crawl's drift falls on both
alike): time for the dashboard to stop the queries whose clients hung up."""


@dataclass(frozen=True, slots=True)
class Size:
    """How long and how big one run is."""

    pages: int
    warmup_s: float
    window_s: float
    rounds: int
    query_time_limit_s: float


SIZES = {
    "full": Size(20_000, 20.0, 30.0, 4, 3.0),
    "quick": Size(20_000, 4.0, 2.5, 6, 2.0),
    "smoke": Size(1_000, 1.0, 2.0, 1, 0.5),
}
PAGES_SAMPLE_S = 0.2


@dataclass
class Window:
    """One quiet or loaded stretch (wall-clock times): the status latencies in it, and the
    answers to the queries."""

    loaded: bool
    started: float = 0.0
    ended: float = 0.0
    latencies: list[float] = field(default_factory=list)
    answered: dict[int, int] = field(default_factory=dict)  # query HTTP status → count


class Load:
    """The clients, in a process of their own (they must not share the daemon's GIL)."""

    def __init__(self, url: str, size: Size) -> None:
        self.url, self.size = url, size
        self.windows: list[Window] = []
        self._window: Window | None = None

    async def run(self) -> list[Window]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
            poller = asyncio.create_task(self._poll_status(session))
            try:
                await asyncio.sleep(self.size.warmup_s)
                for round_ in range(self.size.rounds):  # quiet, loaded; loaded, quiet; …
                    for loaded in (False, True) if round_ % 2 == 0 else (True, False):
                        await self._window_of(session, loaded=loaded)
                        await asyncio.sleep(SETTLE_S)  # after every window, either kind
            finally:
                poller.cancel()
        return self.windows

    async def _window_of(self, session: aiohttp.ClientSession, *, loaded: bool) -> None:
        """One window; at its end the query clients hang up, and the dashboard stops their
        queries (queued or running) within ``SETTLE_S``: none runs into the next window."""
        window = Window(loaded, started=time.time())
        self.windows.append(window)
        self._window = window
        clients = [
            asyncio.create_task(self._query_forever(session))
            for _ in range(QUERY_CLIENTS if loaded else 0)
        ]
        await asyncio.sleep(self.size.window_s)
        window.ended = time.time()
        self._window = None
        for client in clients:
            client.cancel()
        await asyncio.gather(*clients, return_exceptions=True)

    async def _poll_status(self, session: aiohttp.ClientSession) -> None:
        while True:
            started = time.perf_counter()
            async with session.get(self.url + "api/status") as response:
                await response.read()
            window = self._window
            if window is not None and response.status == 200:
                window.latencies.append(time.perf_counter() - started)
            await asyncio.sleep(STATUS_PERIOD_S)

    async def _query_forever(self, session: aiohttp.ClientSession) -> None:
        window = self._window
        assert window is not None
        while True:
            async with session.get(self.url + "api/query", params={"xpath": HEAVY}) as answer:
                await answer.read()
                window.answered[answer.status] = window.answered.get(answer.status, 0) + 1
                retry = float(answer.headers.get("Retry-After", 0))
            await asyncio.sleep(retry)


def load_process(size: Size, channel: Connection) -> None:
    """The child process: say it is ready (imports done), get the dashboard's URL, run the
    clients, send back their windows. In a session of its own, as users' browsers are: where
    the kernel shares the CPU between session groups, the clients' work is not the daemon's."""
    os.setsid()
    channel.send("ready")
    url = channel.recv()
    channel.send(asyncio.run(Load(url, size).run()))
    channel.close()


async def count_pages(daemon: Daemon, samples: list[tuple[float, int, float, float]]) -> None:
    """Every ``PAGES_SAMPLE_S``: (wall time, pages the daemon fetched so far, CPU seconds of
    this process: the daemon's, its dashboard's, not the query workers'; CPU seconds of the
    event loop's thread, this one)."""
    while True:
        crawler = daemon.crawler
        pages = 0 if crawler is None else crawler.stats.pages
        samples.append((time.time(), pages, time.process_time(), time.thread_time()))
        await asyncio.sleep(PAGES_SAMPLE_S)


async def first_page(daemon: Daemon, timeout_s: float = 120.0) -> None:
    """Wait for the daemon's first fetched page: a loaded machine may take seconds to start
    the crawl, and a window before it would measure nothing."""
    for _ in range(int(timeout_s / PAGES_SAMPLE_S)):
        crawler = daemon.crawler
        if crawler is not None and crawler.stats.pages > 0:
            return
        await asyncio.sleep(PAGES_SAMPLE_S)
    raise SystemExit(f"the daemon fetched no page in {timeout_s:g} s")


async def heartbeat(lateness: list[tuple[float, float]]) -> None:
    """(wall time, seconds late) of a 10 ms sleep on the daemon's loop, again and again: how
    long anything on the loop (a status request too) waits its turn, the machine's load
    included."""
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        await asyncio.sleep(0.01)
        lateness.append((time.time(), loop.time() - started - 0.01))


async def measure(size: Size, speed: float) -> dict:
    """One run in a repository of its own, removed after."""
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as folder:
        return await measure_in(Path(folder) / "repo", size, speed)


async def measure_in(repository: Path, size: Size, speed: float) -> dict:
    CliRunner().invoke(cli, ["init", str(repository)], catch_exceptions=False)
    seconds = size.warmup_s + size.rounds * 2 * (size.window_s + SETTLE_S) + 10.0
    settings = web_settings(size.pages)
    plan = DemoPlan(
        size.pages,
        settings.hosts,
        days=seconds * speed / 86_400,
        capacity=0.0,
        speed=speed,
        G=size.pages / 2,
        theta=0.1,
    )
    dashboard = DashboardSettings(query_time_limit_s=size.query_time_limit_s)
    samples: list[tuple[float, int, float, float]] = []
    lateness: list[tuple[float, float]] = []
    spawn = multiprocessing.get_context("spawn")
    channel, child_end = spawn.Pipe()
    clients = spawn.Process(target=load_process, args=(size, child_end), name="load", daemon=True)
    clients.start()
    with SimWebProcess(settings, speed=speed) as web:
        clock = web.clock()
        with Metadata.open(repository / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(repository, plan.config(), clock=clock, resolver=web.resolver())
        app = create_app(repository, live=DaemonFigures(daemon), settings=dashboard)
        async with serving(app, "127.0.0.1", 0) as url:
            assert await asyncio.to_thread(channel.recv) == "ready"
            running = asyncio.create_task(daemon.run())
            counting = asyncio.create_task(count_pages(daemon, samples))
            beating = asyncio.create_task(heartbeat(lateness))
            await first_page(daemon)  # the warm-up counts from a crawl under way
            channel.send(url)
            windows = await asyncio.to_thread(channel.recv)
            await asyncio.to_thread(clients.join)
            counting.cancel()
            beating.cancel()
            daemon.stop()
            await running
    return figures(windows, samples, lateness, size, speed)


def figures(
    windows: list[Window],
    samples: list[tuple[float, int, float, float]],
    lateness: list[tuple[float, float]],
    size: Size,
    speed: float,
) -> dict:
    """The JSON figures of the run's windows; pages counted between their ends."""
    at, pages, cpu, loop_cpu = np.array(samples, dtype=float).T
    beats = np.array(lateness, dtype=float).reshape(-1, 2)

    def late_p99_ms(loaded: bool) -> float:
        inside = np.zeros(len(beats), dtype=bool)
        for w in windows:
            if w.loaded == loaded:
                inside |= (beats[:, 0] >= w.started) & (beats[:, 0] <= w.ended)
        return round(float(np.percentile(beats[inside, 1], 99)) * 1000, 1) if inside.any() else 0.0

    def p99_ms(loaded: bool) -> float:
        latencies = [s for w in windows if w.loaded == loaded for s in w.latencies]
        return round(float(np.percentile(latencies, 99)) * 1000, 1) if latencies else float("nan")

    def grown(values: np.ndarray, loaded: bool) -> float:
        chosen = [w for w in windows if w.loaded == loaded]
        return sum(
            np.interp(w.ended, at, values) - np.interp(w.started, at, values) for w in chosen
        )

    def rate(loaded: bool) -> float:
        seconds = sum(w.ended - w.started for w in windows if w.loaded == loaded)
        return grown(pages, loaded) / max(seconds, 1e-9)

    def per_cpu(loaded: bool) -> float:
        return grown(pages, loaded) / max(grown(cpu, loaded), 1e-9)

    def ms_per_page(values: np.ndarray, loaded: bool) -> float:
        return round(1000 * grown(values, loaded) / max(grown(pages, loaded), 1), 3)

    def loop_busy(loaded: bool) -> float:
        seconds = sum(w.ended - w.started for w in windows if w.loaded == loaded)
        return round(grown(loop_cpu, loaded) / max(seconds, 1e-9), 3)

    def round_ratio(pair: list[Window]) -> float:
        quiet_window, loaded_window = sorted(pair, key=lambda w: w.loaded)
        speeds = [
            (np.interp(w.ended, at, pages) - np.interp(w.started, at, pages))
            / max(w.ended - w.started, 1e-9)
            for w in (quiet_window, loaded_window)
        ]
        return round(float(speeds[1] / speeds[0]), 3) if speeds[0] else float("nan")

    quiet, loaded = rate(False), rate(True)
    rounds = [round_ratio(windows[i : i + 2]) for i in range(0, len(windows) - 1, 2)]
    answered: dict[str, int] = {}
    for window in windows:
        for status, count in window.answered.items():
            answered[str(status)] = answered.get(str(status), 0) + count
    return {
        "pages": size.pages,
        "speed": speed,
        "window_s": size.window_s,
        "windows": len(windows),
        "query_clients": QUERY_CLIENTS,
        "query_time_limit_s": size.query_time_limit_s,
        "queries_answered": answered,
        "status_samples": sum(len(w.latencies) for w in windows),
        "status_p99_ms_quiet": p99_ms(False),
        "status_p99_ms_loaded": p99_ms(True),
        "pages_per_s_quiet": round(quiet, 1),
        "pages_per_s_loaded": round(loaded, 1),
        "pages_per_s_ratio": round(loaded / quiet, 3) if quiet else float("nan"),
        "pages_per_s_ratio_rounds": rounds,
        "pages_per_s_ratio_median": round(float(np.median(rounds)), 3) if rounds else float("nan"),
        "pages_per_cpu_s_ratio": round(per_cpu(True) / per_cpu(False), 3) if quiet else 0.0,
        "loop_lateness_p99_ms_quiet": late_p99_ms(False),
        "loop_lateness_p99_ms_loaded": late_p99_ms(True),
        "process_cpu_ms_per_page_quiet": ms_per_page(cpu, False),
        "process_cpu_ms_per_page_loaded": ms_per_page(cpu, True),
        "loop_cpu_ms_per_page_quiet": ms_per_page(loop_cpu, False),
        "loop_cpu_ms_per_page_loaded": ms_per_page(loop_cpu, True),
        "loop_cpu_share_quiet": loop_busy(False),
        "loop_cpu_share_loaded": loop_busy(True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="under 60 s")
    mode.add_argument("--smoke", action="store_true", help="a few seconds, tiny sizes")
    parser.add_argument("--speed", type=float, default=8_640.0, help="simulated s per real s")
    parser.add_argument("--verbose", action="store_true", help="the daemon's log on stderr")
    options = parser.parse_args()
    configure_logging("text", logging.INFO if options.verbose else logging.WARNING)
    size = SIZES["smoke" if options.smoke else "quick" if options.quick else "full"]
    result = asyncio.run(measure(size, options.speed))
    print(
        f"{result['windows']} windows of {size.window_s:g} s, quiet and loaded by "
        f"{QUERY_CLIENTS} clients of a heavy XPath query (answers {result['queries_answered']})"
    )
    print(f"{'':>8} {'status p99 ms':>14} {'pages/s':>9} {'loop lateness p99 ms':>21}")
    for name in ("quiet", "loaded"):
        print(
            f"{name:>8} {result[f'status_p99_ms_{name}']:>14} {result[f'pages_per_s_{name}']:>9}"
            f" {result[f'loop_lateness_p99_ms_{name}']:>21}"
        )
    print(f"pages/s loaded / quiet: {result['pages_per_s_ratio']} (target ≥ 0.9; p99 < 200 ms)")
    print(f"pages per CPU second of the daemon, loaded / quiet: {result['pages_per_cpu_s_ratio']}")
    print(
        f"daemon process's CPU ms per page, quiet {result['process_cpu_ms_per_page_quiet']}, "
        f"loaded {result['process_cpu_ms_per_page_loaded']}"
    )
    print(
        f"event loop's CPU ms per page, quiet {result['loop_cpu_ms_per_page_quiet']}, loaded "
        f"{result['loop_cpu_ms_per_page_loaded']}; its CPU seconds per second, quiet "
        f"{result['loop_cpu_share_quiet']}, loaded {result['loop_cpu_share_loaded']}"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
