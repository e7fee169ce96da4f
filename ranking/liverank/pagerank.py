"""The PageRank of LiveRank's eq. (1): the static ordering P and the adaptive P_a, P_a^{+/-}.

Y = d·Y·A + (1 − d)·X (seed 001, §2.2) with A the out-degree-normalised adjacency of the old
snapshot, whose pages without links have a zero row: A is substochastic and their share of
the walk leaks away. It is the power iteration of :mod:`ranking.pagerank.power` without
dangling redistribution, stopped by the same contraction bound (:mod:`ranking.stepping`).
"""

from __future__ import annotations

import numpy as np

from ranking.errors import InvalidGraph
from ranking.liverank.graph import LinkGraph
from ranking.pagerank.power import PowerIteration
from ranking.stepping import L1Bound, MaxSweeps

DAMPING = 0.85
"""The damping factor d of eq. (1); §2.3 uses the usual 0.85 for web graphs."""


class LivePageRank(PowerIteration):
    """Eq. (1) of §2.2 on a :class:`LinkGraph`: ``PowerIteration`` over Aᵀ, no dangling term.

    Starts from (1 − d)·X, the first term of the series Σ_k (1 − d)·d^k·X·A^k.

    Notes
    -----
    A is substochastic, so a step contracts the ℓ₁ error by d and
    ‖Y − Y_k‖₁ ≤ d/(1 − d)·‖Y_k − Y_{k−1}‖₁ is a true bound. About
    log(tolerance·(1 − d)/d)/log(d) iterations are needed: 150 for 1e-10 at d = 0.85.
    """

    kind = "liverank"

    def __init__(self, graph: LinkGraph, zap: np.ndarray, damping: float = DAMPING) -> None:
        zap = np.asarray(zap, dtype=np.float64)
        if zap.shape != (graph.n_pages,):
            raise InvalidGraph(f"the zap vector has {zap.size} entries for {graph.n_pages} pages")
        if (zap < 0).any() or zap.sum() <= 0:
            raise InvalidGraph("the zap vector must be non-negative with a positive sum")
        if not 0.0 < damping < 1.0:
            raise InvalidGraph(f"the damping factor must lie in (0, 1), not {damping}")
        super().__init__(
            graph.walk_transpose, zap, damping, start=(1.0 - damping) * zap / zap.sum()
        )


def personalised_pagerank(
    graph: LinkGraph,
    zap: np.ndarray | None = None,
    *,
    damping: float = DAMPING,
    tolerance: float = 1e-10,
    max_iterations: int = 1000,
) -> np.ndarray:
    """Solve Y = d·Y·A + (1 − d)·X (eq. 1, §2.2) by the power (Jacobi) method.

    Parameters
    ----------
    graph : LinkGraph
        The snapshot; A is its out-degree-normalised adjacency (zero rows for pages without
        links, so A is substochastic and the mass they hold leaks away).
    zap : numpy.ndarray, optional
        The zap vector X ≥ 0 (normalised here to sum 1). Default: uniform on all pages (the
        static LiveRank P of §2.3). P_a uses the uniform vector on the live sampled pages.
    damping : float
        The damping factor d, 0 < d < 1.
    tolerance : float
        Stop when the ℓ1 error bound d/(1 − d)·‖Y_k − Y_{k−1}‖₁ is at most it.
    max_iterations : int
        Give up after this many iterations.

    Returns
    -------
    numpy.ndarray
        Y, float64, one entry per page; its sum is at most 1.

    Raises
    ------
    NotConverged
        When the bound is still above ``tolerance`` after ``max_iterations``.
    InvalidGraph
        When the zap vector has the wrong length, a negative entry, or sums to zero.

    Examples
    --------
    >>> g = LinkGraph.from_edges([0, 1, 2], [1, 2, 0])
    >>> np.round(personalised_pagerank(g), 4)
    array([0.3333, 0.3333, 0.3333])

    Notes
    -----
    The bound of :class:`LivePageRank`.

    References
    ----------
    .. [1] T. D. Huynh, F. Mathieu, L. Viennot. LiveRank: How to Refresh Old Datasets.
       Internet Mathematics, 2015, §2.2.
    .. [2] L. Page, S. Brin, R. Motwani, T. Winograd. The PageRank Citation Ranking:
       Bringing Order to the Web. Stanford InfoLab, 1999.
    """
    if graph.n_pages == 0:
        return np.zeros(0)
    if zap is None:
        zap = np.ones(graph.n_pages)
    ranking = LivePageRank(graph, zap, damping)
    return ranking.run(L1Bound(tolerance) | MaxSweeps(max_iterations), strict=True).values
