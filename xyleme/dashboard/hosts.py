"""``/api/hosts``: the per-host report of ``xyleme hosts`` as JSON, paged by host name.

The same rows and field names as ``xyleme hosts --json`` (:func:`metadata.reports.host_report`),
read in a worker thread (the report scans every page). ``?host=`` keeps one host (a name or
``scheme://host[:port]``); ``limit`` rows come after ``cursor`` (a host key), in host order,
and ``next_cursor`` continues (null on the last page).
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from metadata.reports import host_report
from xyleme.dashboard.keys import FIGURES, SETTINGS
from xyleme.dashboard.params import int_param, text_param


async def api_hosts(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    limit = int_param(request, "limit", settings.page_size, 1, settings.max_page_size)
    host = text_param(request, "host", max_length=2048) or None
    cursor = text_param(request, "cursor", max_length=2048)
    report = await asyncio.to_thread(host_report, request.app[FIGURES].md, host)
    after = sorted((row for row in report if row["host"] > cursor), key=lambda row: row["host"])
    page = after[:limit]
    more = len(after) > limit
    return web.json_response(
        {
            "hosts": page,
            "limit": limit,
            "total": len(report),
            "next_cursor": page[-1]["host"] if more else None,
        }
    )
