"""The admin actions (pause, resume, add seeds), served only with an admin token.

They are POST-only and carried out by the running daemon's
:class:`~xyleme.dashboard.live.AdminActions`; the token is compared in constant time.
"""

from __future__ import annotations

import hmac
import inspect
from typing import Any

from aiohttp import web

from xyleme.dashboard.keys import ACTIONS, ADMIN_TOKEN
from xyleme.dashboard.live import AdminActions
from xyleme.dashboard.params import InputError


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


async def pause(request: web.Request) -> web.Response:
    actions, _ = await _authorised_actions(request)
    return await _answer(actions.set_paused(True))


async def resume(request: web.Request) -> web.Response:
    actions, _ = await _authorised_actions(request)
    return await _answer(actions.set_paused(False))


async def add_seeds(request: web.Request) -> web.Response:
    actions, fields = await _authorised_actions(request)
    urls = fields.get("urls", [])
    if isinstance(urls, str):
        urls = urls.split()
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        raise InputError("give the seeds as 'urls': a list of URLs (or a text, one a line)")
    if len(urls) > 1000 or any(len(url) > 2048 for url in urls):
        raise InputError("at most 1000 seed URLs of at most 2048 characters each")
    return await _answer(actions.add_seeds(urls))
