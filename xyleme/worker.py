"""One crawl worker of a store shared by several (``xyleme worker --part I/N``, issue 20).

Worker I of N owns the hosts whose stable hash is I modulo N (``conventions.host_hash``):
their politeness and robots.txt live in this process only. It claims its part's due pages
from the store (:mod:`xyleme.claim_feed`), fetches them, loads the XML, and writes in
batches like the single-process daemon (same crawler, same loader); the links it finds on
its own part's hosts are claimed as they are recorded and queued at once, the others stored
for their part's owner to claim (:mod:`xyleme.claim_feed`). Every ``heartbeat_s`` it
writes its row of the ``workers`` table (``xyleme status``, the dashboard), renews its
leases and saves its hosts' facts (``xyleme hosts``). SIGTERM stops it cleanly (in-flight
fetches committed, its claims given back); after a ``kill -9`` nothing it committed is lost
and its claims come back once their leases end (docs/scaleout.md).

The refresh and ranking passes are the coordinator's (:mod:`xyleme.coordinator`). Each worker
writes its own archive (``archive/part-I-of-N/``) and spools its large bodies in its own
folder, so workers on one machine never touch each other's files.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loader import Loader, iso
from metadata import Heartbeat, Metadata, MetadataError, target_of, write_host_stats
from ranking.opic import OPICError
from xyleme import commands
from xyleme.archive import Archive
from xyleme.claim_feed import ClaimFeed
from xyleme.commands import is_paused
from xyleme.config import Config
from xyleme.crawler import Crawler
from xyleme.periodic import PeriodicJobs
from xyleme.scope_config import check_start
from xyleme.status import restore_clock
from xyleme.stopping import DaemonStopped, first_failure, stopping_on_signals
from xyleme.worker_opic import WorkerOPIC
from xyleme.workers import Workers, spooled_settings

log = logging.getLogger(__name__)

DATABASE = "metadata.db"


def parse_part(text: str) -> tuple[int, int]:
    """``"I/N"`` as ``(I, N)``, 0 ≤ I < N; a clear ValueError otherwise.

    >>> parse_part("1/4")
    (1, 4)
    >>> parse_part("3/2")
    Traceback (most recent call last):
    ...
    ValueError: --part 3/2: the part I must be 0 to N-1 (0 to 1 here)
    """
    head, slash, tail = str(text).strip().partition("/")
    if not slash or not head.strip().isdigit() or not tail.strip().isdigit():
        raise ValueError(f"--part {text}: write it I/N, worker I of N, e.g. 0/2 and 1/2")
    part, parts = int(head), int(tail)
    if parts < 1:
        raise ValueError(f"--part {text}: N, the number of workers, must be at least 1")
    if part >= parts:
        raise ValueError(f"--part {text}: the part I must be 0 to N-1 (0 to {parts - 1} here)")
    return part, parts


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker claims and beats (``xyleme worker``'s options)."""

    part: int
    parts: int
    batch: int = 1000
    """pages claimed at once (a new batch is claimed when fewer than half are left)"""
    lease_s: float = 300.0
    """wall-clock seconds a claim lasts unless renewed: how long a killed worker's hosts
    wait before another start of its part claims them again"""
    heartbeat_s: float = 2.0
    """wall-clock seconds between two heartbeats (row, leases, hosts' facts)"""
    feed_s: float = 0.2
    """wall-clock seconds between two looks at the queue (claims ended, more claimed)"""


def worker_name(part: int, parts: int) -> str:
    """This process's name in the store: machine, pid and part (unique while it lives)."""
    return f"{socket.gethostname()}:{os.getpid()}:part-{part}-of-{parts}"


def replace_earlier_workers(md: Metadata, part: int, parts: int) -> None:
    """Remove the rows of the earlier workers of this part (a restart replaces them), or
    refuse to start beside one that still lives: one that beats, unless it is a process of
    this machine that is gone (a ``kill -9`` a moment ago)."""
    here = socket.gethostname()
    for row in md.workers():
        if row["role"] != "worker" or (row["part"], row["parts"]) != (part, parts):
            continue
        gone = row["host"] == here and not process_alive(int(row["pid"]))
        if row["state"] != "stopped" and not row["stale"] and not gone:
            raise MetadataError(
                f"part {part}/{parts} is already crawled by {row['name']} "
                f"(heartbeat {row['age']:.0f} s ago): one worker per part"
            )
        md.forget_worker(row["name"])


def process_alive(pid: int) -> bool:
    """Whether a process of this machine has this pid (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


class CrawlWorker:
    """One worker process on ``repository`` with ``config`` and ``settings``; ``resolver``
    resolves names for its crawler (the simulated web's in the tests and the benchmark)."""

    def __init__(
        self,
        repository: Path,
        config: Config,
        settings: WorkerSettings,
        *,
        resolver: Any = None,
    ) -> None:
        self.repository = repository
        self.config = config
        self.settings = settings
        self.resolver = resolver
        self.name = worker_name(settings.part, settings.parts)
        self.started = time.time()
        self.md: Metadata | None = None
        self.failure: str | None = None
        self.periodic = PeriodicJobs(on_disk_full=self.stop)
        self._stop: asyncio.Event | None = None
        self._last_beat = (self.started, 0)
        self._connections: list[Metadata] = []
        self.archive: Archive | None = None
        self.sink: Loader | None = None

    def open(self) -> None:
        """Open the store, refuse a part another live worker runs, build the parts."""
        config, settings, repository = self.config, self.settings, self.repository
        part, parts = settings.part, settings.parts
        if target_of(repository / DATABASE).path is not None:
            raise MetadataError(
                f"{repository}: its metadata is an SQLite file; several workers share a "
                "PostgreSQL store (`xyleme init --db postgresql://…`, docs/scaleout.md). "
                "On SQLite run `xyleme run` without --workers"
            )
        md = Metadata.open(repository / DATABASE, settings=config.metadata)
        try:
            replace_earlier_workers(md, part, parts)
            scope = check_start(config, commands.stored_seeds(md))
        except BaseException:
            md.close()
            raise
        self.md = md
        self.clock = clock = restore_clock(md, config.clock.speed, time.time())
        md.clock = clock
        try:
            self._build(scope)
        except BaseException:
            self._release()
            raise

    def _build(self, scope: Any) -> None:
        """The archive, the crawler, the loader, OPIC's part and the claims. The crawler's
        commits, the loader and the rest (claims, heartbeats, OPIC) each have a connection
        of their own: on one, each waited for the others' round trips (profiled: the claims
        waited a quarter of the time for the store's lock)."""
        config, settings, repository = self.config, self.settings, self.repository
        part, parts, md, clock = settings.part, settings.parts, self.md, self.clock
        crawler_md, loader_md = self._connection(), self._connection()
        folder = f"part-{part}-of-{parts}"
        archive = config.archive
        info = {"isPartOf": repository.resolve().name}
        self.archive = Archive(repository / archive.folder / folder, archive, clock, info)
        self.archive.open()
        spool = Path(config.crawler.spool_dir or repository / config.paths.spool) / folder
        crawler_settings = spooled_settings(replace(config.crawler, spool_dir=str(spool)), spool)
        self.crawler = crawler = Crawler(
            crawler_md,
            crawler_settings,
            scope,
            clock=clock,
            resolver=self.resolver,
            exchanges=self.archive if self.archive.active else None,
            sink_for=lambda made: made.make_loader(
                repository / config.paths.documents, loader_md, config.loader
            ),
        )
        crawler.follows_links = False  # found links are claimed by part (ClaimFeed.claim)
        crawler.commits_in_thread = True  # PostgreSQL's round trips: the fetchers go on
        self.sink = crawler.sink
        self.fetching = Workers(crawler)  # the crawler's run, stopped by a pause
        self.opic = WorkerOPIC(md, config, crawler, settings.part, settings.parts)
        self.feed = ClaimFeed(
            md,
            crawler,
            clock,
            self.name,
            (part, parts),
            batch=settings.batch,
            lease_s=settings.lease_s,
            postpone_s=config.clock.time_unit,
        )
        self._write_heartbeat()
        log.info(
            "worker %s started: part %d of %d, simulated time %s, lease %g s",
            self.name,
            part,
            parts,
            iso(clock.now()),
            settings.lease_s,
        )

    def _connection(self) -> Metadata:
        """One more connection to the store, on the worker's clock (closed by :meth:`close`)."""
        md = Metadata.open(self.repository / DATABASE, settings=self.config.metadata)
        md.clock = self.clock
        self._connections.append(md)
        return md

    async def run(self) -> None:
        """Crawl the part until SIGTERM/SIGINT or :meth:`stop`; :class:`DaemonStopped` when
        it stopped on an error (the CLI exits non-zero)."""
        self._stop = asyncio.Event()
        with stopping_on_signals(self.stop):
            self.open()
            # What start-up built lives as long as the process: out of the cyclic GC's
            # sight, as in the daemon (a full collection scanned it and stalled the loop).
            gc.freeze()
            feeding = None
            try:
                await self._follow_pause()
                feeding = asyncio.create_task(self._feeding(), name="claims")
                self.periodic.start(self._jobs())
                await self._stop.wait()
            finally:
                self._stop.set()
                self.periodic.pause()
                if feeding is not None:
                    await feeding  # its last look ends; no claim after it
                await self.fetching.close()
                await self.periodic.shutdown()
                self.close()
        if self.failure is not None:
            raise DaemonStopped(self.failure)

    def stop(self, failure: str | None = None) -> None:
        """Ask :meth:`run` to stop (``failure`` says why, if it is an error)."""
        self.failure = first_failure(self.failure, failure)
        if self._stop is not None:
            self._stop.set()

    def close(self) -> None:
        """After the crawler's last commit: claims ended or given back, the row marked
        stopped, the loader, archive and store closed. Claims the store refuses to give
        back cost nothing committed (they end with their lease): the row is still marked
        stopped, and the stop is told as a failure (exit 1)."""
        if self.md is None:
            return
        try:
            self._last_opic_flush()
            try:
                released = self.feed.release()
            except MetadataError as error:
                self.stop(f"claims not given back ({error}): they end with their lease")
                released = 0
            self._write_heartbeat(state="stopped")
            log.info("worker %s stopped: %d claims given back", self.name, released)
        finally:
            self._release()

    def _release(self) -> None:
        """Close the archive, the loader and every connection (after a failed start too)."""
        try:
            if self.archive is not None:
                self.archive.close_now()
            if self.sink is not None:
                self.sink.close()
        finally:
            for md in [*self._connections, self.md]:
                md.close()
            self._connections.clear()
            self.md = None

    async def _feeding(self) -> None:
        """The claims' loop: a look every ``feed_s``, or as soon as the queue runs low (one
        at a time; a failure is logged and the next look tries again, a full disk stops the
        worker) until the stop."""
        while not self._stop.is_set():
            await self.periodic.run(self.feed.feed, "claims")
            woken = [asyncio.ensure_future(self._stop.wait())]
            woken.append(asyncio.ensure_future(self.feed.running_low.wait()))
            await asyncio.wait(
                woken, timeout=self.settings.feed_s, return_when=asyncio.FIRST_COMPLETED
            )
            for waiter in woken:
                waiter.cancel()

    def _jobs(self) -> list[tuple[str, Any, float]]:
        unit_s = self.clock.real_seconds(self.config.clock.time_unit)
        return [
            ("heartbeat", self.beat, self.settings.heartbeat_s),
            ("opic_flush", self._flush_opic, self.settings.heartbeat_s),
            ("expire_waiting", self.crawler.lane.expire_waiting, max(1.0, unit_s)),
        ]

    async def _follow_pause(self) -> None:
        """Fetch, or not, as ``xyleme pause`` / ``resume`` stored it (the workers have no
        command table: they read the store's flag at each heartbeat). A pause stops the
        crawler (in-flight fetches committed) and gives its claims back."""
        paused = await asyncio.to_thread(is_paused, self.md)
        if paused and not self.feed.paused:
            log.info("paused (`xyleme pause`): fetching stops, claims given back")
            self.feed.paused = True
            await self.fetching.stop()
            await self.feed.give_back()
        elif not paused and not self.fetching.running:
            if self.feed.paused:
                log.info("resumed (`xyleme resume`): fetching again")
            self.feed.paused = False
            self.fetching.start()

    async def _flush_opic(self) -> None:
        try:
            await self.opic.flush()
        except (MetadataError, OPICError) as error:  # restart from what the store holds
            log.error("OPIC flush of part %d failed: %s", self.settings.part, error)
            self.stop(f"OPIC flush failed ({error}); the restart restores the part")

    def _last_opic_flush(self) -> None:
        """The stop's flush, scores included (after the crawler's last commit)."""
        try:
            self.opic.last_flush()
        except (MetadataError, OPICError) as error:  # its reads are credited again later
            log.error("OPIC's last flush of part %d failed: %s", self.settings.part, error)

    async def beat(self) -> None:
        """The heartbeat: pause followed, leases renewed, the row written, the hosts'
        facts saved."""
        await self._follow_pause()
        await self.feed.renew()
        hosts = self.crawler.host_snapshot()
        await asyncio.to_thread(self._write_heartbeat)
        await asyncio.to_thread(write_host_stats, self.md, hosts, self.clock.now())

    def _write_heartbeat(self, state: str | None = None) -> None:
        now = time.time()
        read = self.feed.read
        then, before = self._last_beat
        rate = (read - before) / (now - then) if now > then else 0.0
        self._last_beat = (now, read)
        settings = self.settings
        self.md.heartbeat(
            Heartbeat(
                self.name,
                "worker",
                settings.part,
                settings.parts,
                os.getpid(),
                socket.gethostname(),
                self.crawler.frontier.hosts,
                read,
                rate,
                self.started,
                state or ("paused" if self.feed.paused else "running"),
            ),
            now=now,
        )


def run_worker(repository: Path, config: Config, settings: WorkerSettings, **options: Any) -> None:
    """Run one worker in a fresh event loop until it stops (``xyleme worker``)."""
    asyncio.run(CrawlWorker(repository, config, settings, **options).run())
