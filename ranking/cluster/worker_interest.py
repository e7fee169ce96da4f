"""A slice worker's share of the interest (§5.2, eq. 6–7): Jacobi sweeps and Gauss-Seidel runs.

**Jacobi sweeps** (the checks that end the runs, and the fallback), three calls a sweep:
each worker scatters its pages' interest into the accumulator of their parents (the sources
of its in-links) and sends the peers their partial sums (phase 1), adds the sums it received
and computes y = c·Mᵗ·x + (1 − c)·E' on its pages (phase 2), then x = y/Σy with the
global Σy (phase 3). The weights of the interest's bound (:mod:`ranking.pagerank.
inverse_bound`) are swept in phase 1, and certified there against one vector all workers
hold.

**Gauss-Seidel runs** (one sweep a call with a barrier, or chaotic, §5.4): each worker
sweeps its pages by the single process's Gauss-Seidel
(:func:`~ranking.pagerank.kernels.inverse_gauss_seidel_slice`), r fixed, from the newest
partial sums its peers sent, and sends its own after each sweep. Its children sums hold,
for its own pages, its own partial sum plus each peer's last one (a new message replaces
the old one's share: ``sums[pages] += new − heard``), and for the peers' pages its own
partial sum, which is what it sends. Eq. 7's normalisation needs two global
sums, Σx and Σ c·(Mᵗ·x)_j: each worker sends its own two with its partial sums, and once
every peer has reported since its last normalisation it takes the *lagged* totals (its own
current figures, the peers' last ones), multiplies its interest, its sums and what it heard
by 1/Σx and sets r = 1/(Σ c·Mᵗ·x/Σx + 1 − c), eq. 7 for the normalised vector, as the single
process does after each sweep. (A message sent before its sender normalised is off by that
factor until the sender's next one replaces it.) Every few sweeps a worker extrapolates its
own pages' interest as the single process does (:mod:`ranking.pagerank.extrapolation`, the
decay measured on its own Σ|Δx|), clipped at 0 (the bound's theorem needs x ≥ 0), and
recomputes its share of the sums from it. The bound's weights are swept alongside by
Gauss-Seidel, their certificate left to the Jacobi check, which alone sees one consistent
vector (docs/ranking.md).
"""

from __future__ import annotations

import asyncio
import time

import numpy as np

from ranking.cluster import kernels as moves
from ranking.cluster.exchange import Tag
from ranking.errors import RankingError
from ranking.pagerank import kernels
from ranking.pagerank.extrapolation import PowerExtrapolation
from ranking.pagerank.inverse_bound import LIFT


class InterestWorker:
    """The interest's state and sweeps on one slice worker (mixed into the actor)."""

    num_pages: int
    lo: int
    hi: int
    damping: float
    outdeg: np.ndarray
    block: list
    need: dict[int, np.ndarray]
    give: dict[int, np.ndarray]
    tally: dict[str, float]
    index: int
    _halted: int

    def __init__(self) -> None:
        self.acc = np.empty(0)
        self.heard: dict[int, np.ndarray] = {}
        self.reported: dict[int, tuple[float, float]] = {}
        self.fresh: set[int] = set()
        self.r = 1.0
        self.done_interest = 0
        self.moved = float("inf")
        self.sums: tuple[float, float] | None = None
        self.extrapolation = PowerExtrapolation([])

    async def inverse_init(self, teleport: np.ndarray) -> None:
        """Start from x = E' on this range (``teleport``, normalised over all pages)."""
        n, own = self.num_pages, slice(self.lo, self.hi)
        self.e = np.zeros(n)
        self.e[own] = teleport
        self.interest = self.e.copy()
        self.acc = np.zeros(n)
        self.y = np.zeros(self.hi - self.lo)
        self.certified = np.empty(n)
        self.next = np.empty(n)
        self.self_linked = np.zeros(n, dtype=np.uint8)
        for view in self.block:
            kernels.mark_self_links(view.indptr, view.sources, view.lo, self.self_linked)
        self._restart_weights()
        for kind in ("acc", "weights", "cacc", "cweights"):
            self.take(kind)

    def _restart_weights(self) -> None:
        self.certified[:] = 1.0
        kernels.scale(self.certified, self.outdeg, self.certified)
        self.next[:] = self.certified

    def _check_init(self) -> None:
        if self.acc.shape[0] != self.num_pages:  # the kernels trust their arrays' sizes
            raise RankingError(f"slice worker {self.index} swept before inverse_init")

    # -- Jacobi sweeps -----------------------------------------------------------------------

    def _inverse_scatter(self, sweeping: bool, s: float, restart: bool, scale: float) -> float:
        self._check_init()
        self.take("cacc")  # a chaotic run's last sums: this sweep scatters afresh
        for peer, (values, _) in self.take("cweights").items():
            moves.put(self.certified, self.need[peer], values)
        if restart:
            self._restart_weights()
        if scale != 1.0:
            self.interest[self.lo : self.hi] *= scale
        started, cpu = time.perf_counter(), time.thread_time()
        self.acc[:] = 0.0
        lowest = np.inf
        for view in self.block:
            kernels.inverse_scatter_slice(
                view.indptr, view.sources, view.lo, self.interest, self.acc
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
        self.swept(started, cpu, local=False)
        return lowest

    async def inverse_scatter(
        self, sweeping: bool, s: float, restart: bool, scale: float = 1.0
    ) -> float:
        """Phase 1 of a sweep: x ← ``scale``·x here (the check after a chaotic run makes x
        sum to 1), c·Mᵗ·x's partial sums and, when ``sweeping``, the weights' Jacobi step at
        damping ``s``; send each peer its sums and weights. Returns min h."""
        lowest = await asyncio.to_thread(self._inverse_scatter, sweeping, s, restart, scale)
        await self.send("acc", {p: moves.gather(self.acc, pages) for p, pages in self.need.items()})
        if sweeping:
            sent = {p: moves.gather(self.next, pages) for p, pages in self.give.items()}
            await self.send("weights", sent)
        return lowest

    async def inverse_total(self) -> float:
        """Phase 2: add the peers' sums; y = c·acc/OutDeg + (1 − c)·E' here; returns Σ y."""
        for peer, (values, _) in self.take("acc").items():
            moves.add(self.acc, self.give[peer], values)  # ``give`` lists distinct pages
        for peer, (values, _) in self.take("weights").items():
            moves.put(self.next, self.need[peer], values)
        own = slice(self.lo, self.hi)
        degree = self.outdeg[own]
        inflow = np.divide(self.acc[own], degree, where=degree > 0, out=np.zeros_like(self.y))
        self.y = self.damping * inflow + (1.0 - self.damping) * self.e[own]
        return float(self.y.sum())

    async def inverse_finish(self, total: float, advance: bool) -> tuple[float, float, float]:
        """Phase 3: x = y/total here; returns (‖Δ‖₁, Σ ŵ·|Δ|, max x_old/x_new) over this
        range, the figures of :func:`~ranking.pagerank.kernels.inverse_finish_sweep`."""
        own = slice(self.lo, self.hi)
        new, old = self.y / total, self.interest[own]
        change = np.abs(new - old)
        degree = self.outdeg[own]
        stored = self.certified[own]
        weights = np.where(degree > 0, stored * degree, stored)
        held = old > 0
        if not held.any():
            ratio = 0.0
        elif (new[held] <= 0).any():
            ratio = np.inf
        else:
            ratio = float((old[held] / new[held]).max())
        self.interest[own] = new
        if advance:
            self.certified, self.next = self.next, self.certified
        return float(change.sum()), float((change * weights).sum()), ratio

    async def inverse_mass(self) -> float:
        """Σ x over this range (the check after a chaotic run normalises by the total)."""
        return float(self.interest[self.lo : self.hi].sum())

    async def inverse_values(self) -> np.ndarray:
        return self.interest[self.lo : self.hi].copy()

    # -- chaotic sweeps ----------------------------------------------------------------------

    async def interest_prepare(self, r: float, epoch: int, restart: bool = False) -> None:
        """Before the run ``epoch``: this block's partial sums of the current interest, sent
        to the peers (so every worker's first sweep reads complete sums), and r of eq. 7;
        with ``restart``, the weights start again from 1 (the run sweeps them).
        Earlier runs' messages are dropped, not a peer's of this run already here."""
        self._check_init()
        if restart:
            self._restart_weights()
        self.heard, self.reported, self.fresh = {}, {}, set()
        self._own_sums()
        self.r, self.done_interest, self.moved = r, 0, float("inf")
        self.sums = None
        own = self.interest[self.lo : self.hi]
        self.extrapolation = PowerExtrapolation([(own, np.empty_like(own))])
        self.take("cacc", (epoch, -1))
        self.take("cweights", (epoch, -1))
        await self._send_sums((epoch, 0))

    def _own_sums(self) -> None:
        """The children sums from scratch: this block's share of the current interest,
        plus the peers' last shares on this worker's pages."""
        self.acc[:] = 0.0
        for view in self.block:
            kernels.inverse_scatter_slice(
                view.indptr, view.sources, view.lo, self.interest, self.acc
            )
        for peer, values in self.heard.items():
            moves.add(self.acc, self.give[peer], values)

    async def _send_sums(self, tag: Tag) -> None:
        """The peers' partial sums, with this worker's two figures of eq. 7 and its sweep's
        Σ|Δx| (None before its first sweep of the run: its own pages' sums lack the peers'
        shares until then)."""
        parts = {p: moves.gather(self.acc, pages) for p, pages in self.need.items()}
        figures = None if self.sums is None else (*self.sums, self.moved)
        await self.send("cacc", parts, figures, tag)

    def _absorb_interest(self, upto: Tag | None) -> None:
        """The peers' partial sums and weights tagged at most ``upto`` (the newest when
        None); then, once every peer has reported since the last time, eq. 7 from the
        lagged global sums: x, the sums and what was heard × 1/Σx, and the next r."""
        for peer, (values, reported) in self.take("cacc", upto).items():
            heard = self.heard.get(peer)
            if heard is None:  # nothing yet from this peer in the run: its share was 0
                heard = self.heard[peer] = np.zeros(len(values))
            moves.replace_share(self.acc, self.give[peer], values, heard)
            if reported is not None:
                self.reported[peer] = reported[:2]
                self.fresh.add(peer)
        for peer, (values, _) in self.take("cweights", upto).items():
            moves.put(self.certified, self.need[peer], values)
        if self.fresh < set(self.need) or self.sums is None:
            return
        mass = self.sums[0] + sum(sx for sx, _ in self.reported.values())
        spread = self.sums[1] + sum(u for _, u in self.reported.values())
        self.r = 1.0 / (spread / mass + (1.0 - self.damping))
        factor = 1.0 / mass
        self.interest[self.lo : self.hi] *= factor
        self.acc *= factor
        for heard in self.heard.values():  # this worker's own copies (replace_share)
            heard *= factor
        self.fresh = set()

    def _interest_sweep(self, s: float, upto: Tag | None) -> None:
        started = time.perf_counter()
        self._absorb_interest(upto)
        self.timed("absorb_s", started)
        started, cpu = time.perf_counter(), time.thread_time()
        moved = 0.0
        for view in self.block:
            moved += kernels.inverse_gauss_seidel_slice(
                view.indptr,
                view.sources,
                view.lo,
                self.outdeg,
                self.self_linked,
                self.e,
                self.damping,
                self.r,
                self.interest,
                self.acc,
                self.certified,
                s,
                LIFT,
                self.certified[view.lo : view.hi],
            )[0]
        own = slice(self.lo, self.hi)
        if self.extrapolation.after_sweep(self.done_interest + 1, moved):
            np.maximum(self.interest[own], 0.0, out=self.interest[own])  # the bound needs x ≥ 0
            self._own_sums()
        mass, spread = moves.range_figures(self.interest, self.acc, self.outdeg, self.lo, self.hi)
        self.sums = (mass, self.damping * spread)
        self.moved = moved
        self.done_interest += 1
        self.swept(started, cpu)

    async def run_interest(
        self, epoch: int, limit: int, s: float, target: float | None = None
    ) -> tuple[int, float]:
        """Gauss-Seidel sweeps of the interest (and, with ``s`` > 0, of the bound's weights
        at damping s), sending after each, until ``halt(epoch)`` or ``limit`` sweeps;
        returns (sweeps, Σ|Δx| of the last one here).

        Chaotic (``target`` None): each sweep reads the newest sums the peers sent, once
        every peer sent new ones or about a sweep's time went by (:meth:`Exchange.news`).
        Synchronous: sweep t reads exactly the peers' sums of sweep t − 1 (the first, those
        of ``interest_prepare``), each worker waiting for its peers' messages; every worker
        sums the same Σ|Δx| in the same order (index order), so all stop after the same
        sweep, the first whose residual is at most ``target``."""
        done, patience = 0, 0.0
        kinds = ("cacc", "cweights") if s > 0 else ("cacc",)  # what a sweep reads
        while self._halted < epoch and done < limit:
            if target is None and done:
                await self.news(kinds, epoch, patience)
                if self._halted >= epoch:
                    break
            started = time.perf_counter()
            upto = None if target is None else (epoch, done)
            await asyncio.to_thread(self._interest_sweep, s, upto)
            done += 1
            await self._send_sums((epoch, done))
            if s > 0:
                sent = {p: moves.gather(self.certified, pages) for p, pages in self.give.items()}
                await self.send("cweights", sent, None, (epoch, done))
            patience = time.perf_counter() - started
            if target is None:
                continue
            heard = [await self.arrived(kind, (epoch, done), epoch) for kind in kinds]
            if None in heard:
                break
            every = {self.index: self.moved} | {p: f[2] for p, f in heard[0].items()}
            if sum(every[k] for k in sorted(every)) <= target:
                break
        return done, self.moved

    async def interest_status(self) -> tuple[int, float]:
        """(sweeps, Σ|Δx| of the last one): the chaotic run's residual."""
        return self.done_interest, self.moved
