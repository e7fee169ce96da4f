"""The aiohttp application: server-rendered views, their JSON API, /metrics and admin actions.

Every view has a JSON twin under ``/api/`` made from the same dict, so what the page shows
is what the API answers. The repository is read in worker threads (:mod:`.figures`); the
event loop, which a daemon may share, only renders. Everything user-supplied is validated
(:mod:`.params`) and escaped (Jinja2's autoescaping, SVG text escaped in :mod:`.svg`);
responses carry a Content-Security-Policy that allows no script and nothing from elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
import numpy as np
from aiohttp import web
from markupsafe import Markup

from xyleme.dashboard import svg
from xyleme.dashboard.figures import PageNotFound, RepositoryFigures, ScheduleUnavailable
from xyleme.dashboard.live import AdminActions, LiveFigures, LiveHistory
from xyleme.dashboard.metrics import metrics_text
from xyleme.dashboard.params import InputError, int_param, page_target, text_param
from xyleme.dashboard.settings import DashboardSettings, refresh_settings
from xyleme.dashboard.warehouse import QueryFailed, run_xpath

log = logging.getLogger(__name__)

FIGURES = web.AppKey("figures", RepositoryFigures)
SETTINGS = web.AppKey("settings", DashboardSettings)
HISTORY = web.AppKey("history", LiveHistory)
ADMIN_TOKEN = web.AppKey("admin_token", str)
ACTIONS = web.AppKey("actions", AdminActions)
TEMPLATES = web.AppKey("templates", jinja2.Environment)

NAV = (
    ("/", "Overview"),
    ("/schedule", "Refresh schedule"),
    ("/rankings", "Rankings"),
    ("/query", "Query"),
)
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
TIME_FIELDS = frozenset(
    {"first_access", "last_access", "last_change", "last_modified", "next_refresh", "discovered_at"}
)
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
    app = web.Application(middlewares=[_errors_and_headers], client_max_size=64 * 1024)
    app[SETTINGS] = settings
    app[FIGURES] = RepositoryFigures(repo_dir, settings, refresh_settings(repo_dir))
    app[TEMPLATES] = _templates()
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
            web.get("/", overview),
            web.get("/schedule", schedule),
            web.get("/rankings", rankings),
            web.get("/page", page),
            web.get("/query", query),
            web.get("/api/status", api_status),
            web.get("/api/schedule", api_schedule),
            web.get("/api/rankings", api_rankings),
            web.get("/api/page", api_page),
            web.get("/api/query", api_query),
            web.get("/metrics", metrics),
            web.post("/api/admin/pause", admin_pause),
            web.post("/api/admin/resume", admin_resume),
            web.post("/api/admin/seeds", admin_seeds),
            web.static("/static", STATIC),
        ]
    )
    return app


# ---------------------------------------------------------------------- plumbing


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("xyleme.dashboard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = _when
    env.filters["num"] = _num
    env.filters["changed_class"] = lambda changed: {None: "first", True: "changed"}.get(
        changed, "unchanged"
    )
    return env


def _when(seconds: float | None) -> str:
    if seconds is None or not isinstance(seconds, int | float) or not np.isfinite(seconds):
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _num(value: Any) -> str:
    """A table cell: 4 significant digits for a float, "-" for unknown."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


async def _close_figures(app: web.Application) -> None:
    app[FIGURES].close()


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
    503, anything unexpected → 500 without a traceback;
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
    except Exception:
        log.exception("dashboard request %s failed", request.path)
        response = _failure(request, 500, "internal error: see the server's log")
    response.headers.update(SECURITY_HEADERS)
    return response


def _failure(request: web.Request, status: int, message: str) -> web.Response:
    if request.path.startswith("/api/") or request.path == "/metrics":
        return web.json_response({"error": message}, status=status)
    return _render(request, "error.html", "Error", "", {"message": message}, status=status)


def _render(
    request: web.Request,
    template: str,
    title: str,
    current: str,
    context: dict[str, Any],
    *,
    status: int = 200,
    now: float | None = None,
) -> web.Response:
    text = (
        request.app[TEMPLATES]
        .get_template(template)
        .render(title=title, nav=NAV, current=current, now=now, **context)
    )
    return web.Response(text=text, content_type="text/html", status=status)


async def _in_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(function, *args, **kwargs)


def _live(request: web.Request) -> dict[str, Any] | None:
    history = request.app.get(HISTORY)
    if history is None:
        return None
    figures = dict(history.latest())
    figures["rates"] = history.rates()
    return figures


def _pager(path: str, params: dict[str, str], offset: int, limit: int, total: int) -> dict:
    return {
        "base": f"{path}?{urlencode({**params, 'limit': limit})}",
        "previous": max(offset - limit, 0) if offset > 0 else None,
        "next": offset + limit if offset + limit < total else None,
    }


# ---------------------------------------------------------------------- Overview


async def _status(request: web.Request) -> dict[str, Any]:
    return await _in_thread(request.app[FIGURES].status, _live(request))


async def api_status(request: web.Request) -> web.Response:
    return web.json_response(await _status(request))


async def overview(request: web.Request) -> web.Response:
    status = await _status(request)
    growth, live = status["growth"], status["live"]
    charts = {
        "growth": svg.line_chart(
            "Repository growth",
            np.array(growth["at"]),
            {"discovered": np.array(growth["discovered"]), "read": np.array(growth["read"])},
            x_label="simulated time",
            y_label="pages",
            x_format=lambda t: _when(t)[5:16],
        ),
        "types": svg.bar_chart(
            "Pages by type", list(status["pages"]), list(status["pages"].values()), y_label="pages"
        ),
    }
    queues: list[tuple[str, Any]] = []
    if live is not None:
        queues = sorted((str(k), v) for k, v in (live.get("queues") or {}).items())
        charts["queues"] = svg.bar_chart(
            "Queue sizes by priority level",
            [level for level, _ in queues],
            [size for _, size in queues],
            x_label="level (0 DTD, 1 refresh, 2 discovery, 3 scouting, 4 background)",
            y_label="requests",
        )
        rates = live["rates"]
        charts["rates"] = svg.line_chart(
            "Fetch rate and errors (per real second)",
            np.array(rates["at"]),
            {"fetches": np.array(rates["fetch_rate"]), "errors": np.array(rates["error_rate"])},
            x_label="real time (UTC)",
            x_format=lambda t: _when(t)[11:19],
        )
    return _render(
        request,
        "overview.html",
        "Overview",
        "/",
        {
            "status": status,
            "charts": {name: Markup(chart) for name, chart in charts.items()},
            "queues": queues,
            "admin": ADMIN_TOKEN in request.app,
        },
        now=status["now"],
    )


# ---------------------------------------------------------------------- Refresh schedule


async def _schedule(request: web.Request) -> dict[str, Any]:
    settings = request.app[SETTINGS]
    search = text_param(request, "q", max_length=2048)
    offset = int_param(request, "offset", 0, 0, 10**9)
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    live_now = (_live(request) or {}).get("now")
    return await _in_thread(request.app[FIGURES].schedule, search, offset, limit, live_now)


async def api_schedule(request: web.Request) -> web.Response:
    return web.json_response(await _schedule(request))


async def schedule(request: web.Request) -> web.Response:
    data = await _schedule(request)
    policy = data["policy"]
    due = data["due_per_unit"]
    charts = {
        "due": svg.bar_chart(
            "Refreshes due per coming time unit",
            [str(unit) for unit in range(len(due))],
            due,
            x_label="time unit from now",
            y_label="pages",
            reference=policy["refresh_bandwidth_Gr"],
            reference_label="G_r",
        ),
        "intervals": svg.log_histogram(
            "Refresh intervals", np.array(data["intervals_units"]), x_label="interval (units)"
        ),
        "rates": svg.log_histogram(
            "Estimated change rates λ",
            np.array(data["change_rates_per_unit"]),
            x_label="changes per unit",
        ),
    }
    pager = _pager(
        "/schedule", {"q": data["search"]}, data["offset"], data["limit"], data["matched"]
    )
    return _render(
        request,
        "schedule.html",
        "Refresh schedule",
        "/schedule",
        {"data": data, "charts": {k: Markup(v) for k, v in charts.items()}, "pager": pager},
        now=data["now"],
    )


# ---------------------------------------------------------------------- Rankings

RANK_TABLES = (
    ("xml_importance", "Top XML pages by importance (direct PageRank)"),
    ("html_interest", "Top HTML pages by interest (inverse PageRank towards XML)"),
    ("opic", "Top pages by OPIC estimate"),
)


async def _rankings(request: web.Request) -> dict[str, Any]:
    settings = request.app[SETTINGS]
    top = int_param(request, "top", settings.top_pages, 1, settings.max_page_size)
    return await _in_thread(request.app[FIGURES].rankings, top)


async def api_rankings(request: web.Request) -> web.Response:
    return web.json_response(await _rankings(request))


async def rankings(request: web.Request) -> web.Response:
    data = await _rankings(request)
    chart = svg.rank_plot(
        "Rank distributions",
        {
            "XML importance": np.array(data["xml_importance"]["distribution"]),
            "HTML interest": np.array(data["html_interest"]["distribution"]),
            "OPIC estimate": np.array(data["opic"]["distribution"]),
        },
    )
    return _render(
        request,
        "rankings.html",
        "Rankings",
        "/rankings",
        {"data": data, "chart": Markup(chart), "tables": RANK_TABLES},
    )


# ---------------------------------------------------------------------- Page view


async def _page(request: web.Request) -> dict[str, Any]:
    url, url_id = page_target(request)
    live_now = (_live(request) or {}).get("now")
    return await _in_thread(request.app[FIGURES].page, url, url_id, live_now)


async def api_page(request: web.Request) -> web.Response:
    return web.json_response(await _page(request))


async def page(request: web.Request) -> web.Response:
    data = await _page(request)
    return _render(request, "page.html", "Page", "", {"data": data, "time_fields": TIME_FIELDS})


# ---------------------------------------------------------------------- Query


async def _query(request: web.Request) -> dict[str, Any]:
    settings = request.app[SETTINGS]
    xpath = text_param(request, "xpath", max_length=settings.max_xpath_length)
    offset = int_param(request, "offset", 0, 0, 10**6)
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    answer: dict[str, Any] = {
        "xpath": xpath,
        "offset": offset,
        "limit": limit,
        "results": [],
        "more": False,
        "error": None,
    }
    if not xpath:
        return answer
    try:
        results, more = await _in_thread(
            run_xpath,
            request.app[FIGURES].repo_dir,
            xpath,
            offset,
            limit,
            settings.query_time_limit_s,
        )
    except QueryFailed as error:
        answer["error"] = str(error)
        return answer
    answer.update(results=results, more=more)
    return answer


async def api_query(request: web.Request) -> web.Response:
    answer = await _query(request)
    return web.json_response(answer, status=400 if answer["error"] else 200)


async def query(request: web.Request) -> web.Response:
    data = await _query(request)
    pager = _pager(
        "/query",
        {"xpath": data["xpath"]},
        data["offset"],
        data["limit"],
        data["offset"] + len(data["results"]) + (1 if data["more"] else 0),
    )
    return _render(
        request,
        "query.html",
        "Query",
        "/query",
        {"data": data, "pager": pager},
        status=400 if data["error"] else 200,
    )


# ---------------------------------------------------------------------- /metrics


async def metrics(request: web.Request) -> web.Response:
    figures = request.app[FIGURES]
    live = _live(request)
    status = await _in_thread(figures.status, live)
    try:
        due = (await _in_thread(figures.schedule, "", 0, 1, (live or {}).get("now")))[
            "due_per_unit"
        ]
    except ScheduleUnavailable:
        due = []  # the status's policy carries the error; pages by type are still served
    body, content_type = metrics_text(status, due)
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response


# ---------------------------------------------------------------------- admin actions


async def _authorised_actions(request: web.Request) -> tuple[AdminActions, dict[str, Any]]:
    """The admin target and the request's fields, or 403 when admin is off or the token wrong."""
    token = request.app.get(ADMIN_TOKEN)
    if token is None:
        raise web.HTTPForbidden(text="admin actions are disabled: start with --http-admin")
    fields: dict[str, Any] = {}
    if request.content_type == "application/json":
        try:
            fields = await request.json()
        except ValueError:
            raise InputError("the request body is not valid JSON") from None
        if not isinstance(fields, dict):
            raise InputError("the request body must be a JSON object")
    elif request.can_read_body:
        fields = dict(await request.post())
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    given = given or str(fields.get("token", ""))
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise web.HTTPForbidden(text="wrong or missing admin token")
    actions = request.app.get(ACTIONS)
    if actions is None:
        raise web.HTTPServiceUnavailable(
            text="no daemon serves admin actions here: use the CLI (xyleme pause, seed add)"
        )
    return actions, fields


async def _answer(result: Any) -> web.Response:
    if inspect.isawaitable(result):
        result = await result
    ok = bool(getattr(result, "ok", True))
    return web.json_response(
        {"ok": ok, "message": str(getattr(result, "message", result))}, status=200 if ok else 400
    )


async def admin_pause(request: web.Request) -> web.Response:
    actions, _ = await _authorised_actions(request)
    return await _answer(actions.set_paused(True))


async def admin_resume(request: web.Request) -> web.Response:
    actions, _ = await _authorised_actions(request)
    return await _answer(actions.set_paused(False))


async def admin_seeds(request: web.Request) -> web.Response:
    actions, fields = await _authorised_actions(request)
    urls = fields.get("urls", [])
    if isinstance(urls, str):
        urls = urls.split()
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        raise InputError("give the seeds as 'urls': a list of URLs (or a text, one a line)")
    if len(urls) > 1000 or any(len(url) > 2048 for url in urls):
        raise InputError("at most 1000 seed URLs of at most 2048 characters each")
    return await _answer(actions.add_seeds(urls))
