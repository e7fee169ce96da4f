"""Power iteration on in-RAM scipy CSR matrices: the textbook methods, as references.

x⁽ᵗ⁺¹⁾ = c·(M·x⁽ᵗ⁾ + δ·E) + (1 − c)·E, the ``pagerank_scipy`` line of networkx (§5.1 eq. 5
of seed 002 with the dangling pages made explicit), or with M substochastic and δ = 0, the
eq. (1) of LiveRank (seed 001, §2.2). It keeps the whole matrix in memory (about 12 bytes a
link), so it is what the sliced Gauss-Seidel solver is benchmarked against, a second opinion
in the tests, and LiveRank's PageRank on its in-RAM snapshot. (Plain numpy and scipy: no
compiled kernel, so LiveRank does not load numba.) The interest's power method, with the
weights of its bound, is :mod:`ranking.pagerank.power_interest`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ranking.errors import InvalidGraph
from ranking.stepping import ContractingRanking


class PowerIteration(ContractingRanking):
    """PageRank x = c·(M·x + δ(x)·E) + (1 − c)·E by power iteration over a CSR matrix M.

    Parameters
    ----------
    matrix : scipy.sparse.csr_matrix
        M, N × N, non-negative, columns summing to at most 1 (M[j, i] = 1/OutDeg(i) for a
        link i → j).
    teleport : ndarray
        E ≥ 0, normalised here (the zap vector X of LiveRank).
    damping : float
        c in ]0, 1[.
    dangling : ndarray of bool, optional
        The pages whose rank is handed out by E (δ(x) = Σ of their values): the standard
        PageRank, ‖x‖₁ = 1. Without it their rank leaks away (M substochastic, LiveRank's
        eq. 1), and ‖x‖₁ < 1.
    start : ndarray, optional
        x⁽⁰⁾; E by default.

    Examples
    --------
    >>> from ranking.stepping import L1Bound
    >>> m = sp.csr_matrix(np.array([[0.0, 0.5], [1.0, 0.0]]))
    >>> p = PowerIteration(m, np.ones(2), 0.5)
    >>> np.round(p.run(L1Bound(1e-12)).values, 4).tolist()
    [0.3571, 0.4286]

    Notes
    -----
    The equation is eq. 5 of §5.1 of seed 002 (``../shared/seeds/002_a12aa06e521cba43.txt``)
    with dangling pages made explicit, or eq. (1) of §2.2 of seed 001 without ``dangling``.
    M + E·dᵀ (d the dangling indicator) is column-stochastic, or M substochastic without
    ``dangling``; either way a step maps the error e to c·(M + E·dᵀ)·e, whose ℓ₁ norm is at
    most c·‖e‖₁: ‖x⁽ᵗ⁾ − x*‖₁ ≤ c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁
    (:func:`~ranking.stepping.contraction_bound`).
    """

    kind = "importance"

    def __init__(
        self,
        matrix: sp.csr_matrix,
        teleport: np.ndarray,
        damping: float = 0.85,
        *,
        dangling: np.ndarray | None = None,
        start: np.ndarray | None = None,
    ) -> None:
        super().__init__()
        if not 0.0 < damping < 1.0:
            raise InvalidGraph(f"the damping factor must lie in ]0, 1[, not {damping}")
        n = matrix.shape[0]
        teleport = np.asarray(teleport, dtype=np.float64)
        if teleport.shape != (n,):
            raise InvalidGraph(f"the teleport vector has {teleport.size} entries for {n} pages")
        if not np.isfinite(teleport).all() or (teleport < 0).any() or teleport.sum() <= 0:
            raise InvalidGraph("the teleport vector must be non-negative with a positive sum")
        self.damping = damping
        self.matrix = matrix
        self.teleport = teleport / teleport.sum()
        self.dangling = dangling
        self.start = self.teleport if start is None else np.asarray(start, dtype=np.float64)
        self.x = self.start.copy()

    def init(self) -> None:
        super().init()
        self.x = self.start.copy()
        self.last_delta = float("inf")

    def step(self) -> None:
        share = 1.0 - self.damping
        if self.dangling is not None:
            share += self.damping * self.x[self.dangling].sum()
        new = self.damping * (self.matrix @ self.x)
        new += share * self.teleport
        self.last_delta = float(np.abs(new - self.x).sum())
        self.x = new
        self.sweeps += 1

    def vector(self) -> np.ndarray:
        return self.x


class PowerIterationPageRank(PowerIteration):
    """Direct PageRank by power iteration over the CSR matrix of ``src → dst`` held in RAM.

    Parameters
    ----------
    src, dst : ndarray
        The links src[e] → dst[e] (page ids 0…N−1; duplicates count with multiplicity).
    num_pages : int, optional
        N; the largest id + 1 by default.
    damping : float
        c in ]0, 1[.

    Examples
    --------
    >>> from ranking.stepping import L1Bound
    >>> p = PowerIterationPageRank(np.array([0, 1, 2]), np.array([1, 2, 0]))
    >>> np.round(p.run(L1Bound(1e-9)).values, 3).tolist()
    [0.333, 0.333, 0.333]

    Notes
    -----
    E uniform, dangling pages handed out by E: the bound of :class:`PowerIteration`.
    """

    def __init__(
        self, src: np.ndarray, dst: np.ndarray, num_pages: int | None = None, damping: float = 0.85
    ) -> None:
        n = (
            int(max(src.max(initial=-1), dst.max(initial=-1)) + 1)
            if num_pages is None
            else num_pages
        )
        outdeg = np.bincount(src, minlength=n).astype(np.float64)
        matrix = sp.csr_matrix((1.0 / outdeg[src], (dst, src)), shape=(n, n))
        super().__init__(matrix, np.ones(n), damping, dangling=outdeg == 0)
