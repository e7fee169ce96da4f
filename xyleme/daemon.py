"""The acquisition daemon (``xyleme run``): one asyncio process that keeps a repository fresh.

The daemon only wires and schedules; every decision is a module's (ARCHITECTURE "Data flow"):

1. at start it takes the repository's lock (:mod:`xyleme.lock`), opens the metadata, and
   restores the simulated clock from where the last run left it (:mod:`xyleme.status`);
2. the periodic jobs run on APScheduler's ``AsyncIOScheduler``, on real time: the intervals
   are simulated durations divided by the clock's speed. Tests build a :class:`Daemon` on a
   ``ManualClock`` and call the jobs themselves (:meth:`Daemon.checkpoint`,
   :meth:`Daemon.poll_commands`) instead of starting the scheduler;
3. state-changing commands of the CLI arrive through the command table
   (:mod:`xyleme.commands`); the daemon is their :class:`~xyleme.commands.CommandTarget`;
4. SIGTERM / SIGINT stop taking work, give in-flight work ``shutdown_deadline`` seconds,
   write a checkpoint and return; after a kill -9 the next start resumes from the database
   and the last checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from metadata import Metadata
from metadata.clock import Clock
from xyleme import commands
from xyleme.commands import Answer
from xyleme.config import Config
from xyleme.lock import DaemonLock
from xyleme.status import restore_clock, save_clock, save_live_status

log = logging.getLogger(__name__)

DATABASE = "metadata.db"


class DaemonStopped(RuntimeError):
    """The daemon had to stop on an error it cannot work around (a full disk, say)."""


class Daemon:
    """The repository's one long-running process.

    Parameters
    ----------
    repository : Path
        The repository folder (made by ``xyleme init``).
    config : Config
        The effective configuration (``xyleme.toml``).
    clock : Clock, optional
        Simulated time; by default restored from the repository at the configured speed.
    stop_at : float, optional
        Simulated time at which the daemon stops by itself (the demo's ``--days``).
    """

    def __init__(
        self,
        repository: Path,
        config: Config,
        *,
        clock: Clock | None = None,
        stop_at: float | None = None,
    ) -> None:
        self.repository = repository
        self.config = config
        self.clock = clock
        self.stop_at = stop_at
        self.lock = DaemonLock(repository)
        self.md: Metadata | None = None
        self.paused = False
        self.passes: dict[str, float | None] = {"refresh": None, "ranking": None}
        self.failure: str | None = None
        self._stop: asyncio.Event | None = None
        self._scheduler: AsyncIOScheduler | None = None

    # ------------------------------------------------------------------ life cycle

    def open(self) -> None:
        """Lock the repository, open its metadata and restore the clock (raises if held)."""
        md = Metadata.open(self.repository / DATABASE, settings=self.config.metadata)
        try:
            self.lock.acquire()
        except BaseException:
            md.close()
            raise
        self.md = md
        if self.clock is None:
            self.clock = restore_clock(self.md, self.config.clock.speed, time.time())
        self.paused = commands.is_paused(self.md)
        self.checkpoint()
        log.info(
            "daemon started on %s (simulated time %s, speed x%g%s)",
            self.repository,
            _iso(self.clock.now()),
            self.clock.speed,
            ", paused" if self.paused else "",
        )

    def close(self) -> None:
        """Write a last checkpoint, close the metadata and let go of the lock."""
        if self.md is None:
            return
        try:
            self.checkpoint()
        finally:
            self.md.close()
            self.md = None
            self.lock.release()
        log.info("daemon stopped")

    async def run(self) -> None:
        """Run until SIGTERM/SIGINT, :meth:`stop`, ``stop_at`` or a fatal error.

        Raises :class:`DaemonStopped` when it stopped on an error (the CLI exits non-zero).
        """
        self._stop = asyncio.Event()
        with self._stopping_on_signals():
            self.open()
            try:
                self._scheduler = self._start_scheduler()
                await self._stop.wait()
            finally:
                if self._scheduler is not None:
                    self._scheduler.shutdown(wait=False)
                self.close()
        if self.failure is not None:
            raise DaemonStopped(self.failure)

    def stop(self, failure: str | None = None) -> None:
        """Ask :meth:`run` to stop taking work and return (``failure`` says why, if bad)."""
        if failure is not None and self.failure is None:
            self.failure = failure
            log.error("stopping: %s", failure)
        if self._stop is not None:
            self._stop.set()

    @contextlib.contextmanager
    def _stopping_on_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT ask for a clean stop while the block runs."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)
        try:
            yield
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        log.info(
            "%s received: finishing in-flight work, then stopping", signal.Signals(signum).name
        )
        self.stop()

    def _start_scheduler(self) -> AsyncIOScheduler:
        """The periodic jobs, on real time (simulated intervals divided by the speed)."""
        settings = self.config.daemon
        scheduler = AsyncIOScheduler()
        jobs = [
            (self._checkpoint_job, settings.checkpoint_seconds),
            (self.poll_commands, settings.command_poll),
        ]
        if self.stop_at is not None:
            jobs.append((self._check_stop_at, min(0.1, settings.command_poll)))
        for job, seconds in jobs:
            scheduler.add_job(job, "interval", seconds=seconds, max_instances=1, coalesce=True)
        scheduler.start()
        return scheduler

    def _real_seconds(self, time_units: float) -> float:
        """Real seconds between two runs of a job that comes every ``time_units``."""
        return self.clock.real_seconds(time_units * self.config.clock.time_unit)

    def _check_stop_at(self) -> None:
        if self.clock.now() >= self.stop_at:
            log.info("reached the end of the run (%s)", _iso(self.stop_at))
            self.stop()

    # ------------------------------------------------------------------ periodic jobs

    def checkpoint(self) -> None:
        """Save what lives in memory: the clock's time and the figures of ``xyleme status``."""
        save_clock(self.md, self.clock)
        save_live_status(self.md, self.live_status())

    def _checkpoint_job(self) -> None:
        try:
            self.checkpoint()
        except sqlite3.OperationalError as error:
            self.stop(f"cannot write the checkpoint: {error}")

    def live_status(self) -> dict[str, Any]:
        """The in-memory figures ``xyleme status`` shows."""
        return {
            "at": self.clock.now(),
            "last_refresh": self.passes["refresh"],
            "last_ranking": self.passes["ranking"],
            "policy": {
                "G": self.config.bandwidth.G,
                "theta": self.config.bandwidth.theta,
                "time_unit": self.config.clock.time_unit,
            },
        }

    def poll_commands(self) -> None:
        """Run the commands the CLI queued while we hold the repository, and answer them."""
        try:
            pending = commands.take_pending(self.md)
        except sqlite3.OperationalError as error:
            log.warning("could not read the command table: %s", error)
            return
        for command_id, name, args in pending:
            try:
                reply = commands.execute(self, name, args)
            except Exception as error:  # a bad command must not take the daemon down
                log.exception("command %r failed", name)
                reply = Answer(f"{name} failed: {error}", ok=False)
            log.info("command %s: %s", name, reply.message)
            commands.answer(self.md, command_id, reply)

    # ------------------------------------------------------------------ commands

    def add_seeds(self, urls: list[str]) -> Answer:
        """``seed add``: store the seeds like the CLI would."""
        return commands.RepositoryTarget(self.md).add_seeds(urls)

    def set_paused(self, paused: bool) -> Answer:
        """``pause`` / ``resume``: remember the choice (it survives a restart)."""
        self.paused = paused
        return commands.RepositoryTarget(self.md).set_paused(paused)


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(seconds))


def run_daemon(repository: Path, config: Config, **options: Any) -> None:
    """Run a daemon in a fresh event loop until it stops (the ``xyleme run`` command)."""
    asyncio.run(Daemon(repository, config, **options).run())
