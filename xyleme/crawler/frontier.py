"""The frontier: every URL waiting to be fetched, in priority order, host by host.

Five levels (ARCHITECTURE "Crawler queue levels"): 0 the loader's DTD/entity requests, 1
refreshes, 2 discovery (OPIC cash), 3 the crawler's own scouting, 4 background. Inside a level
a higher caller-given ``score`` goes first, then first come first served. Requests wait in the
queue of their host's politeness slot (Mercator's back queues); the next request handed to a
worker is the best one among the hosts that may be asked *now*, so a slow or backed-off host
never stalls the others and a level-0 request waits only for its own host's delay.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from dataclasses import dataclass
from enum import IntEnum

from conventions import host_key
from xyleme.crawler.politeness import HostSlot, Timers


class Level(IntEnum):
    """The five priority levels of the submission protocol (paper §3), most urgent first."""

    DEPENDENCY = 0
    REFRESH = 1
    DISCOVERY = 2
    SCOUTING = 3
    BACKGROUND = 4


@dataclass(slots=True, eq=False)
class Request:
    """One URL to fetch and why: its level, score and where it came from."""

    url: str
    level: Level
    score: float = 0.0
    url_id: int | None = None
    referrer: int | None = None
    depth: int = 0
    redirects: tuple[int, ...] = ()
    """URL-Ids of the redirect chain that led here (loop and cap detection)."""
    attempts: int = 0
    dependency: bool = False
    """Asked by the loader (a DTD or an external entity)."""
    sitemap: bool = False
    """Named as a sitemap by the site (robots.txt, a sitemap index): read as one, whatever
    its suffix (a ``.xml.gz`` is not refused) or its packing (gzip, plain text)."""
    reload: bool = False
    """Read again for the loader: asked unconditionally, and the body goes to the loader even
    if unchanged (a load that a crash cut off after the read was committed)."""
    seq: int = 0
    cancelled: bool = False
    in_flight: bool = False
    """Taken by a worker and not finished: it holds a place in its host's slot."""
    host: str = ""
    """The host key (:func:`host_key`), filled in when the request is made."""

    def __post_init__(self) -> None:
        if not self.host:
            self.host = host_key(self.url)

    @property
    def read_whole(self) -> bool:
        """Whether the body is read whatever its declared type (a DTD comes as anything, a
        sitemap as a gzip file)."""
        return self.dependency or self.sitemap


class Frontier:
    """Priority levels over per-host politeness slots. Times are ``time.monotonic()`` (real time).

    ``delay_of(key)`` gives the delay of a new slot (the minimum delay, or the host's
    Crawl-delay once robots.txt is known); ``limit`` is the per-host concurrency.
    """

    def __init__(self, delay_of, limit: int) -> None:
        self._delay_of = delay_of
        self._limit = limit
        self._slots: dict[str, HostSlot] = {}
        self._ready: list[tuple[int, float, int, str]] = []  # best request of a ready host
        self._timers = Timers()
        self._queued: dict[str, Request] = {}  # URL -> its live request (duplicates merge)
        self._sizes = [0] * len(Level)
        self._seq = itertools.count()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._timer_handle: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # ------------------------------------------------------------------ queueing

    def __len__(self) -> int:
        return sum(self._sizes)

    def sizes(self) -> dict[int, int]:
        """Requests waiting, per level."""
        return {int(level): self._sizes[level] for level in Level}

    @property
    def hosts(self) -> int:
        """Host slots currently kept."""
        return len(self._slots)

    def host_slots(self) -> dict[str, HostSlot]:
        """The host slots kept now, by host key (read them, do not change them)."""
        return self._slots

    def slot(self, key: str) -> HostSlot:
        """The slot of a host, made on first use."""
        slot = self._slots.get(key)
        if slot is None:
            slot = HostSlot(key, delay=self._delay_of(key), limit=self._limit)
            self._slots[key] = slot
        return slot

    def push(self, request: Request) -> bool:
        """Queue a request; False when the same URL already waits at this level or better.

        A URL queued again at a more urgent level moves up (the old entry is cancelled).
        """
        queued = self._queued.get(request.url)
        if queued is not None:
            if queued.level <= request.level:
                return False
            queued.cancelled = True
            self._sizes[queued.level] -= 1
        request.seq = next(self._seq)
        request.cancelled = False
        self._queued[request.url] = request
        self._sizes[request.level] += 1
        slot = self.slot(request.host)
        entry = (int(request.level), -request.score, request.seq, request)
        heapq.heappush(slot.pending, entry)
        if slot.pending[0] is entry:
            self._offer(slot, time.monotonic())
        return True

    def _offer(self, slot: HostSlot, now: float) -> None:
        """Make the slot's best request visible to workers, now or when its delay ends."""
        self._drop_cancelled(slot)
        if not slot.pending or slot.active >= slot.limit:
            return
        if now >= slot.next_start:
            level, neg_score, seq, _ = slot.pending[0]
            heapq.heappush(self._ready, (level, neg_score, seq, slot.key))
            self._wake_one()
        else:
            self._timers.add(slot.next_start, slot.key)
            self._arm_timer()

    @staticmethod
    def _drop_cancelled(slot: HostSlot) -> None:
        while slot.pending and slot.pending[0][3].cancelled:
            heapq.heappop(slot.pending)

    # ------------------------------------------------------------------ taking work

    def pop_ready(self, now: float) -> Request | None:
        """The best request that may start now (its slot is marked busy), or None."""
        for key in self._timers.due(now):
            slot = self._slots.get(key)
            if slot is not None and slot.can_start(now):
                self._offer(slot, now)
        ready = self._ready
        while ready:
            _, _, seq, key = heapq.heappop(ready)
            slot = self._slots.get(key)
            if slot is None or not slot.can_start(now):
                continue
            self._drop_cancelled(slot)
            if not slot.pending or slot.pending[0][2] != seq:
                continue  # a stale entry: the slot's best request changed since
            request = heapq.heappop(slot.pending)[3]
            del self._queued[request.url]
            self._sizes[request.level] -= 1
            slot.start(now)
            request.in_flight = True
            self._offer(slot, now)
            return request
        return None

    async def get(self) -> Request:
        """Wait for the best request that may start, and take it."""
        loop = asyncio.get_running_loop()
        while True:
            request = self.pop_ready(time.monotonic())
            if request is not None:
                if self._ready:
                    self._wake_one()  # more may be ready: pass the turn on
                self._arm_timer()
                return request
            self._loop = loop
            waiter = loop.create_future()
            self._waiters.append(waiter)
            self._arm_timer()
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # we were woken but leave: wake another
                raise

    def finish(
        self, request: Request, *, used_network: bool = True, back_off: float | None = None
    ) -> None:
        """A request taken with :meth:`get` ended: free its slot (after a back-off if asked).

        Calling it again for the same request does nothing (a worker's safety net).
        """
        if not request.in_flight:
            return
        request.in_flight = False
        self.release(request.host, used_network=used_network, back_off=back_off)

    def release(
        self, key: str, *, used_network: bool = True, back_off: float | None = None
    ) -> None:
        """Free a connection to host ``key`` (after a back-off if asked) and offer its next
        request: the end of a request taken with :meth:`get`, or of one started on the slot
        directly (a liveness probe sharing the crawler's politeness)."""
        now = time.monotonic()
        slot = self.slot(key)
        slot.finish(now, used_network=used_network)
        if back_off:
            slot.back_off(now, back_off)
        self._offer(slot, now)

    def set_delay(self, key: str, delay: float) -> None:
        """Change a host's delay (robots.txt's Crawl-delay became known)."""
        self.slot(key).delay = delay

    def collect_idle(self, idle_seconds: float) -> int:
        """Forget slots idle for ``idle_seconds`` (Scrapy's slot GC); returns how many."""
        now = time.monotonic()
        idle = [key for key, slot in self._slots.items() if slot.idle_since(now, idle_seconds)]
        for key in idle:
            del self._slots[key]
        return len(idle)

    # ------------------------------------------------------------------ waking workers

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _arm_timer(self) -> None:
        """Wake a worker when the earliest waiting slot's delay ends."""
        earliest = self._timers.earliest()
        if earliest is None or not self._waiters or self._loop is None:
            return
        if self._timer_at is not None and self._timer_at <= earliest:
            return
        if self._timer_handle is not None:
            self._timer_handle.cancel()
        self._timer_at = earliest
        delay = max(0.0, earliest - time.monotonic())
        self._timer_handle = self._loop.call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer_handle = self._timer_at = None
        self._wake_one()
