"""Rankings advanced slice by slice, and the combined scan that serves several at once.

A :class:`SlicedRanking` is an :class:`~ranking.stepping.IterativeRanking` whose sweep is
one scan of the slices: ``begin_sweep``, ``visit`` each slice, ``end_sweep``. Because the
per-slice work is a method of (slice, vectors), one scan can advance several rankings (§5.3,
"combined computation of multiple ranking"): :class:`CombinedScan` reads each slice once for
all rankings still running, and keeps scanning until every one has met its own stop rule.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import Protocol

from ranking.errors import RankingCancelled
from ranking.pagerank.slices import SlicedGraph, SliceView
from ranking.result import RankResult
from ranking.stepping import IterativeRanking, StopRule


class ScanMonitor(Protocol):
    """Told after every slice where a scan is: for a progress bar or a log."""

    def slice_done(self, sweep: int, index: int, n_slices: int, figures: dict[str, float]) -> None:
        """``sweep`` (1-based) just finished slice ``index``; ``figures`` maps each running
        ranking's kind to its last error figure (inf before the first sweep ends)."""


class SlicedRanking(IterativeRanking):
    """A ranking vector over a :class:`SlicedGraph`, updated one slice at a time."""

    def __init__(
        self,
        graph: SlicedGraph,
        damping: float,
        *,
        monitor: ScanMonitor | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__()
        if not 0 < damping < 1:
            raise ValueError(f"the damping factor must lie in ]0, 1[, not {damping}")
        self.graph = graph
        self.damping = damping
        self.snapshot = graph.snapshot
        self.monitor = monitor
        self.cancel = cancel

    @abstractmethod
    def begin_sweep(self) -> None:
        """Prepare a sweep."""

    @abstractmethod
    def visit(self, view: SliceView) -> None:
        """Do this sweep's work on one slice."""

    @abstractmethod
    def end_sweep(self) -> None:
        """Finish the sweep: figures, normalisation; increments ``sweeps``."""

    def step(self) -> None:
        scan(self.graph, [self], monitor=self.monitor, cancel=self.cancel)


def _last_figure(ranking: IterativeRanking) -> float:
    return ranking.figure()[1] if ranking.sweeps else float("inf")


def scan(
    graph: SlicedGraph,
    rankings: Sequence[SlicedRanking],
    *,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
) -> None:
    """One sweep of every ranking in ``rankings`` over a single read of the slices."""
    figures = {ranking.kind: _last_figure(ranking) for ranking in rankings}
    sweep = 1 + max(ranking.sweeps for ranking in rankings)
    for ranking in rankings:
        ranking.begin_sweep()
    for view in graph.slices():
        if cancel is not None and cancel.is_set():
            raise RankingCancelled(f"cancelled in sweep {sweep}, slice {view.index}")
        for ranking in rankings:
            ranking.visit(view)
        if monitor is not None:
            monitor.slice_done(sweep, view.index, graph.n_slices, figures)
    for ranking in rankings:
        ranking.end_sweep()


class CombinedScan:
    """Advance several rankings of one graph with one scan per sweep, each to its own stop.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from ranking.pagerank import DirectPageRank, InversePageRank, SlicedGraph, xml_teleport
    >>> from ranking.stepping import L1Bound, MaxSweeps, RelativeChange
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 1, 2]), np.array([1, 2, 0, 0]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> both = CombinedScan([
    ...     (DirectPageRank(g), L1Bound(1e-10) | MaxSweeps(100)),
    ...     (InversePageRank(g, xml_teleport(np.array([True, False, False]))),
    ...      RelativeChange(1e-10) | MaxSweeps(100)),
    ... ])
    >>> [round(float(r.values.sum()), 6) for r in both.run()]
    [1.0, 1.0]
    """

    def __init__(
        self,
        members: Sequence[tuple[SlicedRanking, StopRule]],
        *,
        monitor: ScanMonitor | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        graphs = {id(ranking.graph) for ranking, _ in members}
        if len(graphs) != 1:
            raise ValueError("a combined scan needs rankings of one and the same graph")
        self.members = list(members)
        self.graph = members[0][0].graph
        self.monitor = monitor
        self.cancel = cancel
        self.scans = 0

    def run(self) -> list[RankResult]:
        """Scan until every ranking has stopped; results in the order of ``members``."""
        results: dict[int, RankResult] = {}
        for ranking, _ in self.members:
            ranking.init()
        while len(results) < len(self.members):
            running = [r for i, (r, _) in enumerate(self.members) if i not in results]
            scan(self.graph, running, monitor=self.monitor, cancel=self.cancel)
            self.scans += 1
            for i, (ranking, stop) in enumerate(self.members):
                if i not in results and (fired := stop.check(ranking)) is not None:
                    results[i] = ranking.result(fired)
        return [results[i] for i in range(len(self.members))]
