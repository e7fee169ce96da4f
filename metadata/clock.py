"""The one clock every module reads simulated time from.

Why it lives in ``metadata``: the metadata package sits at the bottom of the import graph
(every other package may import it, it imports none of them), and the clock's epoch and
speed are part of what the repository stores. Keeping the clock here lets the crawler, the
loader, the refresh policy and the simulated web share one object without an upward import.

Two kinds of time exist (see ``docs/architecture.md``):

* **simulated time** — seconds since the Unix epoch, as a float — governs page changes, HTTP
  dates, observations, change rates λ and refresh intervals. ``Clock.now()`` returns it.
* **real time** governs network timeouts, politeness delays, Crawl-delay and robots.txt
  expiry. Code that waits uses ``asyncio.sleep`` / ``time.monotonic`` directly, and converts a
  simulated duration into a real one with :meth:`Clock.real_seconds` when it must.
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """What every module needs of a clock."""

    @property
    def speed(self) -> float:
        """Simulated seconds per real second (1.0 for a real-time clock)."""
        ...

    def now(self) -> float:
        """The current simulated time, in seconds since the Unix epoch."""
        ...

    def real_seconds(self, simulated_seconds: float) -> float:
        """How many real seconds pass while ``simulated_seconds`` of simulated time do."""
        ...


class SystemClock:
    """Real time: simulated time *is* wall-clock time (a production daemon, speed 1).

    It never runs backwards: not below ``floor`` (the latest time a repository recorded, e.g.
    by an earlier accelerated run), nor below a time it returned before (the wall clock may
    be stepped back by NTP); it holds still until the wall clock catches up.
    """

    speed = 1.0

    def __init__(self, floor: float | None = None) -> None:
        self._last = -math.inf if floor is None else float(floor)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            self._last = max(self._last, time.time())
            return self._last

    def real_seconds(self, simulated_seconds: float) -> float:
        return simulated_seconds


@dataclass
class AcceleratedClock:
    """Simulated time running ``speed`` times faster than real time from ``epoch``.

    ``epoch`` is the simulated time at the moment the clock was started; a daemon that
    restarts passes the latest time its repository recorded (:func:`resume_clock`) so time
    never runs backwards across restarts, crashes included.

    >>> clock = AcceleratedClock(epoch=1_000_000.0, speed=86_400.0)
    >>> clock.real_seconds(86_400.0)
    1.0
    """

    epoch: float
    speed: float = 86_400.0
    _started: float = field(default_factory=time.monotonic, repr=False)
    _frozen_at: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.speed > 0:
            raise ValueError(f"clock speed must be positive, got {self.speed!r}")

    def now(self) -> float:
        if self._frozen_at is not None:
            return self._frozen_at
        return self.epoch + (time.monotonic() - self._started) * self.speed

    def real_seconds(self, simulated_seconds: float) -> float:
        return simulated_seconds / self.speed

    def freeze(self) -> None:
        """Stop simulated time where it is (benchmarks crawl a web that does not change)."""
        self._frozen_at = self.now()

    def unfreeze(self) -> None:
        """Let simulated time run again from where it was frozen."""
        if self._frozen_at is not None:
            self.epoch, self._started, self._frozen_at = self._frozen_at, time.monotonic(), None


class ManualClock:
    """A clock that only moves when told to: tests step it and drive periodic jobs by hand.

    >>> clock = ManualClock(100.0)
    >>> clock.advance(50.0)
    150.0
    """

    def __init__(self, start: float = 0.0, speed: float = 1.0) -> None:
        self._now = float(start)
        self.speed = speed
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def real_seconds(self, simulated_seconds: float) -> float:
        return simulated_seconds / self.speed

    def advance(self, seconds: float) -> float:
        """Move time forward by ``seconds`` (never backwards) and return the new time."""
        if seconds < 0:
            raise ValueError("a clock never runs backwards")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to ``when``, which must not be earlier than now."""
        self.advance(when - self._now)


def resume_clock(
    speed: float, latest: float | None, *, start: float | None = None, running: bool = True
) -> Clock:
    """A repository's clock, continuing from ``latest``, the latest time it recorded.

    Speed 1 is wall time (never below ``latest``). Another speed is simulated time that
    resumes at ``latest`` (at ``start``, default now, for a repository that recorded none),
    so a page is never read, nor found, before a time already stored, whatever a crash left
    behind; ``running=False`` holds it there (a command run while no daemon runs).

    >>> resume_clock(86_400.0, 1_000.0, running=False).now()
    1000.0
    """
    if speed == 1.0:
        return SystemClock(floor=latest)
    epoch = latest if latest is not None else (time.time() if start is None else start)
    return AcceleratedClock(epoch=epoch, speed=speed) if running else ManualClock(epoch, speed)


CLOCK_STATE = "clock"
"""The named state (``Metadata.put_state``) holding a repository's clock: the simulated time a
daemon reached at its last checkpoint and its speed."""


def encode_clock(clock: Clock) -> bytes:
    """The blob stored under :data:`CLOCK_STATE`."""
    return json.dumps({"now": clock.now(), "speed": clock.speed}).encode()


def decode_clock(blob: bytes | None) -> tuple[float, float] | None:
    """``(now, speed)`` of a blob written by :func:`encode_clock`; None when none was stored."""
    if blob is None:
        return None
    stored = json.loads(blob)
    return float(stored["now"]), float(stored["speed"])
