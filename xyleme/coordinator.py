"""The coordinator of several crawl workers (``xyleme coordinator``, started by
``xyleme run --workers N``; issue 20, docs/scaleout.md).

The workers fetch; the coordinator runs the passes that read the whole store: the refresh
pass of each time unit (paper §6.5–6.6) and the ranking pass every ``rank_every`` units
(§5). Its refresh pass is the daemon's (:class:`xyleme.jobs.RefreshPass`) with the store as
its queue (:class:`StoreQueue`): the pass writes every page's ``next_refresh``, the retries
it plans get a due date, and each worker claims its part's due pages from the store, each
at its moment (no timetable to release: the claim's ``due_by`` is the worker's now).

It is elected: each coordinator asks for one PostgreSQL advisory lock
(:class:`metadata.CoordinatorLock`); the first leads, a second waits (its row in ``xyleme
status`` says so) and takes the lead when the first dies. A leader that loses its lock's
connection stops leading and exits non-zero (``xyleme run --workers`` starts it again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from loader import iso
from metadata import Clock, CoordinatorLock, Heartbeat, LeadLost, Metadata, MetadataError
from refresh import REFRESH_LEVEL
from xyleme import commands, signals
from xyleme.config import Config
from xyleme.crawler import Level
from xyleme.jobs import RankingPass, RefreshPass, restore_opic
from xyleme.periodic import PeriodicJobs
from xyleme.scope_config import check_start
from xyleme.status import restore_clock, save_clock
from xyleme.stopping import DaemonStopped, first_failure, stopping_on_signals

log = logging.getLogger(__name__)

DATABASE = "metadata.db"
DUE_LEVELS = (REFRESH_LEVEL, Level.BACKGROUND)
"""The plan's levels made due in the store (discoveries are due by their discovery)."""


class StoreQueue:
    """The refresh pass's queue when workers claim from the store: a plan's refreshes,
    retries and background re-checks (DEAD and redirected pages, every
    ``dead_recheck_units``, as the daemon re-checks them) are made due there (those already
    due keep their date); discoveries are due by their discovery already."""

    def __init__(self, md: Metadata, clock: Clock) -> None:
        self.md = md
        self.clock = clock
        self.signals = signals.SignalManager()
        """No crawler here: the pass counts no refresh of its own (the workers read them)."""

    async def submit_plan(self, batches: Sequence[tuple[np.ndarray, int, np.ndarray]]) -> int:
        wanted = [np.asarray(ids, np.int64) for ids, level, _ in batches if level in DUE_LEVELS]
        if not wanted:
            return 0
        ids = np.concatenate(wanted).tolist()
        return await asyncio.to_thread(self.md.make_due, ids, self.clock.now())


class WorkersParking:
    """The refresh pass's :class:`~xyleme.jobs.refresh_pass.Parking`: each worker's loader
    fails its own documents that waited too long for a DTD (``xyleme.worker``)."""

    async def expire_waiting(self) -> int:
        return 0


class Coordinator:
    """One coordinator process on ``repository`` with ``config``; it asks for the lead every
    ``poll_s`` real seconds and beats every ``heartbeat_s``."""

    def __init__(
        self,
        repository: Path,
        config: Config,
        *,
        poll_s: float = 2.0,
        heartbeat_s: float = 2.0,
    ) -> None:
        self.repository = repository
        self.config = config
        self.poll_s = poll_s
        self.heartbeat_s = heartbeat_s
        self.name = f"{socket.gethostname()}:{os.getpid()}:coordinator"
        self.started = time.time()
        self.leading = False
        self.failure: str | None = None
        self.periodic = PeriodicJobs(on_disk_full=self.stop)
        self.md: Metadata | None = None
        self._stop: asyncio.Event | None = None

    async def run(self) -> None:
        """Wait for the lead, then run the passes until SIGTERM/SIGINT or :meth:`stop`;
        :class:`DaemonStopped` when it stopped on an error (a lost lock, a full disk)."""
        self._stop = asyncio.Event()
        with stopping_on_signals(self.stop):
            lock = CoordinatorLock(self.repository / DATABASE)  # refuses an SQLite store
            self.md = Metadata.open(self.repository / DATABASE, settings=self.config.metadata)
            try:
                if await self._elected(lock):
                    await self._lead(lock)
            finally:
                await self.periodic.shutdown()
                try:
                    self._beat("stopped")
                except MetadataError as error:  # the store is gone: its row goes stale
                    log.warning("could not mark the coordinator stopped: %s", error)
                lock.close()
                self.md.close()
                self.md = None
        if self.failure is not None:
            raise DaemonStopped(self.failure)

    def stop(self, failure: str | None = None) -> None:
        """Ask :meth:`run` to stop (``failure`` says why, if it is an error)."""
        if self.md is not None and self.leading:
            self.ranking.cancel()
        self.failure = first_failure(self.failure, failure)
        if self._stop is not None:
            self._stop.set()

    async def _elected(self, lock: CoordinatorLock) -> bool:
        """Ask for the lead every ``poll_s`` until it is ours (True) or a stop (False)."""
        said = False
        while not self._stop.is_set():
            if await asyncio.to_thread(lock.try_acquire):
                return True
            await asyncio.to_thread(self._beat, "waiting")
            if not said:
                log.info("coordinator %s waiting: another coordinator leads", self.name)
                said = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.poll_s)
        return False

    async def _lead(self, lock: CoordinatorLock) -> None:
        md, config = self.md, self.config
        self.lock = lock
        self.clock = clock = restore_clock(md, config.clock.speed, time.time())
        md.clock = clock
        scope = check_start(config, commands.stored_seeds(md))
        queue, opic = StoreQueue(md, clock), restore_opic(md, config.opic)
        self.refresh = RefreshPass(md, config.refresh, clock, queue, opic, WorkersParking())
        folder = self.repository / config.paths.ranking
        self.ranking = RankingPass(md, folder, config.ranking, clock, lambda: scope)
        self.leading = True
        log.info("coordinator %s leads (simulated time %s)", self.name, iso(clock.now()))
        await asyncio.to_thread(self._beat, "running")
        await self.periodic.run(self.refresh.run, "refresh_scan")  # due pages at once
        self.periodic.start(self._jobs())
        await self._stop.wait()

    def _jobs(self) -> list[tuple[str, Any, float]]:
        def every(units: float) -> float:
            return self.clock.real_seconds(units * self.config.clock.time_unit)

        return [
            ("refresh_scan", self.refresh.run, every(1.0)),
            ("ranking", self.ranking.periodic, every(self.config.daemon.rank_every)),
            ("heartbeat", self._leader_beat, self.heartbeat_s),
        ]

    async def _leader_beat(self) -> None:
        """The lock's connection checked, the clock saved, the row written."""
        try:
            await asyncio.to_thread(self.lock.still_held)
        except LeadLost as error:
            self.stop(str(error))
            return
        await asyncio.to_thread(save_clock, self.md, self.clock)
        await asyncio.to_thread(self._beat, "running")

    def _beat(self, state: str) -> None:
        row = Heartbeat(
            self.name, "coordinator", None, None, os.getpid(), socket.gethostname(),
            0, 0, 0.0, self.started, state,
        )  # fmt: skip
        self.md.heartbeat(row, now=time.time())


def run_coordinator(repository: Path, config: Config, **options: Any) -> None:
    """Run one coordinator in a fresh event loop until it stops (``xyleme coordinator``)."""
    asyncio.run(Coordinator(repository, config, **options).run())
