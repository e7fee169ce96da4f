"""Per-host politeness slots (Scrapy's downloader ``Slot``): when may a host be asked again.

A slot holds one host's timing only: how many requests are in flight, when the next may
start (the minimum delay, robots.txt's Crawl-delay up to a cap, a 429/503's Retry-After),
and when it was last busy, so idle slots can be forgotten. Times are the event loop's
monotonic clock (real time, ARCHITECTURE "Time").
"""

from __future__ import annotations

import email.utils
import heapq
from dataclasses import dataclass, field
from typing import Any

from xyleme.crawler.settings import CrawlerSettings


@dataclass(slots=True)
class HostSlot:
    """The politeness state of one host (``scheme://host:port``)."""

    key: str
    delay: float
    limit: int
    active: int = 0
    next_start: float = 0.0
    last_used: float = 0.0
    backoff_until: float = 0.0
    pending: list[tuple[Any, ...]] = field(default_factory=list)
    """The host's queued requests, a heap ordered by (level, -score, seq)."""

    def can_start(self, now: float) -> bool:
        """Whether a request may start now (a free connection and the delay elapsed)."""
        return self.active < self.limit and now >= self.next_start

    def start(self, now: float) -> None:
        """A request starts: it occupies a connection; the next start waits ``delay``."""
        self.active += 1
        self.last_used = now
        self.next_start = max(self.next_start, now + self.delay, self.backoff_until)

    def finish(self, now: float, *, used_network: bool = True) -> None:
        """A request ended; the next start waits ``delay`` after this end, too."""
        self.active -= 1
        self.last_used = now
        if used_network:
            self.next_start = max(self.next_start, now + self.delay)

    def back_off(self, now: float, seconds: float) -> None:
        """Ask nothing of this host for ``seconds`` (429/503 with Retry-After)."""
        self.backoff_until = max(self.backoff_until, now + seconds)
        self.next_start = max(self.next_start, self.backoff_until)

    def idle_since(self, now: float, seconds: float) -> bool:
        """Nothing queued, nothing in flight, nothing owed for ``seconds``: forgettable."""
        return (
            not self.pending
            and self.active == 0
            and self.next_start <= now
            and self.last_used + seconds <= now
        )


def host_delay(settings: CrawlerSettings, crawl_delay: float | None) -> float:
    """The delay between requests to a host: the minimum, or robots' Crawl-delay up to a cap.

    >>> host_delay(CrawlerSettings(min_delay=1.0, max_crawl_delay=10.0), 60.0)
    10.0
    """
    wanted = settings.min_delay if crawl_delay is None else max(settings.min_delay, crawl_delay)
    return min(wanted, max(settings.max_crawl_delay, settings.min_delay))


def retry_after_seconds(
    value: str | None, now_http: float, default: float, cap: float, speed: float = 1.0
) -> float:
    """Real seconds a Retry-After header asks for (delta-seconds or an HTTP date), capped.

    ``now_http`` is the current time on the server's clock and ``speed`` that clock's
    simulated seconds per real second (HTTP dates are simulated time; delta-seconds are
    taken as real seconds). A missing or unreadable header gives ``default``.

    >>> retry_after_seconds("120", 0.0, 60.0, 3600.0)
    120.0
    >>> retry_after_seconds("Thu, 01 Jan 1970 00:00:30 GMT", 0.0, 60.0, 3600.0)
    30.0
    >>> retry_after_seconds("soon", 0.0, 60.0, 3600.0)
    60.0
    """
    seconds = default
    if value:
        value = value.strip()
        if value.isdigit():
            seconds = float(value)
        else:
            try:
                when = email.utils.parsedate_to_datetime(value).timestamp()
            except (TypeError, ValueError, IndexError):
                when = None
            if when is not None:
                seconds = max(0.0, when - now_http) / speed
    return min(seconds, cap)


class Timers:
    """A heap of (time, host key): when a waiting slot may be looked at again."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, when: float, key: str) -> None:
        """Look at ``key`` again at ``when``."""
        heapq.heappush(self._heap, (when, key))

    def due(self, now: float) -> list[str]:
        """The keys whose time has come (removed from the heap)."""
        keys = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            keys.append(heapq.heappop(heap)[1])
        return keys

    def earliest(self) -> float | None:
        """The next time a slot wakes up, if any."""
        return self._heap[0][0] if self._heap else None
