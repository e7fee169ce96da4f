"""The acquisition daemon (``xyleme run``): one asyncio process that keeps a repository fresh.

The daemon builds the parts and schedules the jobs; every decision is a module's
(docs/architecture.md, docs/daemon.md). :meth:`Daemon.open` locks the repository, opens the
metadata, restores the clock and OPIC, and builds every part in one place, each given its
collaborators when it is made. :meth:`Daemon.run` queues what a stop or a crash left undone
(:mod:`xyleme.jobs.requeue`), starts the crawler's workers (:mod:`xyleme.workers`) and the
periodic jobs of :mod:`xyleme.jobs` (:mod:`xyleme.periodic`), and answers the CLI's commands
(:mod:`xyleme.control`) until a signal, a full disk (:mod:`xyleme.stopping`) or ``stop_at``.
Tests build a :class:`Daemon` on a ``ManualClock`` and call the jobs themselves
(``daemon.refresh.run()``, ``daemon.ranking.run()``, ``daemon.checkpoints.write()``…).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from pathlib import Path
from typing import Any

from loader import iso
from metadata import Clock, Metadata
from xyleme import commands
from xyleme.archive import Archive
from xyleme.commands import Answer
from xyleme.config import Config
from xyleme.control import DaemonControl
from xyleme.crawler import Crawler
from xyleme.jobs import (
    Checkpoint,
    FetchListener,
    RankingPass,
    RecheckTask,
    RefreshPass,
    SitemapQueue,
    queue_not_loaded,
    queue_unread,
    restore_opic,
)
from xyleme.live_status import LiveStatus
from xyleme.lock import DaemonLock
from xyleme.periodic import PeriodicJobs
from xyleme.scope_config import check_start
from xyleme.status import restore_clock
from xyleme.stopping import DaemonStopped, disk_full, stopping_on_signals
from xyleme.workers import Workers, spooled_settings

log = logging.getLogger(__name__)

DATABASE = "metadata.db"
RELEASES_PER_UNIT = 96
"""How often a unit's upcoming refreshes are released to the crawler (each at its moment,
to within 1/96 of a unit: 15 min when the unit is a day), but at most every
``MIN_RELEASE_SECONDS`` real seconds (a fast clock would otherwise fire it 100 times a second)."""
MIN_RELEASE_SECONDS = 0.05


class Daemon:
    """The repository's one long-running process, on ``repository`` with ``config``.

    ``clock`` is restored from the repository at the configured speed unless given;
    ``stop_at`` is a simulated time to stop at (the demo's ``--days``); ``resolver`` resolves
    names for the crawler (the simulated web's in the demo and the tests).
    """

    def __init__(
        self,
        repository: Path,
        config: Config,
        *,
        clock: Clock | None = None,
        stop_at: float | None = None,
        resolver: Any = None,
    ) -> None:
        self.repository = repository
        self.config = config
        self.clock = clock
        self.stop_at = stop_at
        self.resolver = resolver
        self.lock = DaemonLock(repository)
        self.md: Metadata | None = None
        """The open metadata, and every part, once :meth:`open` has run."""
        self.crawler: Crawler | None = None
        self.failure: str | None = None
        self.periodic = PeriodicJobs(on_disk_full=self.stop)
        self._stop: asyncio.Event | None = None

    def open(self) -> None:
        """Lock the repository, open its metadata, restore the clock and build the parts."""
        md = Metadata.open(self.repository / DATABASE, settings=self.config.metadata)
        try:
            scope = check_start(self.config, commands.stored_seeds(md))  # or NoSeedInScope
            if not self.lock.held:  # run_with_dashboard takes it before announcing itself
                self.lock.acquire()
        except BaseException:
            md.close()
            raise
        config, paths, repository = self.config, self.config.paths, self.repository
        self.md = md
        self.clock = clock = self.clock or restore_clock(md, config.clock.speed, time.time())
        md.clock = clock  # discoveries and rejections are dated in simulated time
        archive, info = config.archive, {"isPartOf": repository.resolve().name}
        self.archive = Archive(repository / archive.folder, archive, clock, info)
        self.archive.open()
        self.crawler = crawler = Crawler(
            md,
            spooled_settings(config.crawler, repository / paths.spool),
            scope,
            clock=clock,
            resolver=self.resolver,
            exchanges=self.archive if self.archive.active else None,
            sink_for=lambda made: made.make_loader(repository / paths.documents, md, config.loader),
        )
        self.loader = crawler.sink
        self.opic = opic = restore_opic(md, config.opic)
        FetchListener(opic, md, events=crawler.signals, xml_weight=config.opic.xml_weight)
        SitemapQueue(crawler)
        self.workers = workers = Workers(crawler)
        self.refresh = refresh = RefreshPass(md, config.refresh, clock, crawler, opic, crawler.lane)
        folder, scope_now = repository / paths.ranking, lambda: crawler.scope
        self.ranking = ranking = RankingPass(md, folder, config.ranking, clock, scope_now)
        self.rechecks = rechecks = RecheckTask(md, crawler, lambda: workers.running)
        live = LiveStatus(config, clock, workers, refresh, ranking, rechecks)
        self.live_status = live
        self.control = DaemonControl(
            md, config, crawler, workers, ranking, rechecks, live, stop=self.stop
        )
        key = config.opic.checkpoint_key
        self.checkpoints = Checkpoint(md, clock, opic, key, crawler, live)
        self.checkpoints.write()
        # numba and the ranking kernels load now (~1.5 s), not inside the first ranking pass
        from ranking.pagerank import warm_up  # here: the CLI's start-up needs no numba

        warm_up()
        log.info(
            "daemon started on %s (simulated time %s, speed x%g%s)",
            self.repository,
            iso(clock.now()),
            clock.speed,
            ", paused" if self.paused else "",
        )

    def close(self) -> None:
        """Write a last checkpoint, close the metadata and let go of the lock."""
        if self.md is None:
            return
        try:
            self.checkpoints.write()
        except Exception as error:
            if not disk_full(error):
                raise
            self.stop(f"cannot write the last checkpoint: {error}")
        finally:
            self.archive.close_now()  # the exchanges still queued are written, files closed
            self.loader.close()
            self.md.close()
            self.md = None
            self.lock.release()
        log.info("daemon stopped")

    async def run(self) -> None:
        """Run until SIGTERM/SIGINT, :meth:`stop`, ``stop_at`` or a fatal error; raises
        :class:`DaemonStopped` when it stopped on an error (the CLI exits non-zero)."""
        self._stop = asyncio.Event()
        with stopping_on_signals(self.stop):
            self.open()
            try:
                queue_unread(self.md, self.crawler)
                await queue_not_loaded(self.md, self.crawler, self.loader)
                # What start-up built (modules, settings, caches) lives as long as the process:
                # out of the cyclic GC's sight, a full collection no longer stalls the loop
                # for a scan of it (measured: ~90 ms every few seconds).
                gc.freeze()
                self.periodic.start(self._jobs())
                if not self.paused:
                    self.workers.start()
                await self._stop.wait()
            finally:
                self.periodic.pause()  # no new job; running ones end below
                await self.rechecks.cancel()
                await self.workers.close()
                await self.periodic.shutdown()
                self.close()
        if self.failure is not None:
            raise DaemonStopped(self.failure)

    def stop(self, failure: str | None = None) -> None:
        """Ask :meth:`run` to stop taking work and return (``failure`` says why, if bad); a
        ranking pass in progress is cancelled (it is recomputed at the next start)."""
        if self.md is not None:
            self.ranking.cancel()
        if failure is not None and self.failure is None:
            self.failure = failure
            log.error("stopping: %s", failure)
        if self._stop is not None:
            self._stop.set()

    @property
    def paused(self) -> bool:
        """Whether fetching is paused (``xyleme pause``; it survives a restart)."""
        return self.md is not None and self.control.paused

    def add_seeds(self, urls: list[str]) -> Answer:
        """``seed add`` from the dashboard (:meth:`DaemonControl.add_seeds`)."""
        return self.control.add_seeds(urls)

    async def set_paused(self, paused: bool) -> Answer:
        """``pause`` / ``resume`` from the dashboard (:meth:`DaemonControl.set_paused`)."""
        return await self.control.set_paused(paused)

    def _jobs(self) -> list[tuple[str, Any, float]]:
        """The periodic jobs and their real seconds (simulated intervals over the speed)."""
        settings = self.config.daemon

        def every(units: float) -> float:  # real seconds between runs every ``units``
            return self.clock.real_seconds(units * self.config.clock.time_unit)

        release = max(MIN_RELEASE_SECONDS, every(1.0 / RELEASES_PER_UNIT))
        jobs = [
            ("refresh_scan", self.refresh.run, every(1.0)),
            ("release_refreshes", self.refresh.release, release),
            ("ranking", self.ranking.periodic, every(settings.rank_every)),
            ("checkpoint", self.checkpoints.periodic, settings.checkpoint_seconds),
            ("poll_commands", self.control.poll, settings.command_poll),
        ]
        if self.stop_at is not None:
            jobs.append(("stop_at", self._check_stop_at, min(0.1, settings.command_poll)))
        return jobs

    async def _check_stop_at(self) -> None:
        if self.clock.now() >= self.stop_at:
            log.info("reached the end of the run (%s)", iso(self.stop_at))
            self.stop()


def run_daemon(repository: Path, config: Config, **options: Any) -> None:
    """Run a daemon in a fresh event loop until it stops (the ``xyleme run`` command)."""
    asyncio.run(Daemon(repository, config, **options).run())
