"""Soak the daemon against the simulated web: fetch rate, memory and event-loop stalls.

The simulated web runs in a child process (its CPU stays out of our figures); the daemon runs
in this process on the web's accelerated clock, with a heartbeat task on its event loop that
wakes every 10 ms and records how much CPU the loop's thread burnt meanwhile: the most is the
longest time anything blocked the loop (a SQLite write, a checkpoint, a ranking pass that
should have gone to a thread); its wall-clock lateness, which also counts the moments a
loaded machine did not run us, is reported beside it. Every second the fetch count and the
resident set size are sampled.

Run ``python benchmarks/bench_daemon.py`` (one hour) or ``--quick`` (60 s). The last line is
JSON with ``pages_per_s``, ``rss_growth_pct`` (RSS growth over the second half of the run)
and ``max_loop_block_ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import psutil
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages


from metadata import Metadata
from xyleme.cli import cli
from xyleme.commands import RepositoryTarget
from xyleme.daemon import Daemon
from xyleme.demo import DemoPlan, web_settings
from xyleme.logs import configure_logging
from xyleme.simweb import SimWebProcess

HEARTBEAT = 0.01


async def heartbeat(worst: dict[str, float]) -> None:
    """Sleep ``HEARTBEAT`` seconds again and again, and keep the worst oversleep.

    ``lateness`` is wall time: it includes the moments the OS did not run us at all (the
    benchmark machine is shared). ``block`` is the CPU time the loop's own thread spent while
    the heartbeat waited: work that held the loop, whatever the machine's load.
    """
    loop = asyncio.get_running_loop()
    while True:
        wall, cpu = loop.time(), time.thread_time()
        await asyncio.sleep(HEARTBEAT)
        worst["lateness"] = max(worst["lateness"], loop.time() - wall - HEARTBEAT)
        worst["block"] = max(worst["block"], time.thread_time() - cpu)


async def sample(daemon: Daemon, samples: list[tuple[float, int, int]], started: float) -> None:
    """Every second: (elapsed s, pages fetched so far, RSS bytes)."""
    process = psutil.Process()
    while True:
        await asyncio.sleep(1.0)
        if daemon.crawler is not None:
            fetched = daemon.crawler.stats.pages
            samples.append((time.monotonic() - started, fetched, process.memory_info().rss))


async def soak(seconds: float, pages: int, speed: float) -> dict:
    repository = Path(tempfile.mkdtemp(prefix="bench-daemon-")) / "repo"
    CliRunner().invoke(cli, ["init", str(repository)], catch_exceptions=False)
    settings = web_settings(pages)
    plan = DemoPlan(
        pages,
        settings.hosts,
        days=seconds * speed / 86_400,
        capacity=0.0,
        speed=speed,
        G=pages / 2,
        theta=0.1,
    )
    with SimWebProcess(settings, speed=speed) as web:
        clock = web.clock()
        with Metadata.open(repository / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(
            repository,
            plan.config(),
            clock=clock,
            resolver=web.resolver(),
            stop_at=clock.now() + seconds * speed,
        )
        worst = {"lateness": 0.0, "block": 0.0}
        samples: list[tuple[float, int, int]] = []
        started = time.monotonic()
        helpers = [
            asyncio.create_task(heartbeat(worst)),
            asyncio.create_task(sample(daemon, samples, started)),
        ]
        try:
            await daemon.run()
        finally:
            for task in helpers:
                task.cancel()
    elapsed = time.monotonic() - started
    total = samples[-1][1] if samples else 0
    half = [rss for at, _, rss in samples if at >= elapsed / 2]
    growth = 100.0 * (half[-1] - half[0]) / half[0] if len(half) > 1 else 0.0
    return {
        "seconds": round(elapsed, 1),
        "pages": pages,
        "speed": speed,
        "fetched": total,
        "pages_per_s": round(total / elapsed, 1),
        "rss_mb_start": round(samples[0][2] / 2**20, 1) if samples else None,
        "rss_mb_end": round(samples[-1][2] / 2**20, 1) if samples else None,
        "rss_growth_pct": round(growth, 2),
        "max_loop_block_ms": round(worst["block"] * 1000, 1),
        "max_loop_lateness_ms": round(worst["lateness"] * 1000, 1),
        "timeline": [
            (round(at), fetched, round(rss / 2**20, 1))
            for at, fetched, rss in samples[:: max(1, len(samples) // 12)]
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 s instead of one hour")
    parser.add_argument("--pages", type=int, default=20_000)
    parser.add_argument("--verbose", action="store_true", help="the daemon's log on stderr")
    parser.add_argument(
        "--speed", type=float, default=8_640.0, help="simulated seconds per real second"
    )
    options = parser.parse_args()
    configure_logging("text", logging.INFO if options.verbose else logging.WARNING)
    figures = asyncio.run(soak(60.0 if options.quick else 3600.0, options.pages, options.speed))
    print(
        f"soak of {figures['seconds']} s against a simulated web of {options.pages} pages "
        f"(clock x{options.speed:g})"
    )
    print(f"{'elapsed s':>10} {'fetched':>10} {'RSS MiB':>10}")
    for at, fetched, rss in figures.pop("timeline"):
        print(f"{at:>10} {fetched:>10} {rss:>10}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
