"""Importance and interest on a Dask cluster: the sweeps of §5.4, synchronous or chaotic.

Both are :class:`~ranking.stepping.IterativeRanking` subclasses whose ``step`` runs on the
:class:`~ranking.cluster.actors.SliceCluster`, so the stop rules of the single-machine run
(:func:`ranking.pagerank.compute.direct_stop`,
:func:`~ranking.pagerank.compute.inverse_stop`) apply unchanged and the result carries the
same proven ℓ₁ bound.

**Importance, synchronous.** Each worker sweeps its block by Gauss-Seidel from the values
its peers sent after the previous sweep (block-Jacobi between workers, Gauss-Seidel inside a
block), then sends each peer the values it reads and waits for theirs: the workers run the
sweeps among themselves and stop after the same one, the first the stop rule accepts
(:meth:`~ranking.cluster.worker.SliceWorker.run_sync`); the coordinator only watches and
asks the rule again of the same figures. The bound c/(1 − c)·‖Δ‖₁ of
:mod:`ranking.pagerank.direct` holds for this splitting too: its proof needs only that every value a
page reads is either new or the one the sweep started from.

**Importance, chaotic (§5.4).** Each worker sweeps as fast as it can from the newest values
it has, with no barrier; the coordinator watches the residual (the sum of the workers' last
‖Δ‖₁) and when c/(1 − c) times it reaches the tolerance, halts the workers and runs one
synchronous sweep from the consistent vector they hold: the stop rule is asked of that
sweep, so the chaotic run stops on the same proven bound. If it is not met the chaotic
sweeps go on.

**Extrapolation.** Each worker extrapolates its own pages (:mod:`ranking.cluster.worker`); a
sweep after which one did bounds nothing, the next one does.

**Interest.** Runs of Gauss-Seidel sweeps, with a barrier after each (synchronous) or none
(chaotic), each ended by an exact Jacobi check that alone may stop the run
(:mod:`ranking.cluster.interest`).

**Faults.** A sweep in which a worker was lost replaces it (:meth:`SliceCluster.replace`):
the new actor reads its block again and takes the last vector from a surviving peer (the
importance) or restarts its pages from E' (the interest). Neither that sweep nor the next one
(whose peers' values the new actor did not all hold yet) can stop the run, so the bound is
asked only of sweeps that started from one consistent vector, and the result is the same.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import Protocol

import numpy as np

from ranking.cluster.actors import SliceCluster, WorkersLost
from ranking.cluster.exchange import TIMES
from ranking.result import RankResult
from ranking.stepping import IterativeRanking, StopRule, checked

#: Seconds between two polls of the chaotic workers' residuals.
POLL_S = 0.05
#: Seconds between two polls of the synchronous workers' progress (the progress bar's).
SYNC_POLL_S = 0.5


class SweepMonitor(Protocol):
    """Told after every sweep (or chaotic poll) of a distributed ranking: for a progress bar."""

    def sweep_done(self, kind: str, sweep: int, figure_name: str, figure: float) -> None:
        """``kind`` reached ``sweep`` with ``figure`` (a bound, or the chaotic residual)."""


def _failed(run: object) -> bool:
    """Whether a worker's run ended with an error (its peers may be waiting for its values:
    the run is halted and the error read by :meth:`SliceCluster.wait`)."""
    if not run.done():
        return False
    try:
        run.result(timeout=1.0)
    except Exception:  # any error of the run: wait() reads it again
        return True
    return False


class _ClusterRanking(IterativeRanking):
    """What both distributed rankings share: the cluster, the bytes, the consistency flags."""

    def __init__(self, cluster: SliceCluster, monitor: SweepMonitor | None) -> None:
        super().__init__()
        self.cluster = cluster
        self.damping = cluster.damping
        self.snapshot = cluster.info.snapshot
        self.monitor = monitor
        self.consistent = False
        self._stale = 0
        self._at_init: dict[str, float] = {}
        self._started = 0.0
        self._lost = 0
        self.last_delta = float("inf")

    def init(self) -> None:
        super().init()
        self._at_init = self.cluster.counters()
        self._started = time.perf_counter()
        self.consistent = False
        self._stale = 0

    def _survived(self, lost: WorkersLost) -> None:
        """Replace the lost actors; neither the sweep that lost them nor the next one can
        stop the run (their change figures no longer describe one vector)."""
        self._lost += len(lost.indices)
        self.cluster.replace(lost.indices, self.restore)
        self._stale = 2
        self.consistent = False
        self.last_delta = float("inf")

    def run(self, stop: StopRule, *, strict: bool = False) -> RankResult:
        """As on one machine, except that a worker lost while the result is gathered (after
        the stop rule fired) took its slice of the vector with it: it is replaced and the
        sweeps go on until the rule fires again."""
        self.init()
        while True:
            while (fired := stop.check(self)) is None:
                self.step()
            try:
                return checked(self.result(fired), strict)
            except WorkersLost as lost:
                self._survived(lost)

    @abstractmethod
    def restore(self, index: int, lost: list[int]) -> None:
        """Give the new actor ``index`` its part of the ranking's state (``lost`` are all
        the actors replaced with it)."""

    def _tell(self, name: str, figure: float) -> None:
        if self.monitor is not None:
            self.monitor.sweep_done(self.kind, self.sweeps, name, figure)

    def _halt_survivors(self, epoch: int, lost: list[int], runs: list) -> None:
        """Stop the surviving chaotic loops and wait for them (a loop still sweeping would
        race the next sweep); a survivor lost meanwhile is replaced with the others."""
        for index, actor in enumerate(self.cluster.actors):
            if index in lost:
                continue
            try:
                self.cluster.wait([actor.halt(epoch)], indices=[index])
                self.cluster.wait([runs[index]], indices=[index])
            except WorkersLost:
                lost.append(index)

    def _unbarred(
        self, epoch: int, runs: list, status: str, factor: float, target: float | None
    ) -> tuple[list, float]:
        """Wait for the ``runs`` of ``epoch``, asking every actor's ``status`` (its sweeps
        and its last sweep's change) every ``POLL_S``; once ``factor`` times the sum of the
        changes, the residual, is at most ``target``, halt them (chaotic runs). With
        ``target`` None the runs stop by themselves (synchronous ones, which must all stop
        after the same sweep), and the status is asked every ``SYNC_POLL_S``, for the
        progress bar only. Returns the runs' results and the last residual; a lost worker
        halts the survivors and is raised."""
        residual = float("inf")
        try:
            while not all(run.done() for run in runs) and not any(map(_failed, runs)):
                statuses = self.cluster.call(status)
                residual = factor * sum(change for _, change in statuses)
                if self.monitor is not None:
                    sweeps = self.sweeps + max(count for count, _ in statuses)
                    self.monitor.sweep_done(self.kind, sweeps, "chaotic_residual", residual)
                if target is not None and residual <= target:
                    break
                self.cluster.wait_any(runs, POLL_S if target is not None else SYNC_POLL_S)
            self.cluster.call("halt", epoch)
            return self.cluster.wait(runs), residual
        except WorkersLost as lost:
            self._halt_survivors(epoch, lost.indices, runs)
            raise

    def details(self) -> dict[str, object]:
        """The run's figures, with where its time went: ``seconds`` holds the wall time and,
        per worker (the mean over the workers), the seconds sweeping its block, absorbing its
        peers' values, gathering and sending its own and waiting for its peers' (synchronous
        sweeps); the rest of the wall time is the coordinator's calls (the interest's checks)
        and a worker's idle time between them."""
        spent = {k: v - self._at_init.get(k, 0) for k, v in self.cluster.counters().items()}
        size = self.cluster.size
        seconds = {"wall": time.perf_counter() - self._started}
        seconds |= {name.removesuffix("_s"): spent[name] / size for name in TIMES}
        return {
            "workers": size,
            "slices": self.cluster.info.n_slices,
            "bytes_per_sweep": spent["bytes_sent"] / max(self.sweeps, 1),
            "local_sweeps": int(spent["local_sweeps"]),
            "workers_lost": self._lost,
            "seconds": {name: round(value, 3) for name, value in seconds.items()},
        }


class ClusterPageRank(_ClusterRanking):
    """Importance by sliced Gauss-Seidel on a Dask cluster, synchronous or chaotic (§5.4)."""

    kind = "importance"

    def __init__(
        self,
        cluster: SliceCluster,
        *,
        chaotic: bool = False,
        tol: float = 1e-8,
        max_sweeps: int = 1000,
        monitor: SweepMonitor | None = None,
    ) -> None:
        super().__init__(cluster, monitor)
        self.chaotic = chaotic
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.last_delta = float("inf")
        self.last_mass = 1.0

    def init(self) -> None:
        super().init()
        self.cluster.call("direct_init", None, None, True)
        self.last_delta = float("inf")

    def restore(self, index: int, lost: list[int]) -> None:
        """The last vector, as a surviving peer holds it (E if every worker was lost)."""
        survivors = [k for k in range(self.cluster.size) if k not in lost]
        copy = None
        if survivors:
            (copy,) = self.cluster.wait(
                [self.cluster.actors[survivors[0]].direct_copy()], indices=[survivors[0]]
            )
        self.cluster.wait([self.cluster.actors[index].direct_init(None, copy)], indices=[index])

    def step(self) -> None:
        if self.chaotic:
            self._chaotic_run()
            self._sync_run(1, extrapolate=False)
        else:
            self._sync_run(max(self.max_sweeps - self.sweeps, 1), extrapolate=True)

    def _sync_run(self, limit: int, extrapolate: bool) -> None:
        """Synchronous sweeps, the workers waiting for each other (:meth:`SliceWorker.
        run_sync`), until they meet the stop rule's bound or ``limit``; a sweep bounds the
        error if it started from one vector all workers held and none extrapolated after
        it, and the first ``_stale`` ones (after a loss) do not."""
        epoch = self.cluster.next_epoch()
        args = (epoch, limit, self._stale, self.tol, extrapolate)
        runs = [actor.run_sync(*args) for actor in self.cluster.actors]
        try:
            results, _ = self._unbarred(epoch, runs, "status", self._factor, None)
        except WorkersLost as lost:
            self._survived(lost)
            self.sweeps += 1
            self._stale = max(self._stale - 1, 0)
            self._tell("l1_error_bound", self.norm_delta())
            return
        for delta, mass, jumped in results[0]:
            self.sweeps += 1
            self.consistent = self._stale == 0 and not jumped
            self._stale = max(self._stale - 1, 0)
            self.last_delta, self.last_mass = delta, mass
            self._tell("l1_error_bound", self.norm_delta())

    def _chaotic_run(self) -> None:
        """Chaotic sweeps until the residual reaches the tolerance (or the sweeps guard)."""
        epoch = self.cluster.next_epoch()
        left = max(self.max_sweeps - self.sweeps - 1, 1)
        enough = self.tol / self._factor / self.cluster.size
        runs = [actor.run_chaotic(epoch, left, enough) for actor in self.cluster.actors]
        try:
            counts, _ = self._unbarred(epoch, runs, "status", self._factor, self.tol)
        except WorkersLost as lost:
            self._survived(lost)
            return
        self.sweeps += max(counts)

    @property
    def _factor(self) -> float:
        return self.damping / (1.0 - self.damping)

    def norm_delta(self) -> float:
        """c/(1 − c)·‖Δ‖₁ of the last synchronous sweep, if it started from one consistent
        vector (inf otherwise): the bound of :mod:`ranking.pagerank.direct`."""
        if not self.consistent:
            return float("inf")
        return self._factor * self.last_delta

    def relative_change(self) -> float:
        return self.last_delta / self.last_mass

    def vector(self) -> np.ndarray:
        return np.concatenate(self.cluster.call("direct_values"))

    def details(self) -> dict[str, object]:
        return {**super().details(), "mode": "chaotic" if self.chaotic else "synchronous"}
