"""The Dask actor that owns one block of the link matrix and its part of the vectors (§5.4).

Each :class:`SliceWorker` lives on one Dask worker. It reads its block once from the slice
files (:mod:`ranking.cluster.blocks`) and keeps it in memory; it keeps the whole direct
vector, as §5.4's stations keep the whole PR, current for its own pages and for the pages
of its peers that its block reads. After a sweep it sends each peer only the values the
peer's block reads (:mod:`ranking.cluster.exchange`), straight to the peer's actor: workers
talk to workers, the coordinator only orders the sweeps and sums the figures.

Every method is a coroutine: the sweeps run in a thread (the numba kernels release the
GIL), so the worker's event loop keeps answering its peers' sends and the coordinator's
``halt`` and ``status`` while a sweep runs, whatever else the worker hosts (Dask runs the
plain methods of all actors of a worker in one thread, which a chaotic loop would hold).

The direct vector is extrapolated on each worker's own pages (:mod:`ranking.pagerank.
extrapolation`, the single process's scheme, with the decay measured on the worker's own
‖Δ‖₁): the slow error modes of a web graph are groups of pages whose links stay among
themselves, hosts, which consecutive ids keep within one worker's range. A sweep that
extrapolated says so, and its change then bounds nothing (the coordinator does not stop on
it); the extrapolated values are what the peers get.

The interest's sweeps are :class:`~ranking.cluster.worker_interest.InterestWorker`'s.
"""

from __future__ import annotations

import asyncio
import time

import numpy as np

from ranking.cluster import kernels as moves
from ranking.cluster.blocks import load_block, needs, read_info, read_outdeg
from ranking.cluster.exchange import Exchange, Tag
from ranking.cluster.worker_interest import InterestWorker
from ranking.errors import RankingError
from ranking.pagerank import kernels
from ranking.pagerank.extrapolation import PowerExtrapolation

#: (‖Δ‖₁, Σ x, extrapolated) of a sweep, over one worker's range or over all.
DirectFigures = tuple[float, float, bool]


class SliceWorker(InterestWorker, Exchange):
    """One worker's share of a distributed ranking: its block, its pages lo…hi, its peers."""

    def __init__(
        self, url: str, slices: list[int], index: int, ranges: list[tuple[int, int]], damping: float
    ) -> None:
        Exchange.__init__(self)
        info = read_info(url)
        self.block = load_block(info, slices)
        self.outdeg = read_outdeg(info)
        self.num_pages = info.num_pages
        self.index = index
        self.lo, self.hi = ranges[index]
        self.ranges = ranges
        self.damping = damping
        self.need = needs(self.block, ranges, index)
        self.done = 0
        self.last_delta = float("inf")
        self._halted = 0
        self.scaled = np.empty(0)
        self.dangling_of: dict[int, float] = {}
        self.extrapolation: PowerExtrapolation | None = None
        InterestWorker.__init__(self)

    # -- the importance (direct PageRank) --------------------------------------------------

    async def direct_init(
        self, teleport: np.ndarray | None, scaled: np.ndarray | None, extrapolate: bool = True
    ) -> None:
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
        own = self.scaled[self.lo : self.hi]
        self.extrapolation = (
            PowerExtrapolation([(own, np.empty_like(own))]) if extrapolate else None
        )
        self.take("direct")
        self.done = 0
        self.last_delta = float("inf")

    def _direct_sweep(self, extrapolate: bool, upto: Tag | None) -> DirectFigures:
        """Gauss-Seidel over the block from the peers' messages tagged at most ``upto`` (the
        newest when None) (§5.3 in a slice), then the extrapolation of the own pages when it
        is due (and ``extrapolate``)."""
        if self.scaled.shape[0] != self.num_pages:  # the kernel trusts its arrays' sizes
            raise RankingError(f"slice worker {self.index} swept before direct_init")
        started = time.perf_counter()
        for peer, (values, figures) in self.take("direct", upto).items():
            moves.put(self.scaled, self.need[peer], values)
            self.dangling_of[peer] = figures[0]
        self.timed("absorb_s", started)
        started, cpu = time.perf_counter(), time.thread_time()
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
        self.done += 1
        self.last_delta = delta
        jumped = False
        if self.extrapolation is not None and not extrapolate:
            self.extrapolation.reset()  # its schedule starts again after this sweep
        elif self.extrapolation is not None:
            jumped = self.extrapolation.after_sweep(self.done, delta)
        if jumped:
            own = slice(self.lo, self.hi)
            self.dangling_of[self.index] = kernels.dangling_mass(self.scaled[own], self.outdeg[own])
        self.swept(started, cpu)
        return delta, mass, jumped

    async def _sweep_and_send(self, extrapolate: bool, upto: Tag | None, tag: Tag) -> DirectFigures:
        """One sweep, then the peers get their part of it, with this worker's dangling mass
        and the sweep's figures: (‖Δ‖₁, Σ x) over this range, and whether the own pages were
        extrapolated after it (the change then bounds nothing)."""
        figures = await asyncio.to_thread(self._direct_sweep, extrapolate, upto)
        parts = {p: moves.gather(self.scaled, pages) for p, pages in self.give.items()}
        await self.send("direct", parts, (self.dangling_of[self.index], *figures), tag)
        return figures

    async def run_sync(
        self, epoch: int, limit: int, hold: int, tol: float, extrapolate: bool = True
    ) -> list[DirectFigures]:
        """Synchronous sweeps with no coordinator in the loop: sweep t reads exactly the
        peers' values of sweep t − 1 (the first, their newest of an earlier run), each
        worker waiting for its peers' messages, not for a barrier. After each sweep every
        worker sums the same figures in the same order (the workers' ‖Δ‖₁ and Σ x, in index
        order), so all stop after the same sweep: the first after the ``hold`` first whose
        c/(1 − c)·‖Δ‖₁ is at most ``tol`` with no extrapolation (the single-machine stop
        rule, which the coordinator then asks of it), or ``limit`` sweeps, or
        ``halt(epoch)``. Returns the global figures of each sweep done."""
        factor = self.damping / (1.0 - self.damping)
        done: list[DirectFigures] = []
        upto: Tag = (epoch, 0)
        while self._halted < epoch and len(done) < limit:
            tag = (epoch, len(done) + 1)
            own = await self._sweep_and_send(extrapolate, upto, tag)
            heard = await self.arrived("direct", tag, epoch)
            if heard is None:
                break
            every = {self.index: own} | {p: tuple(f[1:]) for p, f in heard.items()}
            delta = sum(every[k][0] for k in sorted(every))
            mass = sum(every[k][1] for k in sorted(every))
            jumped = any(every[k][2] for k in sorted(every))
            done.append((delta, mass, jumped))
            upto = tag
            if len(done) > hold and not jumped and factor * delta <= tol:
                break
        return done

    async def run_chaotic(self, epoch: int, limit: int, enough: float = 0.0) -> int:
        """Sweep as fast as possible from the newest values the peers sent, sending after
        each sweep (§5.4's chaotic iterations), each sweep once every peer's new values came
        or about a sweep's time went by (:meth:`Exchange.news`), until ``halt(epoch)``,
        ``limit`` sweeps, or a sweep whose ‖Δ‖₁ is at most ``enough`` (this worker's share
        of the tolerance: a worker alone would otherwise sweep on until the coordinator's
        next look)."""
        done, patience = 0, 0.0
        while self._halted < epoch and done < limit and not (done and self.last_delta <= enough):
            if done:
                await self.news(("direct",), epoch, patience)
                if self._halted >= epoch:
                    break
            started = time.perf_counter()
            done += 1
            await self._sweep_and_send(True, None, (epoch, done))
            patience = time.perf_counter() - started
        return done

    async def halt(self, epoch: int) -> None:
        """End the runs of ``epoch`` (a sweep under way finishes and sends first)."""
        self._halted = max(self._halted, epoch)
        self._news.set()  # a wait for the peers' values ends

    async def status(self) -> tuple[int, float]:
        """(sweeps done, ‖Δ‖₁ of the last one): the chaotic run's residual, for the stop."""
        return self.done, self.last_delta

    async def direct_copy(self) -> np.ndarray:
        """This worker's whole copy of the vector, to restart a lost peer from it."""
        return self.scaled.copy()

    async def direct_values(self) -> np.ndarray:
        """The importance of this range (unscaled)."""
        values = np.empty(self.hi - self.lo)
        kernels.unscale(self.scaled[self.lo : self.hi], self.outdeg[self.lo : self.hi], values)
        return values
