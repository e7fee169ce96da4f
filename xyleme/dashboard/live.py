"""What a running daemon hands the dashboard: live in-memory figures and admin actions.

The dashboard reads the repository on its own; only the daemon knows what sits in memory
(queue sizes, fetch counters) and only the daemon can pause or take a seed. It passes
``create_app(..., live=obj)`` an object with a ``live_figures()`` method (:class:`LiveFigures`);
if that object also has ``add_seeds`` and ``set_paused`` (:class:`AdminActions`, the shape of
the daemon's command target), the admin actions use it. :class:`LiveHistory` samples the
figures so the Overview can draw fetch rate and errors over time.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Awaitable, Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class LiveFigures(Protocol):
    """A source of live figures, called on the event loop; it must answer at once.

    ``live_figures()`` returns a mapping with any of these keys (others are shown as is):

    * ``fetched`` (int): fetch results recorded since the daemon started;
    * ``errors`` (int, or a mapping of counts by kind, which are summed): failed fetches;
    * ``queues`` (mapping level → int): requests waiting per crawler priority level 0–4;
    * ``paused`` (bool): whether fetching is paused;
    * ``now`` (float): the daemon's simulated time.
    """

    def live_figures(self) -> Mapping[str, Any]: ...


@runtime_checkable
class AdminActions(Protocol):
    """State-changing actions (``--http-admin`` only). Each returns an answer object with
    ``message`` (str) and ``ok`` (bool), or an awaitable of one (the daemon's ``Answer``)."""

    def add_seeds(self, urls: list[str]) -> Any | Awaitable[Any]: ...

    def set_paused(self, paused: bool) -> Any | Awaitable[Any]: ...


class LiveHistory:
    """A bounded series of samples of :class:`LiveFigures`, with rates between samples."""

    def __init__(self, source: LiveFigures, keep: int) -> None:
        self.source = source
        self.samples: deque[tuple[float, dict[str, Any]]] = deque(maxlen=keep)
        self._shown: tuple[tuple[float, dict[str, Any]], dict[str, Any]] | None = None

    def sample(self, now: float | None = None) -> dict[str, Any]:
        """Take one sample (real time ``now``, default the wall clock) and return it."""
        figures = dict(self.source.live_figures())
        self.samples.append((time.time() if now is None else now, figures))
        return figures

    def latest(self) -> dict[str, Any]:
        """The last sample, taking one if there is none yet."""
        return self.samples[-1][1] if self.samples else self.sample()

    def shown(self) -> dict[str, Any]:
        """The last sample with its ``rates``: one dict, made once per sample and shared by
        every request until the next (read it, never change it)."""
        if not self.samples:
            self.sample()
        last = self.samples[-1]
        if self._shown is None or self._shown[0] is not last:
            self._shown = (last, {**last[1], "rates": self.rates()})
        return self._shown[1]

    def rates(self) -> dict[str, list[float]]:
        """Real time of each interval's end, and fetches and errors per real second in it."""
        times, fetch_rate, error_rate = [], [], []
        ordered = list(self.samples)
        for (t0, before), (t1, after) in itertools.pairwise(ordered):
            elapsed = t1 - t0
            if elapsed <= 0:
                continue
            times.append(t1)
            fetched = counter_value(after.get("fetched")) - counter_value(before.get("fetched"))
            errors = counter_value(after.get("errors")) - counter_value(before.get("errors"))
            fetch_rate.append(max(fetched, 0) / elapsed)
            error_rate.append(max(errors, 0) / elapsed)
        return {"at": times, "fetch_rate": fetch_rate, "error_rate": error_rate}


def counter_value(value: Any) -> float:
    """A counter given as a number, or as counts by kind (the crawler's errors by kind)."""
    if isinstance(value, Mapping):
        return float(sum(value.values()))
    return float(value or 0)
