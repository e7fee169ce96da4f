"""The interest by eq. 6–7 literally (the power method) over CSR matrices held in RAM.

The in-RAM peer of the sliced :class:`~ranking.pagerank.inverse.InversePageRank` (seed 002,
§5.2), to the same proven bound (:mod:`ranking.pagerank.inverse_bound`): what the benchmark
compares xyleme's interest with, and the tests' second opinion.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ranking.pagerank import kernels
from ranking.pagerank.inverse_bound import LIFT, BoundState
from ranking.stepping import IterativeRanking


class PowerIterationInterest(IterativeRanking):
    """The interest by eq. 6–7 literally (the power method) over CSR matrices held in RAM.

    The in-RAM peer of :class:`~ranking.pagerank.inverse.InversePageRank`, to the same proven bound
    (:mod:`ranking.pagerank.inverse_bound`): each step x ← r·(c·Mᵗ·x + (1 − c)·E') also makes a
    Jacobi step of the bound's weights w ← 1 + ε·w + s·M·w; ``norm_delta`` is then
    2·ŵᵀ|d| + ‖d‖₁ for the new x (d the step), inf until the weights are certified.

    Parameters
    ----------
    src, dst : ndarray
        The links src[e] → dst[e] (duplicates count with multiplicity).
    teleport : ndarray
        E' (normalised here), e.g. ``xml_teleport(is_xml)``.
    damping : float
        c in ]0, 1[.

    Examples
    --------
    >>> from ranking.stepping import BoundElseChange
    >>> p = PowerIterationInterest(np.array([0, 1, 1]), np.array([1, 2, 0]),
    ...                            np.array([0.0, 0.0, 1.0]))
    >>> res = p.run(BoundElseChange(1e-12))
    >>> res.figure_name, np.round(res.values, 4).tolist()
    ('l1_error_bound', [0.4273, 0.3676, 0.2051])
    """

    kind = "interest"

    def __init__(
        self, src: np.ndarray, dst: np.ndarray, teleport: np.ndarray, damping: float = 0.85
    ) -> None:
        super().__init__()
        n = len(teleport)
        self.damping = damping
        self.outdeg = np.bincount(src, minlength=n).astype(np.int32)
        self.teleport = np.asarray(teleport, dtype=np.float64) / np.sum(teleport)
        ones = np.ones(len(src))
        self.children = sp.csr_matrix((ones, (src, dst)), shape=(n, n))  # [i, j]: i → j
        linked = np.maximum(self.outdeg, 1)
        self.direct = sp.csr_matrix((1.0 / linked[src], (dst, src)), shape=(n, n))  # M
        self.state = BoundState(damping)
        self.last_delta = self.last_bound = float("inf")
        self.r = 1.0
        self.x = self.teleport.copy()
        self.w = np.ones(n)

    def init(self) -> None:
        super().init()
        self.state.reset()
        self.x = self.teleport.copy()
        self.w = np.ones(len(self.x))

    def step(self) -> None:
        if self.state.restart_weights():
            self.w = np.ones(len(self.x))
        s, weights, new_w = self.state.weights_damping, self.w, None
        if np.isfinite(s) and not self.state.frozen:
            flow = s * (self.direct @ weights)
            new_w = 1.0 + LIFT * weights + flow
            self.state.certify(float((weights - flow).min()))  # certifies ``weights``
        self.last_delta, total, weighted, ratio = kernels.inverse_finish_sweep(
            self.children @ self.x,
            self.outdeg,
            self.teleport,
            self.damping,
            self.x,
            weights / np.maximum(self.outdeg, 1),
        )
        self.state.observe(1.0 / total, ratio)
        self.last_bound = self.state.bound(weighted) + self.last_delta
        self.r = 1.0 / total
        if new_w is not None and not self.state.frozen:
            self.w = new_w
        self.sweeps += 1

    def norm_delta(self) -> float:
        return self.state.checked(self.last_bound)

    def relative_change(self) -> float:
        return self.last_delta

    def vector(self) -> np.ndarray:
        return self.x
