"""The crawler's workers as the daemon runs them: started at start and on ``resume``,
stopped on ``pause`` and at the stop (in-flight fetches get the crawler's
``shutdown_deadline``), their large bodies spooled in the repository."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from xyleme.crawler import SPOOLED_BODIES, Crawler, CrawlerSettings


def spooled_settings(settings: CrawlerSettings, spool: Path) -> CrawlerSettings:
    """The crawler's settings, its large bodies spooled in ``spool`` (unless the settings
    name another folder), emptied of the bodies a kill -9 left behind: their fetches were not
    committed and will be made again."""
    if not settings.spool_dir:
        settings = replace(settings, spool_dir=str(spool))
    folder = Path(settings.spool_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(SPOOLED_BODIES):
        stale.unlink(missing_ok=True)
    return settings


class Workers:
    """One background task running the crawler until told to stop; closed at the process's
    stop, after which nothing starts it again (a heartbeat or a ``resume`` that was under way
    when the stop came once restarted the crawler beside the stop's last writes)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._task: asyncio.Task | None = None
        self._closed = False

    @property
    def running(self) -> bool:
        """Whether the workers fetch (they stop by themselves only on a stop)."""
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        """Let the workers run (no-op when they do, or once closed)."""
        if not self.running and not self._closed:
            self._task = asyncio.create_task(self.crawler.run(until_idle=False), name="crawler")

    async def stop(self) -> None:
        """Stop the workers and wait for them (a ``pause``: :meth:`start` runs them again)."""
        if self._task is not None:
            self.crawler.stop()
            await self._task
            self._task = None

    async def close(self) -> None:
        """Stop the workers for good: the process is stopping."""
        self._closed = True
        await self.stop()
