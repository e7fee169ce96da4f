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

A chaotic sweep goes over its block in ``PIECES`` pieces of consecutive pages: after each
piece the peers get its new values (while the next piece is swept), and before each piece
the worker reads what its peers sent meanwhile. A peer's values are then at most a piece
old, not a sweep or two: the workers' sweeps come close to one Gauss-Seidel sweep over all
pages, where whole-sweep messages made the chaotic importance take 25 % more sweeps than
the synchronous one. The bytes are the same: each value the peer reads travels once a sweep.

The interest's sweeps are :class:`~ranking.cluster.worker_interest.InterestWorker`'s.
"""

from __future__ import annotations

import asyncio
import itertools
import time

import numpy as np

from ranking.cluster.blocks import load_block, needs, read_info, read_outdeg
from ranking.cluster.exchange import Exchange, Tag
from ranking.cluster.worker_interest import InterestWorker
from ranking.errors import RankingError
from ranking.pagerank import kernels
from ranking.pagerank.extrapolation import PowerExtrapolation
from ranking.pagerank.slices import SliceView

#: (‖Δ‖₁, Σ x, extrapolated) of a sweep, over one worker's range or over all.
DirectFigures = tuple[float, float, bool]
#: Pieces of a chaotic sweep, each sent as soon as it is swept (at least; one slice or more).
PIECES = 8
#: A piece of the block: the slice and its rows a…b.
Piece = tuple[SliceView, int, int]


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
        per_slice = -(-PIECES // len(self.block))
        self.pieces: list[Piece] = []
        for view in self.block:
            cuts = np.linspace(0, view.hi - view.lo, per_slice + 1).round().astype(int)
            self.pieces += [(view, int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a]
        self.cuts = np.array([view.lo + a for view, a, _ in self.pieces] + [self.hi])
        self.spans: dict[int, np.ndarray] = {}
        InterestWorker.__init__(self)

    async def connect(self, peers: dict[int, str], give: dict[int, np.ndarray]) -> None:
        await Exchange.connect(self, peers, give)
        self.spans = {peer: np.searchsorted(pages, self.cuts) for peer, pages in self.give.items()}

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
        for kind in self._direct_kinds():  # the last run's values are not this vector's
            self.take(kind)
        self.done = 0
        self.last_delta = float("inf")

    def _absorb_direct(self, upto: Tag | None) -> None:
        """The peers' values tagged at most ``upto`` (the newest when None), whole sweeps'
        and pieces', oldest first (a whole sweep's comes after its pieces); each message
        says which of the sender's pages it holds, lo…hi."""
        started = time.perf_counter()
        messages = []
        for kind in self._direct_kinds():
            for peer, (tag, values, figures) in self.take_tagged(kind, upto).items():
                messages.append((tag, kind == "direct", peer, values, figures))
        for _, _, peer, values, (dangling, lo, hi, *_) in sorted(messages, key=lambda m: m[:2]):
            pages = self.need[peer]
            start, stop = np.searchsorted(pages, (lo, hi))
            self.scaled[pages[start:stop]] = values
            self.dangling_of[peer] = dangling
        self.timed("absorb_s", started)

    def _direct_kinds(self) -> list[str]:
        """A whole sweep's messages, then each piece's."""
        return ["direct", *(f"direct/{k}" for k in range(len(self.pieces)))]

    def _sweep_pieces(self, pieces: list[Piece], upto: Tag | None) -> tuple[float, float]:
        """Gauss-Seidel over ``pieces`` of the block (§5.3 in a slice) from the peers' values
        tagged at most ``upto``: (‖Δ‖₁, Σ x) over them."""
        if self.scaled.shape[0] != self.num_pages:  # the kernel trusts its arrays' sizes
            raise RankingError(f"slice worker {self.index} swept before direct_init")
        self._absorb_direct(upto)
        started, cpu = time.perf_counter(), time.thread_time()
        dangling = sum(self.dangling_of.values())
        delta = mass = 0.0
        for view, a, b in pieces:
            moved, change, total = kernels.gauss_seidel_slice(
                view.indptr[a : b + 1],
                view.sources,
                view.lo + a,
                self.scaled,
                self.outdeg,
                self.teleport,
                self.damping,
                dangling,
                True,
                False,
                self.scaled[view.lo + a : view.lo + b],
            )
            dangling += change
            self.dangling_of[self.index] += change
            delta += moved
            mass += total
        self.swept(started, cpu, local=False)
        return delta, mass

    def _end_sweep(self, delta: float, extrapolate: bool) -> bool:
        """After a sweep of the whole block: the extrapolation of the own pages when it is
        due (and ``extrapolate``); whether it jumped."""
        self.done += 1
        self.tally["local_sweeps"] += 1
        self.last_delta = delta
        if self.extrapolation is not None and not extrapolate:
            self.extrapolation.reset()  # its schedule starts again after this sweep
            return False
        if self.extrapolation is None or not self.extrapolation.after_sweep(self.done, delta):
            return False
        own = slice(self.lo, self.hi)
        self.dangling_of[self.index] = kernels.dangling_mass(self.scaled[own], self.outdeg[own])
        return True

    def _direct_sweep(self, extrapolate: bool, upto: Tag | None) -> DirectFigures:
        delta, mass = self._sweep_pieces(self.pieces, upto)
        return delta, mass, self._end_sweep(delta, extrapolate)

    async def _send_pages(self, kind: str, piece: slice, tag: Tag, *rest: object) -> None:
        """The peers' part of the own pages ``cuts[piece]``, with the dangling mass."""
        lo, hi = self.cuts[piece.start], self.cuts[piece.stop]
        parts = {
            p: self.scaled[self.give[p][self.spans[p][piece.start] : self.spans[p][piece.stop]]]
            for p in self.give
        }
        figures = (self.dangling_of[self.index], int(lo), int(hi), *rest)
        await self.send(kind, parts, figures, tag, timed=kind == "direct")

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
            own = await asyncio.to_thread(self._direct_sweep, extrapolate, upto)
            await self._send_pages("direct", slice(0, len(self.pieces)), tag, *own)
            heard = await self.arrived("direct", tag, epoch)
            if heard is None:
                break
            every = {self.index: own} | {p: tuple(f[3:]) for p, f in heard.items()}
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
        each sweep (§5.4's chaotic iterations), until ``halt(epoch)``, ``limit`` sweeps, or
        a sweep whose ‖Δ‖₁ is at most ``enough`` (this worker's share of the tolerance: a
        worker alone would otherwise sweep on until the coordinator's next look)."""
        done = 0
        while self._halted < epoch and done < limit and not (done and self.last_delta <= enough):
            done += 1
            delta, sends = 0.0, []
            for k, piece in enumerate(self.pieces):
                delta += (await asyncio.to_thread(self._sweep_pieces, [piece], None))[0]
                part = self._send_pages(f"direct/{k}", slice(k, k + 1), (epoch, done))
                sends.append(asyncio.ensure_future(part))
            jumped = await asyncio.to_thread(self._end_sweep, delta, True)
            started = time.perf_counter()
            await asyncio.gather(*sends)
            self.timed("send_s", started)
            if jumped:  # the extrapolated values, all of them
                await self._send_pages("direct", slice(0, len(self.pieces)), (epoch, done))
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
