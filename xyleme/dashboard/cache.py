"""A figure computed away from the event loop and served stale while a fresh one is computed.

Why: the status scans every page. Under a busy daemon its computation (in a thread, or in a
process of its own: :mod:`.statusprocess`) takes a while, so computing the figures on the
request's path made ``/api/status`` take seconds.
A request gets the last value at once (the first one waits for it); when that value is
older than ``max_age`` one background computation is started, and the next requests get its
result. A failing computation is logged and the last value kept.

:class:`Memo` keeps what is made from such values (the status merged with the daemon's live
figures, its JSON body) while they are the same objects: ``/api/status`` is polled far more
often than its parts change, so most requests only send bytes made before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Refreshed(Generic[T]):
    """The latest value of ``compute()``, at most ``max_age`` real seconds old plus one
    computation."""

    def __init__(self, max_age: float) -> None:
        self.max_age = max_age
        self.shown: Memo[Any] = Memo()
        """What the requests make of the value (kept while it and their other inputs last)."""
        self._value: T | None = None
        self._at = -float("inf")
        self._task: asyncio.Task[None] | None = None

    async def get(self, compute: Callable[[], Awaitable[T]]) -> T:
        """The value (awaited from ``compute()``, which must not run on the event loop's
        thread, when missing or stale)."""
        if self._task is None and time.monotonic() - self._at > self.max_age:
            self._task = asyncio.create_task(self._refresh(compute))
        if self._value is None:
            await asyncio.shield(self._task)  # the first value: every request waits for it
        assert self._value is not None
        return self._value

    async def _refresh(self, compute: Callable[[], Awaitable[T]]) -> None:
        try:
            self._value = await compute()
            self._at = time.monotonic()
        except Exception:
            if self._value is None:
                raise  # nothing to serve: the waiting request reports it
            log.exception("dashboard figures could not be refreshed; the last ones are served")
        finally:
            self._task = None


class Memo(Generic[T]):
    """The value ``make()`` gave for the last ``inputs``, kept while the inputs are the very
    same objects (identity, not equality: the inputs are values this module's
    :class:`Refreshed` and the live history replace, never change)."""

    def __init__(self) -> None:
        self._inputs: tuple[Any, ...] = ()
        self._value: T | None = None

    def get(self, inputs: tuple[Any, ...], make: Callable[[], T]) -> T:
        """The kept value, or ``make()``'s when ``inputs`` are not those of the kept one."""
        same = len(inputs) == len(self._inputs) and all(
            new is old for new, old in zip(inputs, self._inputs, strict=True)
        )
        if self._value is None or not same:
            self._value, self._inputs = make(), inputs
        return self._value
