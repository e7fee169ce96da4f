"""What ``xyleme status`` shows, and the stored facts it is made of.

The daemon writes two small blobs into the metadata's named state at every checkpoint:
``clock`` (the simulated time it reached and the clock's speed, so simulated time continues
across restarts) and ``daemon/status`` (rates, queue sizes, the last periodic passes and
the refresh policy's figures). Readers combine them with counts from the database, so the
status works whether or not a daemon runs.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from metadata import Metadata
from metadata.clock import AcceleratedClock, Clock, SystemClock
from xyleme.commands import is_paused, stored_seeds

CLOCK_KEY = "clock"
LIVE_KEY = "daemon/status"


def restore_clock(md: Metadata, speed: float, start: float) -> Clock:
    """The daemon's clock: real time at speed 1, else accelerated from where time stopped.

    ``start`` is the simulated time of a repository's very first run (usually now).
    """
    stored = _json(md, CLOCK_KEY)
    if speed == 1.0 and not stored:
        return SystemClock()
    epoch = stored["now"] if stored else start
    return AcceleratedClock(epoch=epoch, speed=speed)


def repository_now(md: Metadata, view: dict[str, np.ndarray] | None = None) -> float:
    """The repository's current simulated time, for readers (``xyleme schedule``, the
    dashboard).

    A repository kept on an accelerated clock (the demo, a simulation) lives at the simulated
    time its daemon last checkpointed; one kept in real time at the wall clock's. One that no
    daemon ran (a crawl or a test on another clock) lives at the latest time it recorded, a
    read or a discovery; an empty one at the wall clock's. ``view`` is
    ``md.refresh_view()`` when the caller has it already.
    """
    stored = _json(md, CLOCK_KEY)
    if stored:
        return float(stored["now"]) if stored.get("speed") not in (None, 1.0) else time.time()
    view = md.refresh_view() if view is None else view
    recorded = [
        float(values[np.isfinite(values)].max())
        for values in (view["last_access"], view["discovered_at"])
        if np.isfinite(values).any()
    ]
    return max(recorded) if recorded else time.time()


def save_clock(md: Metadata, clock: Clock) -> None:
    """Remember the simulated time reached (a restart continues from it)."""
    md.put_state(CLOCK_KEY, json.dumps({"now": clock.now(), "speed": clock.speed}).encode())


def save_live_status(md: Metadata, facts: dict[str, Any]) -> None:
    """The daemon's checkpoint of its in-memory figures, for ``xyleme status``."""
    md.put_state(LIVE_KEY, json.dumps(facts).encode())


def read_status(md: Metadata, daemon_pid: int | None) -> dict[str, Any]:
    """Every figure of ``xyleme status`` as plain JSON-ready values."""
    counts = {kind.value: count for kind, count in md.count_by_type().items() if count}
    clock = _json(md, CLOCK_KEY) or {"now": None, "speed": None}
    return {
        "daemon": {"pid": daemon_pid},
        "paused": is_paused(md),
        "clock": clock,
        "seeds": len(stored_seeds(md)),
        "pages": counts,
        "pages_total": sum(counts.values()),
        "live": _json(md, LIVE_KEY) or {},
    }


def _json(md: Metadata, key: str) -> dict[str, Any] | None:
    blob = md.get_state(key)
    return None if blob is None else json.loads(blob)
