"""The overview's figures computed in a process of their own when a daemon shares the server.

Why: :meth:`RepositoryFigures.status` scans every page (the refresh report, the URLs, the
growth curve): seconds of Python every ``cache_seconds`` under a large repository. In a
thread of the daemon's process that work holds the GIL the daemon's event loop needs, so every
fetch step waited for it (measured with ``benchmarks/bench_dashboard.py``: the status thread
was a third of the process's CPU, and each step of the loop spent as long waiting for the
GIL as running). In a process of its own, at a lower priority, it takes neither the GIL
nor the CPU the crawl needs; the metadata is a WAL database, so that process reads the
daemon's commits as a thread would.

The worker starts at the first status request, whose figures are computed in a thread
meanwhile (the one scan that shares the GIL): no request waits for a process to start, and a
server that is never asked starts none. As every program that starts processes the
``spawn`` way, one that embeds this dashboard runs under an ``if __name__ == "__main__":``
guard (``xyleme`` does).

A standalone dashboard (``xyleme dashboard``) has no crawl to protect: it keeps computing
in a thread (no process to start, no second copy of the figures' imports).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from refresh.settings import RefreshSettings
from xyleme.dashboard.figures import RepositoryFigures
from xyleme.dashboard.settings import DashboardSettings

NICENESS = 10
"""Below the daemon (0), above the XPath query workers (19): the figures stay fresh while
heavy queries run, and the crawl comes first."""

_figures: RepositoryFigures | str | None = None  # the worker's own, or why it has none


def _open_figures(repo_dir: Path, settings: DashboardSettings, refresh: RefreshSettings) -> None:
    """The worker process's start: a lower priority, then its read-only figures (a failure
    is told by each computation, to the server's log)."""
    global _figures
    os.nice(NICENESS)
    try:
        _figures = RepositoryFigures(repo_dir, settings, refresh)
    except Exception as error:  # the repository went away: the server reports it if asked
        _figures = f"the status worker cannot open the repository: {error}"


def _status(live: dict[str, Any] | None) -> dict[str, Any]:
    if not isinstance(_figures, RepositoryFigures):
        raise RuntimeError(_figures or "the status worker has no figures")
    return _figures.status(live)


class StatusProcess:
    """One worker process that answers :meth:`RepositoryFigures.status`, started at the first
    request and again after a crash (that request fails; the cache keeps its last value).

    ``figures`` are the server's own, which compute the figures of the request that starts
    the worker, in a thread."""

    def __init__(
        self, figures: RepositoryFigures, settings: DashboardSettings, refresh: RefreshSettings
    ) -> None:
        self._figures = figures
        self._arguments = (figures.repo_dir, settings, refresh)
        self._pool: ProcessPoolExecutor | None = None

    async def status(self, live: dict[str, Any] | None) -> dict[str, Any]:
        """The figures of :meth:`RepositoryFigures.status`, computed in the worker (in a
        thread while the worker starts)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),  # a threaded parent: no fork
                initializer=_open_figures,
                initargs=self._arguments,
            )
            self._pool.submit(int)  # the process starts now, not at the next refresh
            return await asyncio.to_thread(self._figures.status, live)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, _status, live)
        except BrokenProcessPool:
            self.close()
            raise

    def close(self) -> None:
        """Stop the worker (without waiting for a computation under way)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
