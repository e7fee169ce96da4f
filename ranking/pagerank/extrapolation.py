"""Power extrapolation with a measured decay: removes a ranking's slowest error mode.

Gauss-Seidel sweeps shrink the error of a web graph's rankings unevenly: a few slow modes
(groups of pages whose links stay among themselves, see docs/ranking.md) are left once the
rest has gone. If the iterate saved at sweep s is x_s = x* + e and the one at t = s + span is
x_t = x* + d·e, then (x_t − d·x_s)/(1 − d) = x*. The decay d is measured, as the ratio of the
ℓ₁ changes of sweeps t and s (both ≈ (1 − λ)·λ^k·‖e‖₁ for a mode of rate λ), not assumed
(Kamvar et al. assume λ = c for the direct ranking, which Gauss-Seidel does not obey). A span
of several sweeps lets the fast modes die between the two iterates, so the extrapolation
does not amplify them (with one sweep between, a fast mode would be multiplied by about
λ/(1 − λ)). Every vector the sweeps keep linear in the iterate is extrapolated alike.

References
----------
Kamvar, Haveliwala, Manning, Golub: Extrapolation methods for accelerating PageRank
computations, WWW 2003 (power extrapolation, §5).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ranking.pagerank import kernels

#: Sweeps between the saved iterate and the extrapolation (6 was fastest of 4–15 on the
#: 1M-page benchmark graph, 15 the first span that never amplifies a mode, docs/ranking.md).
SPAN = 6
#: The first sweep whose iterate is saved (the first sweeps move every page a lot).
START = 5
#: No extrapolation when the error shrank less than this over the span (nothing to gain, and
#: 1/(1 − d) would amplify the noise).
MAX_DECAY = 0.95


class PowerExtrapolation:
    """Saves the iterate every other ``SPAN`` sweeps and extrapolates ``SPAN`` sweeps later.

    Parameters
    ----------
    pairs : sequence of (current, saved) arrays
        Each vector the sweeps update, with a page-sized array to save it into (both may be
        memory-mapped: the kernels allocate nothing N-sized).

    Examples
    --------
    >>> x, saved = np.array([1.0]), np.empty(1)
    >>> steps = PowerExtrapolation([(x, saved)])
    >>> steps.after_sweep(5, 0.5)  # saved: x* + e = 1
    False
    >>> x[0] = 0.25  # six sweeps later, x* + e/4 with a change four times smaller
    >>> steps.after_sweep(11, 0.125), x.tolist()
    (True, [0.0])
    """

    def __init__(self, pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        self.pairs = list(pairs)
        self.saved_at: int | None = None
        self.saved_delta = 0.0
        self.count = 0

    def reset(self) -> None:
        self.saved_at = None
        self.count = 0

    def after_sweep(self, sweeps: int, delta: float) -> bool:
        """Called after sweep number ``sweeps``, whose ℓ₁ change was ``delta``; True when it
        has just extrapolated the vectors (their derived figures are then to recompute)."""
        if self.saved_at is not None and sweeps == self.saved_at + SPAN:
            self.saved_at = None
            decay = delta / self.saved_delta if self.saved_delta > 0 else 1.0
            if decay < MAX_DECAY:
                for current, saved in self.pairs:
                    kernels.extrapolate(current, saved, decay)
                self.count += 1
                return True
        elif self.saved_at is None and sweeps >= START:
            for current, saved in self.pairs:
                saved[:] = current
            self.saved_at, self.saved_delta = sweeps, delta
        return False
