"""Running the dashboard: an address to serve on, and the daemon's figures in the shape
:class:`~xyleme.dashboard.live.LiveFigures` asks for.

``xyleme dashboard`` serves with :func:`serving`; ``xyleme run --http`` runs the daemon with
its dashboard through :func:`run_with_dashboard`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web

from xyleme.dashboard.app import create_app


class RunningDaemon(Protocol):
    """What :class:`DaemonFigures` reads of ``xyleme.daemon.Daemon``."""

    paused: bool
    repository: Path
    md: Any  # None until the daemon has opened the repository
    lock: Any  # its ``xyleme.lock.DaemonLock``: taken before the dashboard is announced

    async def run(self) -> None: ...

    def live_status(self) -> dict[str, Any]: ...

    def add_seeds(self, urls: list[str]) -> Any | Awaitable[Any]: ...

    def set_paused(self, paused: bool) -> Any | Awaitable[Any]: ...


class DaemonFigures:
    """A daemon's live figures and admin actions for :func:`~xyleme.dashboard.create_app`.

    ``live_figures()`` is the daemon's own ``live_status()`` (what ``xyleme status`` shows
    after a checkpoint) with ``now`` (its simulated time) and ``paused``; the admin actions are
    the daemon's command-target methods.
    """

    def __init__(self, daemon: RunningDaemon) -> None:
        self.daemon = daemon

    def live_figures(self) -> dict[str, Any]:
        if self.daemon.md is None:  # not started yet, or stopped
            return {"paused": self.daemon.paused}
        facts = self.daemon.live_status()
        return {**facts, "now": facts.get("at"), "paused": self.daemon.paused}

    def add_seeds(self, urls: list[str]) -> Any | Awaitable[Any]:
        return self.daemon.add_seeds(urls)

    def set_paused(self, paused: bool) -> Any | Awaitable[Any]:
        return self.daemon.set_paused(paused)


@contextlib.asynccontextmanager
async def serving(app: web.Application, host: str, port: int) -> AsyncIterator[str]:
    """Serve ``app`` on ``host:port`` (port 0: a free one) while the block runs; yields the
    URL actually bound. An address in use raises :class:`OSError`."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        yield f"http://{shown}:{bound_port}/"
    finally:
        await runner.cleanup()


async def run_with_dashboard(
    daemon: RunningDaemon,
    host: str,
    port: int,
    *,
    admin_token: str | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Run ``daemon`` with its dashboard served on ``host:port``; ``announce`` gets the URL.

    The repository's lock is taken first, so a repository another daemon holds is refused
    before anything is announced; the dashboard is built before the daemon starts (a bad
    address or configuration stops both at once), and served until the daemon stops.
    """
    daemon.lock.acquire()  # raises RepositoryLocked; the daemon keeps what it holds
    try:
        app = create_app(daemon.repository, admin_token=admin_token, live=DaemonFigures(daemon))
        async with serving(app, host, port) as url:
            announce(url)
            await daemon.run()
    finally:
        daemon.lock.release()
