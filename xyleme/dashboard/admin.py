"""The admin actions (pause, resume, add seeds), served only with an admin token.

They are POST-only and carried out by the running daemon's
:class:`~xyleme.dashboard.live.AdminActions`; the token (Bearer only) is checked, in
constant time, before any body is parsed.
"""

from __future__ import annotations

import hmac
import inspect
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, ValidationError

from xyleme.dashboard.keys import ACTIONS, ADMIN_TOKEN
from xyleme.dashboard.live import AdminActions
from xyleme.dashboard.params import InputError

FORM = "application/x-www-form-urlencoded"


class AdminBody(BaseModel):
    """An admin action's JSON body: the seeds' URLs, as a list or a text (one a line)."""

    model_config = ConfigDict(extra="forbid")
    urls: list[str] | str = []


async def _authorised_actions(request: web.Request) -> tuple[AdminActions, dict[str, Any]]:
    """The admin target and the request's fields, or 403 when admin is off or the token wrong.

    The token is checked before the body is read: an ``Authorization: Bearer`` header (the
    only scheme accepted), or, for the Overview's HTML forms (a browser form sets no header),
    the ``token`` field of a flat form body within ``max_body_bytes``. A JSON body is read
    only with the header, and parsed into :class:`AdminBody` (its parser refuses deep
    nesting), so no unauthenticated body is ever parsed beyond a flat form.
    """
    token = request.app.get(ADMIN_TOKEN)
    if token is None:
        raise web.HTTPForbidden(text="admin actions are disabled: start with --http-admin")
    header = request.headers.get("Authorization")
    fields: dict[str, Any] = {}
    if header is not None:
        scheme, _, given = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise web.HTTPForbidden(text="give the admin token as 'Authorization: Bearer TOKEN'")
        _check(given.strip(), token)
        if request.content_type == "application/json":
            fields = await _json_fields(request)
        elif request.content_type == FORM:
            fields = dict(await request.post())
    elif request.content_type == FORM:
        fields = dict(await request.post())  # flat fields, within client_max_size
        _check(str(fields.get("token", "")), token)
    else:
        raise web.HTTPForbidden(text="missing admin token: send 'Authorization: Bearer TOKEN'")
    actions = request.app.get(ACTIONS)
    if actions is None:
        raise web.HTTPServiceUnavailable(
            text="no daemon serves admin actions here: use the CLI (xyleme pause, seed add)"
        )
    return actions, fields


def _check(given: str, token: str) -> None:
    """403 unless ``given`` is the token (compared in constant time)."""
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise web.HTTPForbidden(text="wrong or missing admin token")


async def _json_fields(request: web.Request) -> dict[str, Any]:
    """An authorised JSON body as fields; 400 naming what is wrong (nesting included)."""
    body = await request.read()  # within client_max_size, else 413
    if not body.strip():
        return {}
    try:
        return AdminBody.model_validate_json(body).model_dump()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise InputError(f"bad request body ({where}): {first['msg']}") from None


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
