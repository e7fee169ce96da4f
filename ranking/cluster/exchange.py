"""How slice workers talk to each other: only the values a peer reads, straight to its actor.

:class:`Exchange` is the messaging half of a :class:`~ranking.cluster.worker.SliceWorker`:
the exchange plan (per peer, the pages whose values travel, computed once from the blocks),
the inbox that keeps each peer's newest message of each kind (a newer one replaces an older
one: a chaotic sweep wants the latest values, not all of them), the sends in flight, and
the counters the coordinator reads: bytes sent, sweeps, lost sends, and where a worker's
time went (sweeping its block, wall and CPU, absorbing what it received, gathering and sending).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import numpy as np
from distributed import get_worker
from distributed.comm.core import CommClosedError
from distributed.protocol import to_serialize

from ranking.errors import RankingError

#: The counters of :meth:`Exchange.counters`: integers, then seconds.
COUNTS = ("bytes_sent", "local_sweeps", "lost_sends")
TIMES = ("sweep_s", "sweep_cpu_s", "absorb_s", "send_s")


class Exchange:
    """The peers of one slice worker, what it sends them, and what they sent it."""

    index: int

    def __init__(self) -> None:
        self.need: dict[int, np.ndarray] = {}
        self.give: dict[int, np.ndarray] = {}
        self.peers: dict[int, str] = {}
        self.tally = dict.fromkeys(COUNTS, 0) | dict.fromkeys(TIMES, 0.0)
        self._inbox: dict[tuple[int, str], tuple[np.ndarray, object]] = {}
        self._lock = threading.Lock()
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

    async def receive(self, sender: int, kind: str, values: np.ndarray, scalar: object) -> None:
        """A peer's newest values and its figures (``scalar``: a float, a tuple of them or
        None); a newer message of the same kind replaces an older one."""
        with self._lock:
            self._inbox[(sender, kind)] = (values, scalar)

    def take(self, kind: str) -> dict[int, tuple[np.ndarray, Any]]:
        """The messages of ``kind`` received since the last take, by sender."""
        with self._lock:
            taken = {s: v for (s, k), v in self._inbox.items() if k == kind}
            for sender in taken:
                del self._inbox[(sender, kind)]
        return taken

    def timed(self, counter: str, started: float) -> None:
        self.tally[counter] += time.perf_counter() - started

    def swept(self, started: float, cpu: float, *, local: bool = True) -> None:
        """A sweep that began at ``started`` (``perf_counter``) and ``cpu`` (this thread's
        CPU time) is over: wall and CPU seconds apart, as the worker may share its core.
        ``local`` counts it among the worker's own sweeps (not a phase of a global one)."""
        self.tally["local_sweeps"] += local
        self.timed("sweep_s", started)
        self.tally["sweep_cpu_s"] += time.thread_time() - cpu

    async def send(self, kind: str, parts: dict[int, np.ndarray], scalar: object = 0.0) -> None:
        """Send each peer its part; a peer that cannot be reached, or that the coordinator
        said was lost (:meth:`forget`), is counted, not waited for: it will be replaced."""
        started = time.perf_counter()
        figures = 8 * len(scalar) if isinstance(scalar, tuple) else 8 * (scalar is not None)
        flights = []
        for peer, values in parts.items():
            if peer in self.peers:
                self.tally["bytes_sent"] += values.nbytes + figures
                flight = asyncio.ensure_future(
                    self._deliver(self.peers[peer], kind, values, scalar)
                )
                self._flights.setdefault(peer, set()).add(flight)
                flight.add_done_callback(self._flights[peer].discard)
                flights.append(flight)
        for outcome in await asyncio.gather(*flights, return_exceptions=True):
            if isinstance(outcome, OSError | CommClosedError | asyncio.CancelledError):
                self.tally["lost_sends"] += 1
            elif isinstance(outcome, BaseException):
                raise outcome
        self.timed("send_s", started)

    async def forget(self, lost: list[int]) -> None:
        """Give up the sends in flight to the lost peers (connecting to a dead worker is
        retried for Dask's connect timeout, 30 s by default)."""
        for peer in lost:
            for flight in list(self._flights.get(peer, ())):
                flight.cancel()
            self.peers.pop(peer, None)

    async def _deliver(self, peer: str, kind: str, values: np.ndarray, scalar: object) -> None:
        """Call ``receive`` on a peer's actor straight through the worker's RPC, the call an
        ``Actor`` handle makes, without its retry: a handle whose worker died waits for the
        actor to be recomputed, which a lost slice worker never is."""
        address, key = peer.split(" ", 1)
        args = [self.index, kind, values, scalar]
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
        the peers' values and sending (:data:`COUNTS`, :data:`TIMES`)."""
        return dict(self.tally)
