"""A proven ℓ₁ error bound for the interest (eq. 6–7), and the weights it needs.

Notation: B = c·Mᵗ (Mᵗ[i, j] = 1/OutDeg(i) for j ∈ Out(i): its rows sum to 1, or 0 for a
page without links), f = (1 − c)·E', A = B + f·1ᵀ, and M = (Mᵗ)ᵀ the direct ranking's
matrix (its columns sum to at most 1). Eq. 6–7 is x = r·(B·x + f) with 1ᵀx = 1.

**Theorem.** Let x ≥ 0 with 1ᵀx = 1, r = 1/1ᵀ(B·x + f) (eq. 7), y = r·(B·x + f) (one step
of eq. 6–7 from x) and d = y − x. Let r̄ = r·max_{x_i > 0} x_i/y_i and s = c·r̄. If some ŵ
satisfies ŵ ≥ 1 + s·M·ŵ (elementwise), then eq. 6–7 has exactly one solution x* with
ρ(r*·B) < 1, it is the Perron vector of A, and::

    ‖x − x*‖₁ ≤ 2·ŵᵀ|d|        and, for y,    ‖y − x*‖₁ ≤ 2·ŵᵀ|d| + ‖d‖₁.

*Proof.* (0) ŵ ≥ 1 > 0 and s·M·ŵ ≤ ŵ − 1 < ŵ, so ρ(s·M) < 1 (Collatz–Wielandt), and
ρ(B) = c·ρ(M) (Mᵗ and M share their spectrum). (1) A·x = y/r ≥ x/r̄, so by the
Collatz–Wielandt inequality (A ≥ 0, x ≥ 0, x ≠ 0, A·x ≥ μ·x ⇒ ρ(A) ≥ μ, as A^k·x ≥ μ^k·x)
ρ(A) ≥ 1/r̄. The Perron vector of A, normalised, solves eq. 6–7 with r_P = 1/ρ(A) ≤ r̄, and
ρ(r_P·B) ≤ ρ(s·M) < 1. For ρ(r·B) < 1 the solution of x = r·(B·x + f) is
x_r = r·(I − r·B)⁻¹·f, and φ(r) = 1ᵀx_r = Σ_k r^{k+1}·1ᵀB^k·f rises strictly with r (its
k = 0 term is r·(1 − c)), so φ(r) = 1 at one such r only: x* = x_P and r* = r_P ≤ r̄.
(2) With e = x* − y + d = x* − x: x* − y = r*·B·x* + r*·f − r·B·x − r·f = r*·B·e + κ·y,
κ = r*/r − 1, so (I − r*·B)·e = d + κ·y and e = G·d + κ·G·y with G = (I − r*·B)⁻¹ =
Σ_k (r*·B)^k ≥ 0 (by (0) and (1)). Since 1ᵀe = 0, κ = −1ᵀG·d / 1ᵀG·y (y ≥ 0 and
1ᵀy = 1, so 1ᵀG·y ≥ 1), and ‖e‖₁ ≤ ‖G·d‖₁ + |κ|·1ᵀG·y = ‖G·d‖₁ + |1ᵀG·d| ≤ 2·1ᵀG·|d|
= 2·wᵀ|d|, where w = Gᵀ·1 = (I − c·r*·M)⁻¹·1.
(3) ŵ ≥ w: (I − c·r*·M)·(ŵ − w) = ŵ − c·r*·M·ŵ − 1 ≥ ŵ − s·M·ŵ − 1 ≥ 0 (M, ŵ ≥ 0 and
s ≥ c·r*), and (I − c·r*·M)⁻¹ = Σ_k (c·r*·M)^k ≥ 0 (by (0)). The bound for y follows by
the triangle inequality. ∎

**The weights.** For any ŵ > 0 whose h = ŵ − s·M·ŵ has min h > 0, ŵ/min h satisfies the
theorem's condition (its h is h/min h ≥ 1), and h is exact from one product with M. The
weights are made by Jacobi sweeps over the same slices, in the same scan as the interest,
each of which computes h for the vector it starts from. They iterate w ← 1 + ε·w + s·M·w
(ε = ``LIFT``), whose fixed point w_ε = (I − ε·I − s·M)⁻¹·1 has h = 1 + ε·w_ε: the pages
where w is large (many parents), where the residual is slowest to fall below the source,
get the slack ε·w_j. Plain sweeps (ε = 0) needed min h > 0 at every page, about 180 sweeps
on the 1M-page benchmark graph, twice what the interest needs; the slack costs a bound a
few per cent larger (w_ε is w at the damping s/(1 − ε), divided by 1 − ε). s is lowered to
c·r̄ as r̄ improves (a certificate for a larger s holds for a smaller one); they restart
from 1 when s + ε first falls below 1 (the first sweeps' r̄ is loose, and at s + ε ≥ 1 the
closed groups of pages grow without bound: on a 300k-page graph their oscillating modes then
kept min h ≤ 0 for 2,000 sweeps), and stop once 1/min h ≤ 1 + ``FREEZE``.

What it costs: w is large on pages with many parents (the error of a page reaches its
parents), so ŵᵀ|d| weighs the change where an error spreads most; on the benchmark graph the
bound was 3–19 times the true error along the power method's run (docs/ranking.md). When
no certificate has come while s + ε ≥ 1 (the weights' sweeps then have no proven
convergence, and diverge when ρ(s·M) ≥ 1: eq. 6–7 reaches a vector that is not the Perron
vector, e.g. XML pages without parents beside closed groups of HTML pages) there is no
bound yet, and the interest may stop on its relative change (its result says so).
"""

from __future__ import annotations

import numpy as np

from ranking.errors import NoErrorBound
from ranking.pagerank import kernels
from ranking.pagerank.slices import SlicedGraph, SliceView

#: ε of the weights' sweeps w ← 1 + ε·w + s·M·w (module docstring).
LIFT = 0.003
#: The weights stop once their certificate factor 1/min h is at most 1 + FREEZE.
FREEZE = 0.02
#: Weight sweeps (after their restart) without a certificate before the bound is given up:
#: a guard, so that a graph where it never comes still gets its interest (they came within
#: 80 on the benchmark graphs).
PATIENCE = 400


class BoundState:
    """r̄, the weights' damping s and their certificate: what the bound needs, for any solver.

    Examples
    --------
    >>> state = BoundState(0.85)
    >>> state.observe(1.1, 1.001)
    >>> round(state.weights_damping, 6)
    0.935935
    >>> state.certify(0.5)
    >>> state.bound(1e-9)
    4e-09
    """

    def __init__(self, damping: float) -> None:
        self.damping = damping
        self.reset()

    def reset(self) -> None:
        self.r_bar = np.inf
        self.factor = np.inf
        self.frozen = False
        self.contracting = False
        self.weight_sweeps = 0

    def restart_weights(self) -> bool:
        """True once, when s + ε first falls below 1: the weights restart from 1 then, so that
        what the early sweeps at s + ε ≥ 1 grew (closed groups of pages grow without bound
        there, and their oscillating modes would take hundreds of sweeps to decay) is gone."""
        if self.contracting or self.weights_damping + LIFT >= 1.0:
            return False
        self.contracting = True
        return True

    @property
    def weights_damping(self) -> float:
        """s = c·r̄ (inf before the first iterate)."""
        return self.damping * self.r_bar

    def checked(self, bound: float) -> float:
        """``bound``, unless no bound can be had: no certificate while s + ε ≥ 1, where the
        weights' sweeps need not converge, or after ``PATIENCE`` weight sweeps (raises
        :class:`NoErrorBound`)."""
        if not np.isfinite(self.factor):
            if self.weights_damping + LIFT >= 1.0:
                raise NoErrorBound(
                    f"no ℓ₁ bound on the interest: the weights' damping s = "
                    f"{self.weights_damping:.4g} leaves them no proven convergence"
                )
            if self.weight_sweeps >= PATIENCE:
                raise NoErrorBound(f"no certificate for the interest's bound in {PATIENCE} sweeps")
        return bound

    def observe(self, r: float, ratio: float) -> None:
        """Take the Collatz–Wielandt bound r̄ = r·ratio of an iterate (the best one holds)."""
        self.r_bar = min(self.r_bar, r * ratio)

    def certify(self, lowest: float) -> None:
        """The weights' vector has min h = ``lowest``."""
        self.weight_sweeps += self.contracting
        self.factor = 1.0 / lowest if lowest > 0 else np.inf
        self.frozen = bool(self.factor <= 1.0 + FREEZE)

    def bound(self, weighted: float) -> float:
        """2·ŵᵀ|d| = 2·Σ w_i·|d_i| / min h; inf without certificate."""
        return 2.0 * self.factor * weighted if np.isfinite(self.factor) else np.inf


class AdjointWeights:
    """The weights of the bound by Jacobi sweeps over the slices (module docstring).

    Two page-sized vectors stored like the direct vector (÷ OutDeg): ``certified`` is the
    one the last sweep started from, whose certificate :class:`BoundState` holds, ``next``
    the one it made. (Extrapolating them as the rankings are, measured: certified at sweep
    95 instead of 148 on the 1M-page graph, but never in 2,000 sweeps on a 300k-page one,
    whose oscillating modes it amplified.)
    """

    def __init__(self, graph: SlicedGraph, state: BoundState) -> None:
        self.graph = graph
        self.state = state
        self.certified = graph.vector("interest-weights")
        self.next = graph.vector("interest-weights-next")
        self.damping = 1.0
        self.sweeping = False
        self._lowest = np.inf

    def init(self) -> None:
        self.certified[:] = 1.0
        kernels.scale(self.certified, self.graph.outdeg, self.certified)
        self.sweeping = False

    def begin_sweep(self) -> None:
        """Sweep once r̄ is known, until the certificate is final."""
        self.damping = self.state.weights_damping
        self.sweeping = bool(np.isfinite(self.damping)) and not self.state.frozen
        if self.state.restart_weights():
            self.init()
            self.sweeping = True
        self._lowest = np.inf

    def visit(self, view: SliceView) -> None:
        """This sweep's step over one slice, as a pass of its own (the interest's Jacobi
        sweeps); the Gauss-Seidel sweeps make it in their own pass (:meth:`step_of`)."""
        if self.sweeping:
            lowest = kernels.weights_jacobi_slice(
                view.indptr,
                view.sources,
                view.lo,
                self.certified,
                self.graph.outdeg,
                self.damping,
                LIFT,
                self.next[view.lo : view.hi],
            )
            self.record(lowest)

    def step_of(self, view: SliceView) -> tuple[np.ndarray, float, np.ndarray]:
        """(the certified vector, s, where the slice's next weights go) for a kernel that
        makes this sweep's step in its own pass over the slice; s is 0 when not sweeping.
        Give the slice's min h back to :meth:`record`."""
        damping = self.damping if self.sweeping else 0.0
        return self.certified, damping, self.next[view.lo : view.hi]

    def record(self, lowest: float) -> None:
        """A slice's min h, from a pass that made the step (:meth:`step_of`)."""
        self._lowest = min(self._lowest, lowest)

    def end_sweep(self) -> None:
        """Certify the vector the sweep started from."""
        if self.sweeping:
            self.state.certify(self._lowest)

    def advance(self) -> None:
        """After the bound was taken with ``certified``: the next sweep starts from ``next``
        (unless the certificate is final: then ``certified`` stays what it certifies)."""
        if self.sweeping and not self.state.frozen:
            self.certified, self.next = self.next, self.certified
