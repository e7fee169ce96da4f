"""The interest (inverse PageRank, §5.2) on a Dask cluster, synchronous or chaotic.

Both modes make *runs* of Gauss-Seidel sweeps on every worker
(:mod:`ranking.cluster.worker_interest`), each worker normalising x and renewing r of eq. 7
from the global sums its peers send with their values, and end each run by a *check*: x
normalised exactly (Σx gathered), then one Jacobi sweep of eq. 6–7 (the power method), three
calls: partial sums, y = c·Mᵗ·x + (1 − c)·E' on each worker's pages and its sum, x = y/Σy.

**Synchronous**: a barrier after every sweep of a run, so every worker normalises from the
sums of the previous sweep, all of them (the single process's block Gauss-Seidel).

**Chaotic** (§5.4): no barrier within a run; each worker normalises from the *lagged* sums
its peers last sent, once each has sent new ones.

Either way the stop is the proven bound of :mod:`ranking.pagerank.inverse_bound`, asked only
of a Jacobi sweep that started from one normalised vector all workers held: the bound for
that vector plus ‖d‖₁ for the new one, as in the single-machine Jacobi fallback
(:meth:`ranking.pagerank.inverse.InversePageRank.end_sweep`). The weights' certificate
(min h) is computed in that sweep's phase 1 against one weight vector too, and r̄ from its
Collatz–Wielandt ratio; both are combined in :class:`BoundState`. So the chaotic runs only
decide how fast the vector gets near x*; what stops the run is proven as in one process.
"""

from __future__ import annotations

import numpy as np

from ranking.cluster.actors import SliceCluster, WorkersLost
from ranking.cluster.rankings import SweepMonitor, _ClusterRanking
from ranking.errors import NoErrorBound
from ranking.pagerank.direct import copy_distribution
from ranking.pagerank.inverse import SLOWEST_RATE
from ranking.pagerank.inverse_bound import BoundState

#: Local sweeps of a chaotic run at most: the check after it certifies the weights and
#: tightens r̄, which the next run's weights need. The first runs are shorter (2, 4, 8...
#: sweeps): r̄ is loose at first, and the weights wait for it.
RUN_SWEEPS = 25
#: A chaotic run ends once its residual is this fraction of what the last check's bound
#: says the tolerance needs (the bound is about proportional to the residual).
MARGIN = 0.5
#: Runs before the checks must show progress: from then on, two checks in a row whose ‖d‖₁
#: did not shrink by SLOWEST_RATE a sweep since the one before, and is over the tolerance
#: (below it the runs only wait for the weights' certificate), end the Gauss-Seidel runs (as
#: the single process's must keep pace, :mod:`ranking.pagerank.inverse`): the interest goes
#: on by the Jacobi sweeps of eq. 6–7, which always converge.
PACE_FROM_RUN = 4


class ClusterInterest(_ClusterRanking):
    """Interest by the sweeps of eq. 6–7 on a Dask cluster, stopped on the proven bound.

    ``teleport`` is E' (:func:`~ranking.pagerank.inverse.xml_teleport` or
    :func:`~ranking.pagerank.inverse.importance_teleport`), normalised here.
    """

    kind = "interest"

    def __init__(
        self,
        cluster: SliceCluster,
        teleport: np.ndarray,
        *,
        variant: str = "PR'",
        chaotic: bool = False,
        tol: float = 1e-8,
        max_sweeps: int = 1000,
        monitor: SweepMonitor | None = None,
    ) -> None:
        super().__init__(cluster, monitor)
        self.teleport = np.empty(cluster.info.num_pages)
        copy_distribution(teleport, self.teleport, "teleport vector E'")
        self.variant = variant
        self.chaotic = chaotic
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.bound_state = BoundState(self.damping)
        self.last_delta = float("inf")
        self.last_bound = float("inf")
        self.r = 1.0
        self._residual = float("inf")
        self._target = 0.0
        self._runs = 0
        self.jacobi_from = None
        self._checked = (0, float("inf"))
        self._behind = 0

    def _part(self, index: int) -> np.ndarray:
        lo, hi = self.cluster.ranges[index]
        return self.teleport[lo:hi]

    def init(self) -> None:
        super().init()
        self.cluster.call("inverse_init", per=[(self._part(k),) for k in range(self.cluster.size)])
        self.bound_state.reset()
        self.last_delta = self.last_bound = float("inf")
        self.r = 1.0
        self._residual, self._target, self._runs = float("inf"), 0.0, 0
        self.jacobi_from: int | None = None
        self._checked = (0, float("inf"))
        self._behind = 0

    def restore(self, index: int, lost: list[int]) -> None:
        """The new actor restarts its pages from E', and the weights from 1 everywhere."""
        self.cluster.wait(
            [self.cluster.actors[index].inverse_init(self._part(index))], indices=[index]
        )
        state = self.bound_state
        state.factor, state.frozen, state.contracting = np.inf, False, False

    def _survived(self, lost: WorkersLost) -> None:
        super()._survived(lost)
        self.last_bound = float("inf")

    def step(self) -> None:
        scale = 1.0
        try:
            if self.sweeps > 0 and self.jacobi_from is None:
                self._run()
                scale = 1.0 / float(sum(self.cluster.call("inverse_mass")))
                self._sweep(scale)
                self._keep_pace()
            else:
                self._sweep(scale)
        except WorkersLost as lost:
            self._survived(lost)
        self.sweeps += 1
        self._stale = max(self._stale - 1, 0)
        self.consistent = self._stale == 0
        self._tell(*self.figure_or_inf())

    def _sweep(self, scale: float) -> None:
        """One Jacobi sweep of eq. 6–7 from x·``scale`` (which sums to 1), with its bound."""
        state = self.bound_state
        s = state.weights_damping
        sweeping = bool(np.isfinite(s)) and not state.frozen
        restart = state.restart_weights()
        sweeping = sweeping or restart
        args = (sweeping, s if sweeping else 0.0, restart, scale)
        lowest = self.cluster.call("inverse_scatter", *args)
        if sweeping:
            state.certify(min(lowest))
        total = float(sum(self.cluster.call("inverse_total")))
        advance = sweeping and not state.frozen
        figures = self.cluster.call("inverse_finish", total, advance)
        self.last_delta = sum(delta for delta, _, _ in figures)
        weighted = sum(w for _, w, _ in figures)
        ratio = max(r for _, _, r in figures)
        self.r = 1.0 / total
        if self._stale == 0:  # x was normalised: r̄ and the bound hold for it
            state.observe(self.r, ratio)
            self.last_bound = state.bound(weighted) + self.last_delta
            if np.isfinite(self.last_bound) and self._residual < np.inf:
                self._target = MARGIN * self.tol * self._residual / self.last_bound
        else:
            self.last_bound = float("inf")

    def _keep_pace(self) -> None:
        """After a check: end the chaotic runs if they do not keep pace (``PACE_FROM_RUN``)."""
        at, delta = self._checked
        slowest = delta * SLOWEST_RATE ** (self.sweeps + 1 - at)
        behind = self.last_delta > max(slowest, self.tol)  # below tol, the weights lag
        self._behind = self._behind + 1 if behind and self._stale == 0 else 0
        if self._runs >= PACE_FROM_RUN and self._behind >= 2:
            self.jacobi_from = self.sweeps + 2
        self._checked = (self.sweeps + 1, self.last_delta)

    def _run(self) -> None:
        """Gauss-Seidel sweeps on every worker, each waiting for its peers' sums of the
        previous sweep (synchronous) or not (chaotic), until the residual reaches the last
        check's target or the run's length (``RUN_SWEEPS``, shorter at first)."""
        state = self.bound_state
        restart = state.restart_weights()  # s + ε < 1 since the last check: sweep them now
        s = state.weights_damping
        s = s if bool(np.isfinite(s)) and state.contracting and not state.frozen else 0.0
        epoch = self.cluster.next_epoch()
        self._runs += 1
        limit = max(min(RUN_SWEEPS, 2**self._runs, self.max_sweeps - self.sweeps - 1), 1)
        self.cluster.call("interest_prepare", self.r, epoch, restart)
        target = None if self.chaotic else self._target
        runs = [actor.run_interest(epoch, limit, s, target) for actor in self.cluster.actors]
        counts, residual = self._unbarred(
            epoch, runs, "interest_status", 1.0, self._target if self.chaotic else None
        )
        self.sweeps += max(done for done, _ in counts)
        self._residual = residual if self.chaotic else sum(moved for _, moved in counts)

    def figure_or_inf(self) -> tuple[str, float]:
        try:
            return self.figure()
        except NoErrorBound:  # no figure yet: the progress bar shows inf
            return "l1_error_bound", float("inf")

    def norm_delta(self) -> float:
        """The proven bound of :mod:`ranking.pagerank.inverse_bound` (inf until certified)."""
        return self.bound_state.checked(self.last_bound)

    def relative_change(self) -> float:
        return self.last_delta

    def vector(self) -> np.ndarray:
        return np.concatenate(self.cluster.call("inverse_values"))

    def details(self) -> dict[str, object]:
        return {
            **super().details(),
            "mode": "chaotic" if self.chaotic else "synchronous",
            "jacobi_from_sweep": self.jacobi_from,
            "variant": self.variant,
            "normalisation_r": self.r,
            "r_upper_bound": self.bound_state.r_bar,
            "weights_factor": self.bound_state.factor,
        }
