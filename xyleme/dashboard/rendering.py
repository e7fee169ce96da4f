"""What every page handler needs: the Jinja2 templates and their filters, the navigation, the
live figures of a running daemon, and pagination links."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jinja2
from aiohttp import web

from xyleme.dashboard.keys import HISTORY, TEMPLATES
from xyleme.timestamps import when
from xyleme.worker_status import heartbeat_text

NAV = (
    ("/", "Overview"),
    ("/schedule", "Refresh schedule"),
    ("/rankings", "Rankings"),
    ("/query", "Query"),
)


def templates() -> jinja2.Environment:
    """The page templates, autoescaped, failing loudly on a missing variable."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("xyleme.dashboard", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["when"] = lambda seconds: when(seconds, none="-")
    env.filters["num"] = _num
    env.filters["heartbeat"] = heartbeat_text  # a crawl worker's, stale ones said so
    env.filters["changed_class"] = lambda changed: {None: "first", True: "changed"}.get(
        changed, "unchanged"
    )
    return env


def _num(value: Any) -> str:
    """A table cell: 4 significant digits for a float, "-" for unknown."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def render(
    request: web.Request,
    template: str,
    title: str,
    current: str,
    context: dict[str, Any],
    *,
    status: int = 200,
    now: float | None = None,
) -> web.Response:
    """The HTML page ``template`` with the navigation (``current`` highlighted)."""
    text = (
        request.app[TEMPLATES]
        .get_template(template)
        .render(title=title, nav=NAV, current=current, now=now, **context)
    )
    return web.Response(text=text, content_type="text/html", status=status)


def live_figures(request: web.Request) -> dict[str, Any] | None:
    """The running daemon's latest live figures and rates, None when there is no daemon
    (shared between requests: read them, never change them)."""
    history = request.app.get(HISTORY)
    return None if history is None else history.shown()


def pager(path: str, params: dict[str, str], offset: int, limit: int, total: int) -> dict:
    """Links to the previous and next page of a table of ``total`` rows."""
    return {
        "base": f"{path}?{urlencode({**params, 'limit': limit})}",
        "previous": max(offset - limit, 0) if offset > 0 else None,
        "next": offset + limit if offset + limit < total else None,
    }
