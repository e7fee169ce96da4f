"""The re-check as the daemon runs it: ``xyleme recheck`` handed over by the CLI.

The same engine as a direct run (:func:`xyleme.jobs.recheck.recheck`), its probe sharing the
daemon's crawler (session, robots.txt, host slots: :meth:`CrawlerProbe.sharing`), so it needs
fetching to run. The answer comes at once ("started"); progress goes to the log and to
``xyleme status``, the summary to the log when it ends. One at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from metadata import Metadata
from ranking.liverank import LiveRankSession
from xyleme.commands import Answer
from xyleme.crawler import Crawler
from xyleme.crawler.probe import CrawlerProbe
from xyleme.jobs.recheck import RecheckProgress, recheck
from xyleme.jobs.recheck_request import (
    NothingToRecheck,
    RecheckRequest,
    prepare,
    progress_line,
    summary,
)

log = logging.getLogger(__name__)


class RecheckTask:
    """The daemon's background re-check; ``status`` is its last progress, for status.

    ``fetching`` says whether the crawler's workers run (a re-check needs them).
    """

    def __init__(self, md: Metadata, crawler: Crawler, fetching: Callable[[], bool]) -> None:
        self.md = md
        self.crawler = crawler
        self.fetching = fetching
        self.task: asyncio.Task | None = None
        """The re-check running in the background, if any."""
        self.status: dict[str, Any] | None = None
        """The last re-check's progress (``state`` running, done, failed or cancelled)."""

    async def start(self, args: dict[str, Any]) -> Answer:
        """Start a re-check with the command's ``args`` (a :class:`RecheckRequest`)."""
        if self.task is not None and not self.task.done():
            return Answer(f"a re-check is already running ({self.status['line']})", ok=False)
        if not self.fetching():
            return Answer("fetching is paused: `xyleme resume` first", ok=False)
        request = RecheckRequest(**args)
        try:
            session, url_ids = await asyncio.to_thread(prepare, self.md, request)
        except NothingToRecheck as error:
            return Answer(str(error), ok=False)
        probe = CrawlerProbe.sharing(self.crawler, method=request.method)
        self._progress(RecheckProgress(session.n_pages, 0, 0, 0, 0))
        self.task = asyncio.create_task(self._run(request, session, url_ids, probe), name="recheck")
        planned = session.n_pages if request.budget is None else min(request.budget, len(url_ids))
        return Answer(
            f"re-check started by the daemon: {planned} of {session.n_pages} pages in LiveRank "
            f"order {request.strategy!r} ({request.method.upper()}); `xyleme status` follows it",
            {"started": True, "pages": session.n_pages, "planned": planned, **args},
        )

    async def cancel(self) -> None:
        """Stop a running re-check (pause, stop): what it tested is recorded already."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.status["state"] = "cancelled"
            log.info("re-check cancelled: %s", self.status["line"])

    async def _run(
        self,
        request: RecheckRequest,
        session: LiveRankSession,
        url_ids: np.ndarray,
        probe: CrawlerProbe,
    ) -> None:
        """The background re-check: every answer recorded by the probe, progress kept."""
        step = max(1, min(len(url_ids), request.budget or len(url_ids)) // 20)

        def on_progress(progress: RecheckProgress) -> None:
            self._progress(progress)
            if progress.fetches % step == 0:
                log.info("re-check: %s", progress_line(progress))

        try:
            async with probe:
                report = await recheck(
                    session,
                    url_ids,
                    probe,
                    budget=request.budget,
                    concurrency=request.concurrency,
                    on_progress=on_progress,
                )
        except Exception:
            self.status["state"] = "failed"
            log.exception("re-check failed")
            return
        figures = summary(request, report, probe.fetches)
        self.status = {**self.status, **figures, "state": "done"}
        log.info(
            "re-check done: %d of %d pages tested, %d alive, %d dead, %d unknown; "
            "fraction alive %.3f%s",
            figures["fetches"],
            figures["pages"],
            figures["alive"],
            figures["dead"],
            figures["unknown"],
            figures["fraction_alive"],
            "" if figures["complete"] else " (budget spent)",
        )

    def _progress(self, progress: RecheckProgress) -> None:
        self.status = {
            "state": "running",
            "pages": progress.pages,
            "fetches": progress.fetches,
            "alive": progress.alive,
            "dead": progress.dead,
            "unknown": progress.unknown,
            "fraction_alive": round(progress.fraction_alive, 4),
            "line": progress_line(progress),
        }
