"""Soak the daemon against the simulated web: fetch rate, memory and event-loop stalls.

The simulated web runs in a child process (its CPU stays out of our figures); the daemon runs
in this process on the web's accelerated clock, with a heartbeat task on its event loop that
wakes every 10 ms and records how much CPU the loop's thread burnt meanwhile: the most is the
longest time anything blocked the loop (a SQLite write, a checkpoint, a ranking pass that
should have gone to a thread); its wall-clock lateness, which also counts the moments a
loaded machine did not run us, is reported beside it. Every second the fetch count, the
known-URL count (the crawler's seen-URL table), the writer's and the loader's backlogs and the
resident set size are sampled.

RSS must stay flat once the known-URL set stops growing: ``rss_growth_pct`` is the growth over
the second half of the run, measured from the later of the half-way mark and the first sample
at which the known-URL count reached 99 % of its final value (``known_stable_at_s``; the
simulated web keeps giving birth to a few pages).

The archive's cost (issue 17) is measured in the same run: a first soak with the archive
(WARC files and crawl log) off, then the soak above with it on, as a new repository has it,
each on a fresh repository for the same time; ``pages_per_s_archive_off`` and
``pages_per_s_archive_on`` are their fetch rates, ``archive_mb`` what the second wrote.

Run ``python benchmarks/bench_daemon.py`` (one hour each), ``--quick`` (25 s each) or
``--smoke`` (5 s each against 500 pages). The last line is JSON with ``pages_per_s``,
``rss_growth_pct``, ``max_loop_block_ms``, ``pages_per_s_archive_on`` and
``pages_per_s_archive_off``. A figure a run could not measure (a short run on a loaded
machine that ended before its first sample) is ``null``, and ``notes`` says why, by key.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from dataclasses import dataclass
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
SAMPLES_PER_RUN = 10
"""A sample every second, or more often in a short run: at least this many per run."""
STABLE_SHARE = 0.99
"""The known-URL set has stopped growing when it holds this share of its final count."""


async def heartbeat(daemon: Daemon, worst: dict[str, float]) -> None:
    """Sleep ``HEARTBEAT`` seconds again and again, and keep the worst oversleep until the
    end of the run (the shutdown's last checkpoint is not the steady state measured).

    ``lateness`` is wall time: it includes the moments the OS did not run us at all (the
    benchmark machine is shared). ``block`` is the CPU time the loop's own thread spent while
    the heartbeat waited: work that held the loop, whatever the machine's load.
    """
    loop = asyncio.get_running_loop()
    while daemon.clock.now() < daemon.stop_at:
        wall, cpu = loop.time(), time.thread_time()
        await asyncio.sleep(HEARTBEAT)
        worst["lateness"] = max(worst["lateness"], loop.time() - wall - HEARTBEAT)
        worst["block"] = max(worst["block"], time.thread_time() - cpu)


@dataclass(frozen=True, slots=True)
class Sample:
    """One second of the soak."""

    at: float
    fetched: int
    known: int
    backlog: int
    rss: int


async def sample(daemon: Daemon, samples: list[Sample], started: float, every: float) -> None:
    """Every ``every`` seconds until the end of the run (not the shutdown): pages fetched so
    far, URLs known, results and bodies waiting, RSS."""
    process = psutil.Process()
    while True:
        await asyncio.sleep(every)
        crawler = daemon.crawler
        if crawler is not None and daemon.clock.now() < daemon.stop_at:
            samples.append(
                Sample(
                    time.monotonic() - started,
                    crawler.stats.pages,
                    len(crawler.seen),
                    crawler.backlog(),
                    process.memory_info().rss,
                )
            )


def rss_growth(samples: list[Sample], elapsed: float) -> tuple[float | None, float | None]:
    """RSS growth (%) over the second half of the run, from when the known set stopped growing.

    The simulated web keeps giving birth to a few pages, so "stopped growing" is when the
    known-URL count first reached 99 % of its final value. Returns the growth and that time;
    None for what the samples cannot tell (no sample; fewer than two in the window).
    """
    if not samples:
        return None, None
    final = samples[-1].known
    stable = next(s.at for s in samples if s.known >= STABLE_SHARE * final)
    window = [s.rss for s in samples if s.at >= max(elapsed / 2, stable)]
    growth = 100.0 * (window[-1] - window[0]) / window[0] if len(window) > 1 else None
    return growth, stable


def unmeasured(samples: list[Sample], growth: float | None, seconds: float) -> dict[str, str]:
    """Why each figure of a soak is null, by key (empty when every figure was measured)."""
    if not samples:
        why = (
            f"no sample: the {seconds:g} s run ended before the daemon's first sample "
            "(start-up on a loaded machine took the whole run); run it longer"
        )
        keys = ("fetched", "pages_per_s", "rss_mb_start", "rss_mb_end", "rss_growth_pct")
        return {key: why for key in (*keys, "known_urls", "known_stable_at_s")}
    if growth is None:
        return {"rss_growth_pct": "fewer than two samples once the known-URL set was stable"}
    return {}


def _sample_period(seconds: float) -> float:
    """Seconds between samples: one a second, at least ``SAMPLES_PER_RUN`` in a short run,
    never so often that sampling itself loads the loop."""
    return max(0.05, min(1.0, seconds / SAMPLES_PER_RUN))


async def soak(
    seconds: float,
    pages: int,
    speed: float,
    repository: Path | None = None,
    *,
    archive: bool = True,
) -> dict:
    """The figures of one soak (in a temporary repository unless ``repository`` is given:
    bench_loader runs it that way)."""
    if repository is None:
        with tempfile.TemporaryDirectory(prefix="bench-daemon-") as scratch:
            return await soak(seconds, pages, speed, Path(scratch) / "repo", archive=archive)
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
        config = plan.config()
        if not archive:
            config = config.replace("archive", enabled=False, crawl_log=False)
        daemon = Daemon(
            repository,
            config,
            clock=clock,
            resolver=web.resolver(),
            stop_at=clock.now() + seconds * speed,
        )
        worst = {"lateness": 0.0, "block": 0.0}
        samples: list[Sample] = []
        started = time.monotonic()
        helpers = [
            asyncio.create_task(heartbeat(daemon, worst)),
            asyncio.create_task(sample(daemon, samples, started, _sample_period(seconds))),
        ]
        try:
            await daemon.run()
        finally:
            for task in helpers:
                task.cancel()
    elapsed = time.monotonic() - started
    total = samples[-1].fetched if samples else None
    growth, stable_at = rss_growth(samples, elapsed)
    points = samples[:: max(1, len(samples) // 12)]
    timeline = zip([Sample(0.0, 0, 0, 0, 0), *points[:-1]], points, strict=False)
    return {
        "seconds": round(elapsed, 1),
        "pages": pages,
        "speed": speed,
        "fetched": total,
        "pages_per_s": None if total is None else round(total / elapsed, 1),
        "rss_mb_start": round(samples[0].rss / 2**20, 1) if samples else None,
        "rss_mb_end": round(samples[-1].rss / 2**20, 1) if samples else None,
        "rss_growth_pct": None if growth is None else round(growth, 2),
        "known_urls": samples[-1].known if samples else None,
        "known_stable_at_s": None if stable_at is None else round(stable_at),
        "notes": unmeasured(samples, growth, seconds),
        "max_loop_block_ms": round(worst["block"] * 1000, 1),
        "max_loop_lateness_ms": round(worst["lateness"] * 1000, 1),
        "archive_mb": round(_size(repository / config.archive.folder) / 2**20, 1),
        "timeline": [
            (
                round(now.at, 1),
                now.fetched,
                round((now.fetched - then.fetched) / (now.at - then.at)),
                now.known,
                now.backlog,
                round(now.rss / 2**20, 1),
            )
            for then, now in timeline
        ],
    }


def _size(folder: Path) -> int:
    """Bytes of the files in a folder (0 if there is none)."""
    return sum(path.stat().st_size for path in folder.glob("*") if path.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="25 s instead of one hour")
    parser.add_argument("--smoke", action="store_true", help="5 s against 500 pages")
    parser.add_argument("--pages", type=int, default=None, help="pages of the web [20000]")
    parser.add_argument("--verbose", action="store_true", help="the daemon's log on stderr")
    parser.add_argument(
        "--speed", type=float, default=8_640.0, help="simulated seconds per real second"
    )
    options = parser.parse_args()
    configure_logging("text", logging.INFO if options.verbose else logging.WARNING)
    options.pages = options.pages or (500 if options.smoke else 20_000)
    seconds = 5.0 if options.smoke else 25.0 if options.quick else 3600.0
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as scratch:
        off = asyncio.run(
            soak(seconds, options.pages, options.speed, Path(scratch) / "off", archive=False)
        )
        figures = asyncio.run(soak(seconds, options.pages, options.speed, Path(scratch) / "on"))
    figures["pages_per_s_archive_on"] = figures["pages_per_s"]
    figures["pages_per_s_archive_off"] = off["pages_per_s"]
    figures["max_loop_block_ms_archive_off"] = off["max_loop_block_ms"]
    notes = figures["notes"]
    if "pages_per_s" in notes:
        notes["pages_per_s_archive_on"] = notes["pages_per_s"]
    if "pages_per_s" in off["notes"]:
        notes["pages_per_s_archive_off"] = "archive off: " + off["notes"]["pages_per_s"]
    print(
        f"archive off: {_count(off['fetched'])} pages in {off['seconds']} s "
        f"({_count(off['pages_per_s'])}/s); archive on: {_count(figures['fetched'])} pages "
        f"in {figures['seconds']} s ({_count(figures['pages_per_s'])}/s), "
        f"{figures['archive_mb']} MiB of WARC files and crawl log"
    )
    print(
        f"soak of {figures['seconds']} s against a simulated web of {options.pages} pages "
        f"(clock x{options.speed:g})"
    )
    columns = ("elapsed s", "fetched", "pages/s", "known URLs", "backlog", "RSS MiB")
    print(" ".join(f"{name:>10}" for name in columns))
    for row in figures.pop("timeline"):
        print(" ".join(f"{value:>10}" for value in row))
    for key, why in notes.items():
        print(f"{key}: not measured, {why}")
    print(json.dumps(figures))


def _count(value: float | None) -> str:
    """A figure for the summary line: "not measured" when null (``notes`` says why)."""
    return "not measured" if value is None else f"{value:g}"


if __name__ == "__main__":
    main()
