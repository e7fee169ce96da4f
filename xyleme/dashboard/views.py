"""The read-only pages and their JSON twins: overview, refresh schedule, rankings, page,
query and /metrics.

Every view has a JSON twin under ``/api/`` made from the same dict, so what the page shows is
what the API answers. The repository is read in worker threads (:mod:`.figures`): the event
loop, which a daemon may share, only renders.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
from aiohttp import web
from markupsafe import Markup

from xyleme.dashboard import svg
from xyleme.dashboard.figures import ScheduleUnavailable
from xyleme.dashboard.keys import ADMIN_TOKEN, FIGURES, QUERIES, SETTINGS, STATUS, STATUS_PROCESS
from xyleme.dashboard.metrics import metrics_text
from xyleme.dashboard.paging import cursor_param, encode_cursor, paged
from xyleme.dashboard.params import InputError, int_param, page_target, text_param
from xyleme.dashboard.queries import QueryAbandoned, QueryBusy, QueryFailed, unless_gone
from xyleme.dashboard.rendering import live_figures, pager, render
from xyleme.dashboard.warehouse import DOCUMENTS
from xyleme.timestamps import when

TIME_FIELDS = frozenset(
    {"first_access", "last_access", "last_change", "last_modified", "next_refresh", "discovered_at"}
)


# ---------------------------------------------------------------------- Overview


async def _shown_status(request: web.Request) -> tuple[dict[str, Any], bytes]:
    """The repository's figures (at most ``cache_seconds`` old, never computed on the
    request's path but the first) with the daemon's live figures of this instant, and their
    JSON: made once per change of either, shared by the requests in between."""
    figures, live = request.app[FIGURES], live_figures(request)
    process = request.app.get(STATUS_PROCESS)
    cache = request.app[STATUS]
    status = await cache.get(
        (lambda: process.status(live))
        if process is not None
        else (lambda: asyncio.to_thread(figures.status, live))
    )
    return cache.shown.get((status, live), lambda: _merged(status, live))


def _merged(status: dict[str, Any], live: dict[str, Any] | None) -> tuple[dict[str, Any], bytes]:
    if live is not None:
        now = live.get("now")
        status = {**status, "live": live, "now": status["now"] if now is None else float(now)}
    return status, json.dumps(status).encode()


async def _status(request: web.Request) -> dict[str, Any]:
    return (await _shown_status(request))[0]


async def api_status(request: web.Request) -> web.Response:
    return web.Response(body=(await _shown_status(request))[1], content_type="application/json")


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
            x_format=lambda t: when(t)[5:16],
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
            x_format=lambda t: when(t)[11:19],
        )
    return render(
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
    cursor = cursor_param(request, ["schedule"], [float, int])
    live_now = (live_figures(request) or {}).get("now")
    return await asyncio.to_thread(
        request.app[FIGURES].schedule,
        search,
        offset,
        limit,
        live_now,
        None if cursor is None else cursor[1],
    )


@paged("pages")
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
            "Refresh intervals", data["intervals_histogram"], x_label="interval (units)"
        ),
        "rates": svg.log_histogram(
            "Estimated change rates λ",
            data["change_rates_histogram"],
            x_label="changes per unit",
        ),
    }
    links = pager(
        "/schedule", {"q": data["search"]}, data["offset"], data["limit"], data["matched"]
    )
    return render(
        request,
        "schedule.html",
        "Refresh schedule",
        "/schedule",
        {"data": data, "charts": {k: Markup(v) for k, v in charts.items()}, "pager": links},
        now=data["now"],
    )


# ---------------------------------------------------------------------- Rankings

RANK_CURVES = (
    ("xml_importance", "XML importance"),
    ("html_interest", "HTML interest"),
    ("opic", "OPIC estimate"),
)
RANK_TABLES = (
    ("xml_importance", "Top XML pages by importance (direct PageRank)"),
    ("html_interest", "Top HTML pages by interest (inverse PageRank towards XML)"),
    ("opic", "Top pages by OPIC estimate"),
)


async def _rankings(request: web.Request) -> dict[str, Any]:
    """``limit`` rows of each table (``top`` is its older name); a ``cursor`` continues the
    one table it came from."""
    if "top" in request.query and "limit" in request.query:
        raise InputError("give limit or top (its older name), not both")
    settings = request.app[SETTINGS]
    name = "top" if "top" in request.query else "limit"
    limit = int_param(request, name, settings.top_pages, 1, settings.max_page_size)
    cursor = cursor_param(request, ["rankings"], [str, float, int])
    start = None
    if cursor is not None:
        table, *key = cursor[1]
        if table not in dict(RANK_TABLES):
            raise InputError("cursor is not one this list gave: start again without it")
        start = (table, tuple(key))
    return await asyncio.to_thread(request.app[FIGURES].rankings, limit, start)


@paged("xml_importance.pages", "html_interest.pages", "opic.pages")
async def api_rankings(request: web.Request) -> web.Response:
    return web.json_response(await _rankings(request))


async def rankings(request: web.Request) -> web.Response:
    data = await _rankings(request)
    chart = svg.rank_plot(
        "Rank distributions",
        {
            label: (data[name]["distribution_ranks"], data[name]["distribution"])
            for name, label in RANK_CURVES
            if name in data
        },
    )
    return render(
        request,
        "rankings.html",
        "Rankings",
        "/rankings",
        {"data": data, "chart": Markup(chart), "tables": RANK_TABLES},
    )


# ---------------------------------------------------------------------- Page view


async def _page(request: web.Request) -> dict[str, Any]:
    url, url_id = page_target(request)
    live_now = (live_figures(request) or {}).get("now")
    return await asyncio.to_thread(request.app[FIGURES].page, url, url_id, live_now)


async def api_page(request: web.Request) -> web.Response:
    return web.json_response(await _page(request))


async def page(request: web.Request) -> web.Response:
    data = await _page(request)
    return render(request, "page.html", "Page", "", {"data": data, "time_fields": TIME_FIELDS})


# ---------------------------------------------------------------------- Query


async def _query(request: web.Request) -> dict[str, Any]:
    settings = request.app[SETTINGS]
    xpath = text_param(request, "xpath", max_length=settings.max_xpath_length)
    offset = int_param(request, "offset", 0, 0, 10**6)
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    cursor = cursor_param(request, ["query"], [int, int])
    answer: dict[str, Any] = {
        "xpath": xpath,
        "offset": offset,
        "limit": limit,
        "results": [],
        "more": False,
        "error": None,
        "next_cursor": None,
    }
    if not xpath:
        return answer
    folder = request.app[FIGURES].repo_dir / DOCUMENTS
    if not folder.is_dir():
        return answer
    try:
        results, more, last = await unless_gone(
            lambda: request.transport is None or request.transport.is_closing(),
            request.app[QUERIES].run(
                folder, xpath, offset, limit, None if cursor is None else cursor[1]
            ),
        )
    except (QueryFailed, QueryAbandoned) as error:  # an abandoned query's answer goes nowhere
        answer["error"] = str(error)
        return answer
    except QueryBusy as error:
        raise web.HTTPTooManyRequests(
            text=str(error), headers={"Retry-After": str(error.retry_after)}
        ) from None
    answer.update(
        results=results,
        more=more,
        next_cursor=encode_cursor("query", last) if more and last is not None else None,
    )
    return answer


@paged("results")
async def api_query(request: web.Request) -> web.Response:
    answer = await _query(request)
    return web.json_response(answer, status=400 if answer["error"] else 200)


async def query(request: web.Request) -> web.Response:
    data = await _query(request)
    links = pager(
        "/query",
        {"xpath": data["xpath"]},
        data["offset"],
        data["limit"],
        data["offset"] + len(data["results"]) + (1 if data["more"] else 0),
    )
    return render(
        request,
        "query.html",
        "Query",
        "/query",
        {"data": data, "pager": links},
        status=400 if data["error"] else 200,
    )


# ---------------------------------------------------------------------- /metrics


async def metrics(request: web.Request) -> web.Response:
    figures = request.app[FIGURES]
    live = live_figures(request)
    status = await _status(request)
    try:
        due = (await asyncio.to_thread(figures.schedule, "", 0, 1, (live or {}).get("now")))[
            "due_per_unit"
        ]
    except ScheduleUnavailable:
        due = []  # the status's policy carries the error; pages by type are still served
    body, content_type = metrics_text(status, due)
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response
