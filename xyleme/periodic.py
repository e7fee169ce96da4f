"""The daemon's periodic jobs on APScheduler's ``AsyncIOScheduler``, on real time.

Every job is a coroutine function, so APScheduler runs it on the event loop, never in a
thread: the daemon's objects are used from the loop only. A job that fails is logged and runs
again next time; one that finds the disk full stops the daemon (``on_disk_full``); a stop lets
the running jobs finish (they may be writing in a thread) before the store is closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from xyleme.stopping import disk_full

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[object]]


class PeriodicJobs:
    """Jobs every so many real seconds; ``on_disk_full(reason)`` stops the daemon."""

    def __init__(self, on_disk_full: Callable[[str], None]) -> None:
        self.on_disk_full = on_disk_full
        self._scheduler = AsyncIOScheduler()
        self._running: set[asyncio.Task] = set()
        self._started = False

    def start(self, jobs: list[tuple[str, Job, float]]) -> None:
        """Run each ``(name, job, seconds)`` every ``seconds``, never two of one at once."""
        for name, job, seconds in jobs:
            self._scheduler.add_job(
                self.run,
                "interval",
                args=[job, name],
                seconds=seconds,
                max_instances=1,
                coalesce=True,
                id=name,
            )
        self._scheduler.start()
        self._started = True

    async def run(self, job: Job, name: str | None = None) -> None:
        """Run one job; a stop lets it finish (it may be writing in a thread)."""
        task = asyncio.current_task()
        self._running.add(task)
        try:
            await job()
        except Exception as error:
            if disk_full(error):  # nothing more can be written: stop cleanly, say why
                self.on_disk_full(f"cannot write to the repository: {error}")
            else:
                name = name or getattr(job, "__name__", repr(job))
                log.exception("periodic job %s failed (it runs again next time)", name)
        finally:
            self._running.discard(task)

    def pause(self) -> None:
        """No new job starts (running ones go on)."""
        if self._started:
            self._scheduler.pause()

    async def shutdown(self) -> None:
        """No new job starts; the running ones finish before the store is closed."""
        if not self._started:
            return
        self._scheduler.pause()
        if self._running:
            log.info("waiting for %d periodic job(s) to finish", len(self._running))
        await asyncio.gather(*self._running, return_exceptions=True)
        self._scheduler.shutdown(wait=False)
        self._started = False
