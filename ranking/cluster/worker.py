"""The Dask actor that owns one block of the link matrix and its part of the vectors (§5.4).

Each :class:`SliceWorker` lives on one Dask worker. It reads its block once from the slice
files (:mod:`ranking.cluster.blocks`) and keeps it in memory; it keeps the whole direct
vector, as §5.4's stations keep the whole PR, current for its own pages and for the pages
of its peers that its block reads. After a sweep it sends each peer only the values the
peer's block reads (``give``), straight to the peer's actor: workers talk to workers, the
coordinator only orders the sweeps and sums the figures.

Every method is a coroutine: the sweeps run in a thread (the numba kernels release the
GIL), so the worker's event loop keeps answering its peers' sends and the coordinator's
``halt`` and ``status`` while a sweep runs, whatever else the worker hosts (Dask runs the
plain methods of all actors of a worker in one thread, which a chaotic loop would hold).

The interest (§5.2) is swept by the Jacobi sweeps of eq. 6–7: each worker scatters its
pages' interest into the accumulator of their parents (the sources of its in-links), and
sends the partial sums of the peers' pages to them, the same index lists as the direct
vector's, the other way. The weights of the interest's bound (:mod:`ranking.pagerank.inverse_bound`)
are swept like the direct vector.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np
from distributed import get_worker
from distributed.comm.core import CommClosedError
from distributed.protocol import to_serialize

from ranking.cluster.blocks import load_block, needs, read_info, read_outdeg
from ranking.errors import RankingError
from ranking.pagerank import kernels
from ranking.pagerank.inverse_bound import LIFT


class SliceWorker:
    """One worker's share of a distributed ranking: its block, its pages lo…hi, its peers."""

    def __init__(
        self, url: str, slices: list[int], index: int, ranges: list[tuple[int, int]], damping: float
    ) -> None:
        info = read_info(url)
        self.block = load_block(info, slices)
        self.outdeg = read_outdeg(info)
        self.num_pages = info.num_pages
        self.index = index
        self.lo, self.hi = ranges[index]
        self.ranges = ranges
        self.damping = damping
        self.need = needs(self.block, ranges, index)
        self.give: dict[int, np.ndarray] = {}
        self.peers: dict[int, str] = {}
        self.lost_sends = 0
        self.bytes_sent = 0
        self.local_sweeps = 0
        self.last_delta = float("inf")
        self._inbox: dict[tuple[int, str], tuple[np.ndarray, float]] = {}
        self._lock = threading.Lock()
        self._flights: dict[int, set[asyncio.Future]] = {}
        self._halted = 0
        self.scaled = np.empty(0)
        self.acc = np.empty(0)
        self.dangling_of: dict[int, float] = {}

    # -- the exchange ----------------------------------------------------------------------

    async def needs(self) -> dict[int, np.ndarray]:
        """Per peer, the pages of its range this block reads (computed once)."""
        return self.need

    async def connect(self, peers: dict[int, str], give: dict[int, np.ndarray]) -> None:
        """The peers' actors (``"<worker address> <actor key>"``: a bare key or a tuple with
        it would be taken by Dask for a reference to the actor) and, per peer, the pages of
        this range its block reads."""
        self.peers = dict(peers)
        self.give = {peer: np.asarray(pages) for peer, pages in give.items()}

    async def receive(self, sender: int, kind: str, values: np.ndarray, scalar: float) -> None:
        """A peer's newest values (a newer message of the same kind replaces an older one)."""
        with self._lock:
            self._inbox[(sender, kind)] = (values, scalar)

    def _take(self, kind: str) -> dict[int, tuple[np.ndarray, float]]:
        with self._lock:
            taken = {s: v for (s, k), v in self._inbox.items() if k == kind}
            for sender in taken:
                del self._inbox[(sender, kind)]
        return taken

    async def _send(self, kind: str, parts: dict[int, np.ndarray], scalar: float = 0.0) -> None:
        """Send each peer its part; a peer that cannot be reached, or that the coordinator
        said was lost (:meth:`forget`), is counted, not waited for: it will be replaced."""
        flights = []
        for peer, values in parts.items():
            if peer in self.peers:
                self.bytes_sent += values.nbytes + 8
                flight = asyncio.ensure_future(
                    self._deliver(self.peers[peer], kind, values, scalar)
                )
                self._flights.setdefault(peer, set()).add(flight)
                flight.add_done_callback(self._flights[peer].discard)
                flights.append(flight)
        for outcome in await asyncio.gather(*flights, return_exceptions=True):
            if isinstance(outcome, OSError | CommClosedError | asyncio.CancelledError):
                self.lost_sends += 1
            elif isinstance(outcome, BaseException):
                raise outcome

    async def forget(self, lost: list[int]) -> None:
        """Give up the sends in flight to the lost peers (connecting to a dead worker is
        retried for Dask's connect timeout, 30 s by default)."""
        for peer in lost:
            for flight in list(self._flights.get(peer, ())):
                flight.cancel()
            self.peers.pop(peer, None)

    async def _deliver(self, peer: str, kind: str, values: np.ndarray, scalar: float) -> None:
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

    async def counters(self) -> dict[str, int]:
        return {
            "bytes_sent": self.bytes_sent,
            "local_sweeps": self.local_sweeps,
            "lost_sends": self.lost_sends,
        }

    # -- the importance (direct PageRank) --------------------------------------------------

    async def direct_init(self, teleport: np.ndarray | None, scaled: np.ndarray | None) -> None:
        """Start from E (uniform when ``teleport`` is None), or adopt ``scaled``, a peer's
        copy of the last vector (after a worker was lost)."""
        n = self.num_pages
        self.teleport = np.full(1, 1.0 / n) if teleport is None else np.asarray(teleport)
        if scaled is None:
            self.scaled = np.full(n, 1.0 / n) if teleport is None else self.teleport.copy()
            kernels.scale(self.scaled, self.outdeg, self.scaled)
        else:
            self.scaled = np.array(scaled, dtype=np.float64)
        self.dangling_of = {
            peer: kernels.dangling_mass(self.scaled[lo:hi], self.outdeg[lo:hi])
            for peer, (lo, hi) in enumerate(self.ranges)
        }
        self._take("direct")
        self.local_sweeps = 0
        self.last_delta = float("inf")

    def _direct_sweep(self) -> tuple[float, float]:
        """Gauss-Seidel over the block from the newest values received (§5.3 in a slice)."""
        if self.scaled.shape[0] != self.num_pages:  # the kernel trusts its arrays' sizes
            raise RankingError(f"slice worker {self.index} swept before direct_init")
        for peer, (values, dangling) in self._take("direct").items():
            self.scaled[self.need[peer]] = values
            self.dangling_of[peer] = dangling
        dangling = sum(self.dangling_of.values())
        delta = mass = 0.0
        for view in self.block:
            moved, change, total = kernels.gauss_seidel_slice(
                view.indptr,
                view.sources,
                view.lo,
                self.scaled,
                self.outdeg,
                self.teleport,
                self.damping,
                dangling,
                True,
                False,
                self.scaled[view.lo : view.hi],
            )
            dangling += change
            self.dangling_of[self.index] += change
            delta += moved
            mass += total
        self.local_sweeps += 1
        self.last_delta = delta
        return delta, mass

    async def direct_sweep(self) -> tuple[float, float]:
        """One sweep, then the peers get their part of it: (‖Δ‖₁, Σ x) over this range."""
        figures = await asyncio.to_thread(self._direct_sweep)
        await self._send_direct()
        return figures

    async def _send_direct(self) -> None:
        own = self.dangling_of[self.index]
        await self._send("direct", {p: self.scaled[pages] for p, pages in self.give.items()}, own)

    async def run_chaotic(self, epoch: int, limit: int) -> int:
        """Sweep as fast as possible from the newest values the peers sent, sending after
        each sweep (§5.4's chaotic iterations), until ``halt(epoch)`` or ``limit`` sweeps."""
        done = 0
        while self._halted < epoch and done < limit:
            await self.direct_sweep()
            done += 1
        return done

    async def halt(self, epoch: int) -> None:
        self._halted = max(self._halted, epoch)

    async def status(self) -> tuple[int, float]:
        """(sweeps done, ‖Δ‖₁ of the last one): the chaotic run's residual, for the stop."""
        return self.local_sweeps, self.last_delta

    async def direct_copy(self) -> np.ndarray:
        """This worker's whole copy of the vector, to restart a lost peer from it."""
        return self.scaled.copy()

    async def direct_values(self) -> np.ndarray:
        """The importance of this range (unscaled)."""
        values = np.empty(self.hi - self.lo)
        kernels.unscale(self.scaled[self.lo : self.hi], self.outdeg[self.lo : self.hi], values)
        return values

    # -- the interest (inverse PageRank, eq. 6–7) ------------------------------------------

    async def inverse_init(self, teleport: np.ndarray) -> None:
        """Start from x = E' on this range (``teleport``, normalised over all pages)."""
        self.e = np.asarray(teleport, dtype=np.float64)
        self.interest = self.e.copy()
        self.acc = np.zeros(self.num_pages)
        self.y = np.zeros(self.hi - self.lo)
        self.certified = np.empty(self.num_pages)
        self.next = np.empty(self.num_pages)
        self._restart_weights()
        self._take("acc")
        self._take("weights")

    def _restart_weights(self) -> None:
        self.certified[:] = 1.0
        kernels.scale(self.certified, self.outdeg, self.certified)
        self.next[:] = self.certified

    def _inverse_scatter(self, sweeping: bool, s: float, restart: bool) -> float:
        if self.acc.shape[0] != self.num_pages:  # the kernels trust their arrays' sizes
            raise RankingError(f"slice worker {self.index} swept before inverse_init")
        if restart:
            self._restart_weights()
        self.acc[:] = 0.0
        lowest = np.inf
        for view in self.block:
            kernels.inverse_scatter_slice(
                view.indptr, view.sources, view.lo - self.lo, self.interest, self.acc
            )
            if sweeping:
                lowest = min(
                    lowest,
                    kernels.weights_jacobi_slice(
                        view.indptr,
                        view.sources,
                        view.lo,
                        self.certified,
                        self.outdeg,
                        s,
                        LIFT,
                        self.next[view.lo : view.hi],
                    ),
                )
        return lowest

    async def inverse_scatter(self, sweeping: bool, s: float, restart: bool) -> float:
        """Phase 1 of a sweep: c·Mᵗ·x's partial sums and, when ``sweeping``, the weights'
        Jacobi step at damping ``s``; send each peer its sums and weights. Returns min h."""
        lowest = await asyncio.to_thread(self._inverse_scatter, sweeping, s, restart)
        await self._send("acc", {p: self.acc[pages] for p, pages in self.need.items()})
        if sweeping:
            await self._send("weights", {p: self.next[pages] for p, pages in self.give.items()})
        return lowest

    async def inverse_total(self) -> float:
        """Phase 2: add the peers' sums; y = c·acc/OutDeg + (1 − c)·E' here; returns Σ y."""
        for peer, (values, _) in self._take("acc").items():
            np.add.at(self.acc, self.give[peer], values)
        for peer, (values, _) in self._take("weights").items():
            self.next[self.need[peer]] = values
        degree = self.outdeg[self.lo : self.hi]
        inflow = np.divide(
            self.acc[self.lo : self.hi], degree, where=degree > 0, out=np.zeros_like(self.y)
        )
        self.y = self.damping * inflow + (1.0 - self.damping) * self.e
        return float(self.y.sum())

    async def inverse_finish(self, total: float, advance: bool) -> tuple[float, float, float]:
        """Phase 3: x = y/total here; returns (‖Δ‖₁, Σ ŵ·|Δ|, max x_old/x_new) over this
        range, the figures of :func:`~ranking.kernels.inverse_finish_sweep`."""
        new = self.y / total
        change = np.abs(new - self.interest)
        degree = self.outdeg[self.lo : self.hi]
        stored = self.certified[self.lo : self.hi]
        weights = np.where(degree > 0, stored * degree, stored)
        held = self.interest > 0
        if not held.any():
            ratio = 0.0
        elif (new[held] <= 0).any():
            ratio = np.inf
        else:
            ratio = float((self.interest[held] / new[held]).max())
        self.interest = new
        if advance:
            self.certified, self.next = self.next, self.certified
        return float(change.sum()), float((change * weights).sum()), ratio

    async def inverse_values(self) -> np.ndarray:
        return self.interest.copy()
