"""What ``xyleme status`` shows, and the stored facts it is made of.

The daemon writes two small blobs into the metadata's named state at every checkpoint:
``clock`` (the simulated time it reached and the clock's speed; a restart resumes from the
latest of it and of the times committed since, :meth:`metadata.Metadata.repository_clock`)
and ``daemon/status`` (rates, queue sizes, the last periodic passes and the refresh policy's
figures). Readers combine them with counts from the database, so the status works whether
or not a daemon runs.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from metadata import CLOCK_STATE, Clock, encode_clock
from xyleme.commands import is_paused, stored_seeds

if TYPE_CHECKING:  # readers of the status (``xyleme status``) load neither
    import numpy as np

    from metadata import Glance, Metadata

CLOCK_KEY = CLOCK_STATE
LIVE_KEY = "daemon/status"
WRITTEN = "written"
"""The key of the real (wall-clock) time a checkpoint of the live figures was written."""


def restore_clock(md: Metadata, speed: float, start: float) -> Clock:
    """The daemon's clock: wall time at speed 1, else simulated time resumed from the latest
    time the repository committed (reads, discoveries, refusals, the last checkpoint), never
    from the checkpoint alone, which a kill -9 leaves behind what was committed after it.

    ``start`` is the simulated time of a repository's very first run (usually now).
    """
    return md.repository_clock(speed, start=start)


def repository_now(md: Metadata, view: dict[str, np.ndarray] | None = None) -> float:
    """The repository's current simulated time, for readers (``xyleme schedule``, the
    dashboard).

    A repository a daemon ran lives on its clock (:meth:`Metadata.repository_clock`): in real
    time at the wall clock's, on an accelerated clock at the latest time it recorded or
    checkpointed. One that no daemon ran (a crawl or a test on another clock) lives at the
    latest time it recorded, a read or a discovery; an empty one at the wall clock's. ``view``
    is ``md.refresh_view()`` when the caller has it already.
    """
    import numpy as np  # the refresh view is numpy's: only its readers pay for it

    if md.get_state(CLOCK_KEY) is not None:
        return md.repository_clock(running=False).now()
    view = md.refresh_view() if view is None else view
    recorded = [
        float(values[np.isfinite(values)].max())
        for values in (view["last_access"], view["discovered_at"])
        if np.isfinite(values).any()
    ]
    return max(recorded) if recorded else time.time()


def save_clock(md: Metadata, clock: Clock) -> None:
    """Remember the simulated time reached and the clock's speed."""
    md.put_state(CLOCK_KEY, encode_clock(clock))


def save_live_status(md: Metadata, facts: dict[str, Any]) -> None:
    """The daemon's checkpoint of its in-memory figures, for ``xyleme status``, with the real
    time it was written (``written``), so a reader can say how old the figures are."""
    md.put_state(LIVE_KEY, json.dumps({**facts, WRITTEN: time.time()}).encode())


def read_status(md: Metadata | Glance, daemon_pid: int | None) -> dict[str, Any]:
    """Every figure of ``xyleme status`` as plain JSON-ready values: the database's as of
    now, the daemon's (``live``) as of its last checkpoint, written at ``live_written`` (real
    seconds since the epoch; None before any checkpoint), and the rows of the crawl workers
    and coordinators sharing the store (``workers``: part, hosts, pages/s, heartbeat's age,
    ``stale``)."""
    counts = {kind.value: count for kind, count in md.count_by_type().items() if count}
    clock = _json(md, CLOCK_KEY) or {"now": None, "speed": None}
    live = _json(md, LIVE_KEY) or {}
    written = live.pop(WRITTEN, None)
    latest = md.latest_time() if clock["now"] is not None else None
    if latest is not None:  # reads committed after the last checkpoint (a kill -9)
        clock["now"] = max(float(clock["now"]), latest)
    return {
        "daemon": {"pid": daemon_pid},
        "paused": is_paused(md),
        "clock": clock,
        "seeds": len(stored_seeds(md)),
        "pages": counts,
        "pages_total": sum(counts.values()),
        "live": live,
        "live_written": written,
        "workers": md.workers(),
    }


def _json(md: Metadata, key: str) -> dict[str, Any] | None:
    blob = md.get_state(key)
    return None if blob is None else json.loads(blob)
