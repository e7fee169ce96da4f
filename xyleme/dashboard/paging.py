"""Paging of the JSON API's lists: ``limit``, an opaque keyset ``cursor``, ``next_cursor``.

Every list the API answers is sorted on a key that identifies a row (``(next_refresh,
url_id)``, ``(score, url_id)``, a host, a version number...). A page is the ``limit`` rows
after the key of the previous page's last row, so a row written meanwhile never shifts the
next page, as an offset would. The cursor is that key, tagged with the list it belongs to and
encoded as URL-safe base64 of JSON: opaque to clients, checked on the way back (a cursor of
another list, or not one at all, is a 400 naming the parameter).

Handlers declare their lists with :func:`paged`, so ``tests/dashboard/test_dashboard_paging.py`` can
enumerate the app's routes and check that none answers an unbounded list.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aiohttp import web

from xyleme.dashboard.params import InputError

H = TypeVar("H", bound=Callable[..., Any])
Key = tuple[Any, ...]

MAX_CURSOR_LENGTH = 4096
"""Longer ``cursor`` parameters are refused unread (ours are well under 200 characters)."""


def paged(*lists: str) -> Callable[[H], H]:
    """Mark a handler as answering the paged lists named ``lists`` (keys of its answer)."""

    def mark(handler: H) -> H:
        handler.paged_lists = lists  # type: ignore[attr-defined]
        return handler

    return mark


def paged_lists(handler: Callable[..., Any]) -> tuple[str, ...]:
    """The lists a handler declared with :func:`paged` (empty for an unpaged one)."""
    return getattr(handler, "paged_lists", ())


def encode_cursor(kind: str, key: Key) -> str:
    """The opaque cursor continuing list ``kind`` after the row whose key is ``key``."""
    raw = json.dumps([kind, *key], separators=(",", ":"), allow_nan=False)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(text: str, kinds: Sequence[str], types: Sequence[Any]) -> tuple[str, Key]:
    """``(kind, key)`` of a cursor made by :func:`encode_cursor` for one of ``kinds``, its key
    of ``types`` (``float`` accepts integers); anything else raises :class:`InputError`."""
    bad = InputError("cursor is not one this list gave: start again without it")
    if len(text) > MAX_CURSOR_LENGTH:
        raise bad
    try:
        decoded = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError):
        raise bad from None
    if not isinstance(decoded, list) or len(decoded) != len(types) + 1:
        raise bad
    kind, *key = decoded
    if kind not in kinds or not all(
        _is(value, kind_) for value, kind_ in zip(key, types, strict=True)
    ):
        raise bad
    return kind, tuple(
        float(v) if v is not None and _allows(t, float) else v
        for v, t in zip(key, types, strict=True)
    )


def _is(value: Any, expected: Any) -> bool:
    """Whether a decoded JSON value is of ``expected`` (a type or a union such as
    ``float | None``); a float may be written as an integer, a boolean is no number."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int) and not isinstance(value, float) and _allows(expected, float):
        return True
    return isinstance(value, expected)


def _allows(expected: Any, kind: type) -> bool:
    return expected is kind or kind in getattr(expected, "__args__", ())


def cursor_param(
    request: web.Request, kinds: Sequence[str], types: Sequence[Any]
) -> tuple[str, Key] | None:
    """The request's decoded ``cursor`` (see :func:`decode_cursor`), or None without one."""
    text = request.query.get("cursor", "").strip()
    if not text:
        return None
    if "offset" in request.query:
        raise InputError("give cursor or offset, not both")
    return decode_cursor(text, kinds, types)


def after(rows: Sequence[Any], key: Callable[[Any], Key], start: Key | None) -> int:
    """Index of the first of ``rows`` (sorted on ``key``, increasing) past ``start``."""
    if start is None:
        return 0
    low, high = 0, len(rows)
    while low < high:
        middle = (low + high) // 2
        if key(rows[middle]) <= start:
            low = middle + 1
        else:
            high = middle
    return low


def next_cursor(
    kind: str, shown: Sequence[Any], more: bool, key: Callable[[Any], Key]
) -> str | None:
    """The cursor after the last of ``shown`` when ``more`` rows follow, else None."""
    return encode_cursor(kind, key(shown[-1])) if more and shown else None
