"""Validation of what a request asks for: numbers in range, bounded texts, a page's URL or id.

Each failure is an :class:`InputError` with a sentence for the user; the app answers it with
a 400, never a traceback.
"""

from __future__ import annotations

from aiohttp import web


class InputError(ValueError):
    """A query parameter is missing, malformed or out of range (the message says which)."""


def int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    """The integer parameter ``name`` (``default`` when absent), which must lie in [low, high]."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name} must be a whole number, not {raw[:40]!r}") from None
    if not low <= value <= high:
        raise InputError(f"{name} must be between {low} and {high}, not {value}")
    return value


def text_param(request: web.Request, name: str, *, max_length: int) -> str:
    """The text parameter ``name`` stripped of surrounding blanks ('' when absent)."""
    value = request.query.get(name, "").strip()
    if len(value) > max_length:
        raise InputError(f"{name} is longer than {max_length} characters")
    if "\x00" in value:
        raise InputError(f"{name} contains a NUL character")
    return value


def page_target(request: web.Request) -> tuple[str | None, int | None]:
    """``(url, None)`` for ``?url=…`` or ``(None, url_id)`` for ``?id=…``; one is required."""
    url = text_param(request, "url", max_length=2048)
    if url:
        return url, None
    if request.query.get("id"):
        return None, int_param(request, "id", 0, 1, 2**62)
    raise InputError("say which page: ?url=URL or ?id=URL-Id")
