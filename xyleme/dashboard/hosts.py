"""``/api/hosts``: the per-host report of ``xyleme hosts`` as JSON, paged by host name.

The same rows and field names as ``xyleme hosts --json`` (:func:`metadata.reports.host_report`),
read in a worker thread (the report scans every page). ``?host=`` keeps one host (a name or
``scheme://host[:port]``); ``limit`` rows come after ``cursor``, in host order, and
``next_cursor`` continues (null on the last page).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from metadata.reports import host_report
from xyleme.dashboard.keys import FIGURES, SETTINGS
from xyleme.dashboard.paging import after, cursor_param, next_cursor, paged
from xyleme.dashboard.params import int_param, text_param


def _key(row: dict) -> tuple[str]:
    return (row["host"],)


@paged("hosts")
async def api_hosts(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    host = text_param(request, "host", max_length=2048) or None
    cursor = cursor_param(request, ["hosts"], [str])
    report = await asyncio.to_thread(host_report, request.app[FIGURES].md, host)
    report.sort(key=_key)
    first = after(report, _key, None if cursor is None else cursor[1])
    page = report[first : first + limit]
    return web.json_response(
        {
            "hosts": page,
            "limit": limit,
            "total": len(report),
            "next_cursor": next_cursor("hosts", page, len(report) > first + limit, _key),
        }
    )
