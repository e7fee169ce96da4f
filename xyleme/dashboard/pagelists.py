"""``/api/page/{list}``: every child, parent, observation or stored version of one page, paged.

``/api/page`` answers at most ``max_neighbours`` of each of these lists (with their totals);
this route pages through a whole list with ``limit`` and ``cursor`` (:mod:`.paging`). Each list
is in a stable order: children and parents by URL-Id, observations and versions oldest first
(both only ever grow at their end), so a cursor stays valid while the daemon writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from aiohttp import web

from xyleme.dashboard.figures import RepositoryFigures
from xyleme.dashboard.keys import FIGURES, SETTINGS
from xyleme.dashboard.paging import after, cursor_param, next_cursor, paged
from xyleme.dashboard.params import int_param, page_target
from xyleme.dashboard.warehouse import stored_versions

LISTS = ("children", "parents", "observations", "versions")


def _rows(figures: RepositoryFigures, name: str, url_id: int) -> list[dict[str, Any]]:
    """The whole list ``name`` of the page, in its stable order; each row keyed by
    :data:`KEYS`."""
    if name == "children":
        return figures.neighbours(figures.children(url_id))
    if name == "parents":
        return figures.neighbours(figures.md.parents(url_id))
    if name == "observations":
        observations = figures.record(url_id=url_id).observations
        return [{"n": n, **asdict(obs)} for n, obs in enumerate(observations)]
    return stored_versions(figures.repo_dir, url_id) or []


KEYS: dict[str, Callable[[dict[str, Any]], tuple[int]]] = {
    "children": lambda row: (row["url_id"],),
    "parents": lambda row: (row["url_id"],),
    "observations": lambda row: (row["n"],),
    "versions": lambda row: (row["version"],),
}


def page_list(
    figures: RepositoryFigures,
    name: str,
    url: str | None,
    url_id: int | None,
    limit: int,
    start: tuple[int] | None,
) -> dict[str, Any]:
    """``limit`` rows of the list ``name`` of a page after the key ``start``."""
    record = figures.record(url, url_id)
    rows = _rows(figures, name, record.url_id)
    key = KEYS[name]
    first = after(rows, key, start)
    shown = rows[first : first + limit]
    return {
        "url_id": record.url_id,
        "url": record.url,
        name: shown,
        "total": len(rows),
        "limit": limit,
        "next_cursor": next_cursor(name, shown, len(rows) > first + limit, key),
    }


@paged(*LISTS)
async def api_page_list(request: web.Request) -> web.Response:
    name = request.match_info["list"]
    if name not in LISTS:
        raise web.HTTPNotFound(text=f"no list {name!r} of a page: one of {', '.join(LISTS)}")
    url, url_id = page_target(request)
    settings = request.app[SETTINGS]
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    cursor = cursor_param(request, [name], [int])
    start = None if cursor is None else cursor[1]
    answer = await asyncio.to_thread(
        page_list, request.app[FIGURES], name, url, url_id, limit, start
    )
    return web.json_response(answer)
