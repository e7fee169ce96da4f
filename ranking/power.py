"""Power iteration on an in-RAM scipy CSR matrix: the textbook method, as a reference.

x⁽ᵗ⁺¹⁾ = c·(M·x⁽ᵗ⁾ + δ·E) + (1 − c)·E, the ``pagerank_scipy`` line of networkx. It keeps
the whole matrix in memory (about 12 bytes a link), so it is what the sliced Gauss-Seidel
solver is benchmarked against, and a second opinion in the tests.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ranking.iterative import IterativeRanking


class PowerIterationPageRank(IterativeRanking):
    """Direct PageRank by power iteration over a CSR matrix held in RAM.

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
    >>> from ranking.stopping import L1Bound
    >>> p = PowerIterationPageRank(np.array([0, 1, 2]), np.array([1, 2, 0]))
    >>> np.round(p.run(L1Bound(1e-9)).values, 3).tolist()
    [0.333, 0.333, 0.333]

    Notes
    -----
    ‖x⁽ᵗ⁾ − x*‖₁ ≤ c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁, as each step contracts by c.
    """

    kind = "importance"

    def __init__(
        self, src: np.ndarray, dst: np.ndarray, num_pages: int | None = None, damping: float = 0.85
    ) -> None:
        super().__init__()
        n = (
            int(max(src.max(initial=-1), dst.max(initial=-1)) + 1)
            if num_pages is None
            else num_pages
        )
        self.damping = damping
        outdeg = np.bincount(src, minlength=n).astype(np.float64)
        self.dangling = outdeg == 0
        weights = 1.0 / outdeg[src]
        self.matrix = sp.csr_matrix((weights, (dst, src)), shape=(n, n))
        self.n = n
        self.x = np.full(n, 1.0 / n)
        self.last_delta = float("inf")

    def init(self) -> None:
        super().init()
        self.x = np.full(self.n, 1.0 / self.n)

    def step(self) -> None:
        dangling_mass = self.x[self.dangling].sum()
        new = self.damping * (self.matrix @ self.x) + (
            (self.damping * dangling_mass + 1.0 - self.damping) / self.n
        )
        self.last_delta = float(np.abs(new - self.x).sum())
        self.x = new
        self.sweeps += 1

    def norm_delta(self) -> float:
        return self.damping / (1.0 - self.damping) * self.last_delta

    def vector(self) -> np.ndarray:
        return self.x
