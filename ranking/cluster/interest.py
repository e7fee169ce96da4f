"""The interest (inverse PageRank, §5.2) on a Dask cluster: Jacobi sweeps of eq. 6–7.

Single-machine Gauss-Seidel pushes each page's change into the children sums of its
parents as it goes, parents that live on every other worker: distributed, that is a message
per page. So here the interest is swept by the Jacobi sweeps of eq. 6–7 (the power method,
which always converges), three calls a sweep: each worker scatters its pages' interest into
their parents' sums and sends the peers their partial sums (phase 1), then every worker
knows y = c·Mᵗ·x + (1 − c)·E' on its pages and its sum (phase 2), then x = y/Σy (phase 3).
The sum is global, so every sweep has a barrier whatever the mode.

The stop is the proven bound of :mod:`ranking.pagerank.inverse_bound` for the vector the sweep
started from, plus ‖d‖₁ for the new one, as in the single-machine Jacobi fallback
(:meth:`ranking.pagerank.inverse.InversePageRank.end_sweep`): the weights' Jacobi sweeps run on the
workers in phase 1, their certificate (min h) and r̄ are combined in :class:`BoundState`.
"""

from __future__ import annotations

import numpy as np

from ranking.cluster.actors import SliceCluster, WorkersLost
from ranking.cluster.rankings import SweepMonitor, _ClusterRanking
from ranking.errors import NoErrorBound
from ranking.pagerank.direct import copy_distribution
from ranking.pagerank.inverse_bound import BoundState


class ClusterInterest(_ClusterRanking):
    """Interest by Jacobi sweeps of eq. 6–7 on a Dask cluster, stopped on the proven bound.

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
        monitor: SweepMonitor | None = None,
    ) -> None:
        super().__init__(cluster, monitor)
        self.teleport = np.empty(cluster.info.num_pages)
        copy_distribution(teleport, self.teleport, "teleport vector E'")
        self.variant = variant
        self.bound_state = BoundState(self.damping)
        self.last_delta = float("inf")
        self.last_bound = float("inf")
        self.r = 1.0

    def _part(self, index: int) -> np.ndarray:
        lo, hi = self.cluster.ranges[index]
        return self.teleport[lo:hi]

    def init(self) -> None:
        super().init()
        self.cluster.call("inverse_init", per=[(self._part(k),) for k in range(self.cluster.size)])
        self.bound_state.reset()
        self.last_delta = self.last_bound = float("inf")
        self.r = 1.0

    def restore(self, index: int, lost: list[int]) -> None:
        """The new actor restarts its pages from E', and the weights from 1 everywhere."""
        self.cluster.wait(
            [self.cluster.actors[index].inverse_init(self._part(index))], indices=[index]
        )
        state = self.bound_state
        state.factor, state.frozen, state.contracting = np.inf, False, False

    def step(self) -> None:
        try:
            self._sweep()
        except WorkersLost as lost:
            self._survived(lost)
            self.last_bound = float("inf")
        self.sweeps += 1
        self._stale = max(self._stale - 1, 0)
        self.consistent = self._stale == 0
        self._tell(*self.figure_or_inf())

    def _sweep(self) -> None:
        state = self.bound_state
        s = state.weights_damping
        sweeping = bool(np.isfinite(s)) and not state.frozen
        restart = state.restart_weights()
        sweeping = sweeping or restart
        lowest = self.cluster.call("inverse_scatter", sweeping, s if sweeping else 0.0, restart)
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
        else:
            self.last_bound = float("inf")

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
            "mode": "synchronous",
            "variant": self.variant,
            "normalisation_r": self.r,
            "r_upper_bound": self.bound_state.r_bar,
            "weights_factor": self.bound_state.factor,
        }
