"""How slice workers talk to each other: only the values a peer reads, straight to its actor.

:class:`Exchange` is the messaging half of a :class:`~ranking.cluster.worker.SliceWorker`:
the exchange plan (per peer, the pages whose values travel, computed once from the blocks),
the inbox, the sends in flight, and the counters the coordinator reads: bytes sent, sweeps,
lost sends, and where a worker's time went (sweeping its block, wall and CPU, absorbing
what it received, gathering and sending, waiting for its peers).

Every message carries a *tag*, (run, sweep): the run's epoch and the sender's sweep in it
(0 before the first). A chaotic sweep takes each peer's newest message, whatever its tag
(it wants the latest values, not all of them); a synchronous sweep waits for each peer's
message of the previous sweep (:meth:`Exchange.arrived`) and takes exactly that one, never a
newer one a faster peer already sent: workers wait for each other directly, with no
barrier through the coordinator.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np
from distributed import get_worker
from distributed.comm.core import CommClosedError
from distributed.protocol import to_serialize

from ranking.errors import RankingError

#: The counters of :meth:`Exchange.counters`: integers, then seconds.
COUNTS = ("bytes_sent", "local_sweeps", "lost_sends")
TIMES = ("sweep_s", "sweep_cpu_s", "absorb_s", "send_s", "wait_s")
#: (run epoch, sweep in it) of a message; (0, 0) for the Jacobi checks' (one a phase).
Tag: TypeAlias = tuple[int, int]
NO_TAG: Tag = (0, 0)


class Exchange:
    """The peers of one slice worker, what it sends them, and what they sent it."""

    index: int
    _halted: int

    def __init__(self) -> None:
        self.need: dict[int, np.ndarray] = {}
        self.give: dict[int, np.ndarray] = {}
        self.peers: dict[int, str] = {}
        self.tally = dict.fromkeys(COUNTS, 0) | dict.fromkeys(TIMES, 0.0)
        self._inbox: dict[tuple[int, str], list[tuple[Tag, np.ndarray, object]]] = {}
        self._lock = threading.Lock()
        self._news = asyncio.Event()
        self._flights: dict[int, set[asyncio.Future]] = {}

    async def needs(self) -> dict[int, np.ndarray]:
        """Per peer, the pages of its range this block reads (computed once)."""
        return self.need

    async def connect(self, peers: dict[int, str], give: dict[int, np.ndarray]) -> None:
        """The peers' actors (``"<worker address> <actor key>"``: a bare key or a tuple with
        it would be taken by Dask for a reference to the actor) and, per peer, the pages of
        this range its block reads."""
        self.peers = dict(peers)
        self.give = {peer: np.asarray(pages) for peer, pages in give.items()}

    async def receive(
        self, sender: int, kind: str, values: np.ndarray, scalar: object, tag: Tag = NO_TAG
    ) -> None:
        """A peer's values and its figures (``scalar``: a float, a tuple of them or None),
        sent after its sweep ``tag`` (kept in tag order: two sends may overtake each other)."""
        with self._lock:
            queue = self._inbox.setdefault((sender, kind), [])
            bisect.insort(queue, (tuple(tag), values, scalar), key=lambda message: message[0])
        self._news.set()

    def take(self, kind: str, upto: Tag | None = None) -> dict[int, tuple[np.ndarray, Any]]:
        """Per sender, its newest message of ``kind`` tagged at most ``upto`` (any tag when
        None); it and the older ones leave the inbox, newer ones stay."""
        return {sender: message[1:] for sender, message in self.take_tagged(kind, upto).items()}

    def take_tagged(self, kind: str, upto: Tag | None = None) -> dict[int, tuple[Tag, Any, Any]]:
        """:meth:`take`, each message with its tag first."""
        taken = {}
        with self._lock:
            for (sender, k), queue in self._inbox.items():
                if k != kind:
                    continue
                older = [m for m in queue if upto is None or m[0] <= upto]
                if older:
                    taken[sender] = older[-1]
                    del queue[: len(older)]
        return taken

    async def _wait(
        self, epoch: int, ready: Callable[[], bool], patience: float | None = None
    ) -> bool:
        """Wake at each message until ``ready()`` holds (True), or until ``halt(epoch)`` or
        ``patience`` seconds (False); the time is counted in ``wait_s``."""
        started = time.perf_counter()
        deadline = None if patience is None else started + patience
        try:
            while self._halted < epoch:
                if ready():
                    return True
                left = None if deadline is None else deadline - time.perf_counter()
                if left is not None and left <= 0:
                    return False
                self._news.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._news.wait(), left)
            return False
        finally:
            self.timed("wait_s", started)

    async def arrived(self, kind: str, tag: Tag, epoch: int) -> dict[int, Any] | None:
        """Wait until every peer's message of ``kind`` tagged ``tag`` is here, and return
        their figures (left in the inbox for the next sweep to take); None if the run was
        halted (``halt(epoch)``) or a peer was given up meanwhile (:meth:`forget`)."""
        expected = set(self.give)  # all, lost ones too

        def gone() -> bool:
            return not expected <= set(self.peers)

        def found() -> dict[int, list]:
            with self._lock:
                return {
                    peer: [m[2] for m in self._inbox.get((peer, kind), ()) if m[0] == tag]
                    for peer in expected
                }

        if not await self._wait(epoch, lambda: gone() or all(found().values())) or gone():
            return None
        return {peer: figures[0] for peer, figures in found().items()}

    async def news(self, kinds: tuple[str, ...], epoch: int, patience: float) -> None:
        """Wait until every live peer's message of each of ``kinds`` is in the inbox, for
        at most ``patience`` seconds, or until ``halt(epoch)``.

        A chaotic sweep from nothing new only refines the block against its peers' old
        values, and its extrapolation then jumps out of step with theirs: measured on the
        2M-page graph, the chaotic importance needed 75–94 sweeps that way against 44 for
        the synchronous sweeps. The wait is bounded (by about one own sweep) so that a
        peer that stopped by itself, or a slow one, never holds a worker still: no barrier.
        """

        def ready() -> bool:
            with self._lock:
                waiting = {key for key, queue in self._inbox.items() if queue}
            return all((peer, kind) in waiting for peer in self.peers for kind in kinds)

        await self._wait(epoch, ready, patience)

    def timed(self, counter: str, started: float) -> None:
        self.tally[counter] += time.perf_counter() - started

    def swept(self, started: float, cpu: float, *, local: bool = True) -> None:
        """A sweep that began at ``started`` (``perf_counter``) and ``cpu`` (this thread's
        CPU time) is over: wall and CPU seconds apart, as the worker may share its core.
        ``local`` counts it among the worker's own sweeps (not a phase of a global one)."""
        self.tally["local_sweeps"] += local
        self.timed("sweep_s", started)
        self.tally["sweep_cpu_s"] += time.thread_time() - cpu

    async def send(
        self,
        kind: str,
        parts: dict[int, np.ndarray],
        scalar: object = 0.0,
        tag: Tag = NO_TAG,
        *,
        timed: bool = True,
    ) -> None:
        """Send each peer its part; a peer that cannot be reached, or that the coordinator
        said was lost (:meth:`forget`), is counted, not waited for: it will be replaced.
        ``timed`` counts the wait in ``send_s`` (not for a send overlapping a sweep)."""
        started = time.perf_counter()
        figures = 8 * len(scalar) if isinstance(scalar, tuple) else 8 * (scalar is not None)
        flights = []
        for peer, values in parts.items():
            if peer in self.peers:
                self.tally["bytes_sent"] += values.nbytes + figures
                flight = asyncio.ensure_future(
                    self._deliver(self.peers[peer], kind, values, scalar, tag)
                )
                self._flights.setdefault(peer, set()).add(flight)
                flight.add_done_callback(self._flights[peer].discard)
                flights.append(flight)
        for outcome in await asyncio.gather(*flights, return_exceptions=True):
            if isinstance(outcome, OSError | CommClosedError | asyncio.CancelledError):
                self.tally["lost_sends"] += 1
            elif isinstance(outcome, BaseException):
                raise outcome
        if timed:
            self.timed("send_s", started)

    async def forget(self, lost: list[int]) -> None:
        """Give up the sends in flight to the lost peers (connecting to a dead worker is
        retried for Dask's connect timeout, 30 s by default)."""
        for peer in lost:
            for flight in list(self._flights.get(peer, ())):
                flight.cancel()
            self.peers.pop(peer, None)
        self._news.set()  # a wait for the lost peer's values ends

    async def _deliver(
        self, peer: str, kind: str, values: np.ndarray, scalar: object, tag: Tag
    ) -> None:
        """Call ``receive`` on a peer's actor straight through the worker's RPC, the call an
        ``Actor`` handle makes, without its retry: a handle whose worker died waits for the
        actor to be recomputed, which a lost slice worker never is."""
        address, key = peer.split(" ", 1)
        args = [self.index, kind, values, scalar, tag]
        answer = (
            await get_worker()
            .rpc(address)
            .actor_execute(
                function="receive", actor=key, args=[to_serialize(a) for a in args], kwargs={}
            )
        )
        if answer["status"] != "OK":
            raise RankingError(f"peer {key} refused the values: {answer['exception']}")

    async def counters(self) -> dict[str, float]:
        """Bytes sent, local sweeps, lost sends, and the seconds spent sweeping, absorbing
        the peers' values, sending and waiting for them (:data:`COUNTS`, :data:`TIMES`)."""
        return dict(self.tally)
