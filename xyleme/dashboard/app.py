"""The aiohttp application: its routes, error handling, security headers and live sampling.

The pages and their JSON API are in :mod:`.views`, the admin actions in :mod:`.admin`.
Everything user-supplied is validated (:mod:`.params`) and escaped (Jinja2's autoescaping, SVG
text escaped in :mod:`.svg`); responses carry a Content-Security-Policy that allows no script
and nothing from elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from aiohttp import web

from xyleme.dashboard import admin, hosts, pagelists, urls, views
from xyleme.dashboard.cache import Refreshed
from xyleme.dashboard.figures import PageNotFound, RepositoryFigures, ScheduleUnavailable
from xyleme.dashboard.keys import (
    ACTIONS,
    ADMIN_TOKEN,
    FIGURES,
    HISTORY,
    QUERIES,
    SETTINGS,
    STATUS,
    STATUS_PROCESS,
    TEMPLATES,
)
from xyleme.dashboard.live import AdminActions, LiveFigures, LiveHistory
from xyleme.dashboard.params import InputError
from xyleme.dashboard.queries import QueryPool
from xyleme.dashboard.rendering import render, templates
from xyleme.dashboard.settings import DashboardSettings, refresh_settings
from xyleme.dashboard.statusprocess import StatusProcess
from xyleme.lock import holder_pid

log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
STATIC = Path(__file__).with_name("static")


def create_app(
    repo_dir: Path | str,
    *,
    admin_token: str | None = None,
    live: LiveFigures | None = None,
    actions: AdminActions | None = None,
    settings: DashboardSettings | None = None,
) -> web.Application:
    """The dashboard of the repository in ``repo_dir``, read-only unless ``admin_token`` is set.

    Parameters
    ----------
    repo_dir
        A repository made by ``xyleme init``; its metadata is opened read-only at once (a
        folder that is not a repository raises ``metadata.NotARepository``).
    admin_token
        Enables the admin actions (pause, resume, add seeds) for requests that carry it;
        None (the default) refuses them all with 403.
    live
        The daemon's live figures (:class:`~xyleme.dashboard.live.LiveFigures`); sampled every
        ``live_sample_seconds`` while the app runs. If it also has ``add_seeds`` and
        ``set_paused`` it serves the admin actions, unless ``actions`` is given.
    actions
        What carries out the admin actions (:class:`~xyleme.dashboard.live.AdminActions`).
    settings
        Table sizes and limits (:class:`~xyleme.dashboard.settings.DashboardSettings`).
    """
    if admin_token is not None and len(admin_token) < 8:
        raise ValueError("an admin token must have at least 8 characters")
    settings = settings or DashboardSettings()
    repo_dir = Path(repo_dir)
    app = web.Application(
        middlewares=[_errors_and_headers], client_max_size=settings.max_body_bytes
    )
    app[SETTINGS] = settings
    app[QUERIES] = QueryPool(
        settings.query_workers,
        settings.query_queue,
        settings.query_time_limit_s,
        settings.query_memory_mb,
        idle=lambda: live is not None or holder_pid(repo_dir) is not None,  # a crawl to protect
    )
    refresh = refresh_settings(repo_dir)
    app[FIGURES] = RepositoryFigures(repo_dir, settings, refresh)
    app[STATUS] = Refreshed(settings.cache_seconds)
    if live is not None:  # a daemon shares this process: its figures take none of its GIL
        app[STATUS_PROCESS] = StatusProcess(app[FIGURES], settings, refresh)
    app[TEMPLATES] = templates()
    if admin_token is not None:
        app[ADMIN_TOKEN] = admin_token
    if actions is None and isinstance(live, AdminActions):
        actions = live
    if actions is not None:
        app[ACTIONS] = actions
    if live is not None:
        app[HISTORY] = LiveHistory(live, settings.live_samples_kept)
        app.cleanup_ctx.append(_sample_live_figures)
    app.on_cleanup.append(_close_figures)
    app.router.add_routes(
        [
            web.get("/", views.overview),
            web.get("/schedule", views.schedule),
            web.get("/rankings", views.rankings),
            web.get("/page", views.page),
            web.get("/query", views.query),
            web.get("/api/status", views.api_status),
            web.get("/api/schedule", views.api_schedule),
            web.get("/api/rankings", views.api_rankings),
            web.get("/api/page", views.api_page),
            web.get("/api/page/{list}", pagelists.api_page_list),
            web.get("/api/query", views.api_query),
            web.get("/api/hosts", hosts.api_hosts),
            web.get("/api/urls", urls.api_urls),
            web.get("/metrics", views.metrics),
            web.post("/api/admin/pause", admin.pause),
            web.post("/api/admin/resume", admin.resume),
            web.post("/api/admin/seeds", admin.add_seeds),
            web.static("/static", STATIC),
        ]
    )
    return app


async def _close_figures(app: web.Application) -> None:
    app[FIGURES].close()
    if STATUS_PROCESS in app:
        app[STATUS_PROCESS].close()


async def _sample_live_figures(app: web.Application) -> AsyncIterator[None]:
    """Sample the live figures periodically while the app runs (rates over time)."""
    history, seconds = app[HISTORY], app[SETTINGS].live_sample_seconds

    async def sample_forever() -> None:
        while True:
            try:
                history.sample()
            except Exception:  # a failing source must not kill the sampler
                log.exception("live figures could not be read")
            await asyncio.sleep(seconds)

    task = asyncio.create_task(sample_forever())
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@web.middleware
async def _errors_and_headers(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Bad input → 400, unknown page → 404, a schedule the refresh module cannot compute →
    503, too many queries → 429 (with ``Retry-After``), anything unexpected → 500 without a
    traceback;
    JSON for ``/api/``, an HTML message page otherwise; security headers on every answer."""
    try:
        response = await handler(request)
    except InputError as error:
        response = _failure(request, 400, str(error))
    except PageNotFound as error:
        response = _failure(request, 404, str(error))
    except ScheduleUnavailable as error:
        response = _failure(request, 503, str(error))
    except web.HTTPException as error:
        if error.status < 400:
            raise
        response = _failure(request, error.status, error.text or error.reason)
        for header in ("Retry-After", "WWW-Authenticate"):
            if header in error.headers:
                response.headers[header] = error.headers[header]
    except Exception:
        log.exception("dashboard request %s failed", request.path)
        response = _failure(request, 500, "internal error: see the server's log")
    response.headers.update(SECURITY_HEADERS)
    return response


def _failure(request: web.Request, status: int, message: str) -> web.Response:
    if request.path.startswith("/api/") or request.path == "/metrics":
        return web.json_response({"error": message}, status=status)
    return render(request, "error.html", "Error", "", {"message": message}, status=status)
