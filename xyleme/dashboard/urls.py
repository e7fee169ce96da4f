"""``/api/urls``: the URLs of one outcome with the reason each was refused or failed, paged.

The rows and field names of ``xyleme urls --status S --json`` (:mod:`metadata.reports`),
read in a worker thread. ``status`` is required (``rejected``, ``error``, ``dead``,
``failed``, ``unread``, ``read``, …); ``reason`` keeps the reasons starting with it, ``host``
one host. Newest first: refusals by their sequence number, pages by the time the status
orders them by, then by URL-Id; that key is the cursor.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from metadata import reports
from xyleme.dashboard.keys import FIGURES, SETTINGS
from xyleme.dashboard.paging import cursor_param, encode_cursor, paged
from xyleme.dashboard.params import InputError, int_param, text_param


def _urls(request: web.Request) -> tuple[str, dict[str, Any]]:
    """The status asked for and the report's keyword arguments, validated."""
    status = text_param(request, "status", max_length=20)
    if status not in reports.STATUSES:
        raise InputError(f"status must be one of {', '.join(reports.STATUSES)}")
    reason = text_param(request, "reason", max_length=2048) or None
    if reason and status not in reports.WITH_REASONS:
        raise InputError(f"reason needs a status with reasons: {', '.join(reports.WITH_REASONS)}")
    return status, {"reason": reason, "host": text_param(request, "host", max_length=2048) or None}


@paged("urls")
async def api_urls(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    status, filters = _urls(request)
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    md = request.app[FIGURES].md
    kind = f"urls-{status}"  # a cursor of one status is no cursor of another
    if status == reports.REJECTED:
        cursor = cursor_param(request, [kind], [int])
        rows, total = await asyncio.to_thread(
            reports.rejected_urls,
            md,
            **filters,
            limit=limit + 1,
            after=None if cursor is None else cursor[1][0],
        )
    else:
        cursor = cursor_param(request, [kind], [float | None, int])
        rows, total = await asyncio.to_thread(
            reports.page_urls,
            md,
            status,
            **filters,
            limit=limit + 1,
            after=None if cursor is None else cursor[1],
        )
    shown = rows[:limit]
    return web.json_response(
        {
            "status": status,
            "urls": shown,
            "total": total,
            "limit": limit,
            "next_cursor": encode_cursor(kind, _key(status, shown[-1]))
            if len(rows) > limit
            else None,
        }
    )


def _key(status: str, row: dict[str, Any]) -> tuple[Any, ...]:
    """The row's place in its order: a refusal's sequence number, else (time, URL-Id)."""
    if status == reports.REJECTED:
        return (row["seq"],)
    return (row[reports.order_column(status)], row["url_id"])
