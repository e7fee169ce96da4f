"""Inverse PageRank (interest of HTML pages, biased to XML) by sliced Gauss-Seidel (§5.2).

The equation, with Mᵗ[i, j] = 1/OutDeg(i) for j ∈ Out(i) as §5.2 writes it::

    x = r·(c·Mᵗ·x + (1 − c)·E'),     r = 1/‖c·Mᵗ·x + (1 − c)·E'‖₁   (eq. 6–7, ‖x‖₁ = 1)

so a page's interest is r times the damped *average* of its children's interest plus its
own share of E': the XML that a forward random walk from the page reaches, discounted by c
per link. E' is uniform on XML pages and 0 elsewhere (PR'); the variant PR'' takes
E' = the importance of XML pages, normalised (``importance_teleport``). A page without
links keeps only its E' share.

Because 1ᵀx = 1, (1 − c)·E' = (1 − c)·E'·1ᵀx, and the fixed point is the Perron vector of
c·Mᵗ + (1 − c)·E'·1ᵀ, with r the inverse of its spectral radius; the paper's iteration,
eq. 6–7 from x = E', is the power method on that matrix. r is *not* a normalisation of
the result only: x = r·(1 − c)·(I − c·r·Mᵗ)⁻¹·E', a linear system of damping c·r (≈ 0.96
on the benchmark graph, r ≈ 1.13), with r fixed by ‖x‖₁ = 1. So the power method converges
at c·r per sweep: every closed cycle of pages gives the matrix an eigenvalue c·ω (ω a root
of unity), against the Perron root 1/r just above c.

Gauss-Seidel on the eigen-equation. A sweep visits the pages in order and sets each
x_j = r·(c·Σ_{k∈Out(j)} x_k/OutDeg(j) + (1 − c)·E'_j) from the *newest* interest of its
children, its own equation solved exactly for self-links; r stays fixed during the sweep.
The sweep ends by normalising x to ‖x‖₁ = 1 and taking r of eq. 7 for the normalised x.
The fixed points are the same: x* with r* is left unchanged by a sweep, and where the
sweeps converge, their limit satisfies every page's equation with the limit of r, which is
eq. 7's r for it (the first sweep takes r = 1). The children sums
are kept current in an N-vector: a page's change is pushed, while its slice is read, to
the sums of its parents, the sources of its in-links in the slice. So the inverse reads
the same slices as the direct ranking, in the same scan
(:class:`~ranking.pagerank.sliced.CombinedScan`), with one random access per link, as a Jacobi
sweep. It starts from x = 0 (children sums 0, a consistent state without a scan); the
pages it reaches are those eq. 6–7 reaches from E'. On the 1M-page benchmark graph it
stops after 134 sweeps where the Jacobi sweeps of eq. 6–7 needed 307, and after 73 with
the extrapolation below (docs/ranking.md).

Gauss-Seidel on an eigen-equation has no convergence proof (r enters every update, so an
error in r grows along chains within a sweep; on small sparse graphs it can oscillate), so
it must keep pace: every ``PROGRESS_WINDOW`` sweeps its smallest relative change must shrink
by (c·r)^window, Jacobi's own pace, else the interest goes on by the Jacobi sweeps of
eq. 6–7, the power method, which always converges. In the first sweeps the pace is judged
only while c·r < 1: while the estimate of r is above its limit no method contracts.
Measured and rejected: Gauss-Seidel reading a page's self-links at their old value (twice
the sweeps) and over-relaxation (it diverges from ω = 1.2, even with r held at its limit).

Extrapolation. The spectrum of c·Mᵗ + (1 − c)·E'·1ᵀ on the benchmark graph (docs/ranking.md)
is the Perron root 1/r ≈ 0.882, then a cluster of modulus c = 0.85 (c, −c, c·e^{±2πi/3}: the
closed and nearly closed groups of pages, hosts whose links stay inside), so Jacobi shrinks
the error by c·r ≈ 0.963 a sweep and Gauss-Seidel by about (c·r)² ≈ 0.93, the error staying
in a few slow modes. So every few sweeps the interest is extrapolated from two iterates
(:mod:`ranking.pagerank.extrapolation`: x_s saved at sweep s and x_t six sweeps later give
(x_t − d·x_s)/(1 − d), d the measured decay of the slow mode between them). The children
sums are linear in x and are extrapolated alike, so they stay exact without a scan; the
extrapolated vector is normalised and r recomputed as after any sweep. The fixed point is
unchanged (x_s = x_t = x* leaves it in place). It nearly halves the sweeps (134 → 73 on the
1M-page benchmark graph).

The stop rule is a proven ℓ₁ error bound (:mod:`ranking.pagerank.inverse_bound`): no contraction
argument like the direct ranking's holds (the columns of c·Mᵗ sum to c·Σ_{i→j} 1/OutDeg(i),
which can exceed 1, and r changes every sweep), so the bound is residual-based: after each
sweep the eq. 6–7 step d = y − x of the normalised x is read from the children sums, and
‖x − x*‖₁ ≤ 2·ŵᵀ|d| with weights ŵ certified by Jacobi sweeps in the same scan. The relative
ℓ₁ change of a sweep, the previous rule, measures progress, not the distance to the fixed
point: when it reached 1e-8 on the 1M-page benchmark graph, the error was about 1.1e-7.
"""

from __future__ import annotations

import threading

import numpy as np

from ranking.errors import InvalidGraph
from ranking.pagerank import kernels
from ranking.pagerank.direct import copy_distribution
from ranking.pagerank.extrapolation import PowerExtrapolation
from ranking.pagerank.inverse_bound import LIFT, AdjointWeights, BoundState
from ranking.pagerank.sliced import ScanMonitor, SlicedRanking
from ranking.pagerank.slices import SlicedGraph, SliceView

#: Gauss-Seidel must shrink its smallest relative change by (c·r)^WINDOW every WINDOW sweeps
#: once c·r < 1 (as fast as Jacobi), else the interest goes on by Jacobi sweeps of eq. 6–7
#: (the power method, which always converges).
PROGRESS_WINDOW = 10
#: The pace asked of Gauss-Seidel while c·r ≥ 1 after ``SETTLING_SWEEPS`` (an r that does not
#: settle), and of the distributed interest's chaotic runs (:mod:`ranking.cluster.interest`).
SLOWEST_RATE = 0.95
#: The first sweeps, in which the pace is judged only while c·r < 1 (r settling from above).
SETTLING_SWEEPS = 3 * PROGRESS_WINDOW


def xml_mask(is_xml: np.ndarray) -> np.ndarray:
    """The XML pages as a boolean mask: E' of PR' up to its normalisation, which
    :class:`InversePageRank` does while copying it (so no page-sized float array is made).

    Examples
    --------
    >>> xml_mask([1, 0, 1]).tolist()
    [True, False, True]
    """
    is_xml = np.asarray(is_xml, dtype=bool)
    if not is_xml.any():
        raise InvalidGraph("no XML page: the interest (biased to XML) is undefined")
    return is_xml


def xml_teleport(is_xml: np.ndarray) -> np.ndarray:
    """E' of PR': 1/N_XML on XML pages, 0 elsewhere.

    Examples
    --------
    >>> xml_teleport(np.array([True, False, True])).tolist()
    [0.5, 0.0, 0.5]
    """
    is_xml = xml_mask(is_xml)
    return is_xml / int(is_xml.sum())


def importance_teleport(importance: np.ndarray, is_xml: np.ndarray) -> np.ndarray:
    """E' of PR'': the importance of XML pages, 0 elsewhere, normalised to ℓ₁ norm 1.

    Examples
    --------
    >>> importance_teleport(np.array([0.2, 0.5, 0.3]), np.array([True, False, True])).tolist()
    [0.4, 0.0, 0.6]
    """
    masked = np.where(np.asarray(is_xml, dtype=bool), importance, 0.0)
    total = masked.sum()
    if total <= 0:
        raise InvalidGraph("no XML page has importance: PR'' is undefined")
    return masked / total


def inverse_slice_sweep(
    view: SliceView,
    interest: np.ndarray,
    children_sum: np.ndarray,
    outdeg: np.ndarray,
    self_linked: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    r: float,
    *,
    weights: tuple[np.ndarray, float, np.ndarray] | None = None,
) -> tuple[float, float]:
    """The interest's Gauss-Seidel pass over one slice, in place: the unit of work of a sweep.

    Sets x_j = r·(c·children_sum[j]/OutDeg(j) + (1 − c)·E'_j) for the slice's pages j, each
    from the newest interest of its children, and pushes each change to the children sums of
    j's parents (the sources of its in-links in the slice), so they stay exact. ``self_linked``
    flags the pages with self-links (:func:`~ranking.pagerank.kernels.mark_self_links`).
    r stays fixed over a sweep (module docstring). ``weights`` = (ŵ, s, out) also makes the
    Jacobi step of the bound's weights in the same pass (:meth:`AdjointWeights.step_of`).
    Returns (Σ |change| over the slice, min h of the weights over it, inf without them).
    """
    certified, weights_damping, weights_out = weights or (interest, 0.0, interest[:0])
    return kernels.inverse_gauss_seidel_slice(
        view.indptr,
        view.sources,
        view.lo,
        outdeg,
        self_linked,
        teleport,
        damping,
        r,
        interest,
        children_sum,
        certified,
        weights_damping,
        LIFT,
        weights_out,
    )


class InversePageRank(SlicedRanking):
    """Interest: PageRank on the inverse link graph, biased to XML by E' (§5.2).

    Parameters
    ----------
    graph : SlicedGraph
        The sliced link matrix (the same slices as the direct ranking).
    teleport : ndarray
        E', non-negative, one value per page (normalised here): :func:`xml_teleport` (or
        :func:`xml_mask`) for PR', :func:`importance_teleport` for PR''. The sweeps start
        from 0 and reach the fixed point of the paper's PR(M_Out, E', E'), which starts
        from E'.
    damping : float
        c in ]0, 1[.
    extrapolate : bool
        Remove the slowest error mode every few sweeps (:mod:`ranking.pagerank.extrapolation`);
        False to measure what it buys.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from ranking.stepping import BoundElseChange, MaxSweeps
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 1]), np.array([1, 2, 0]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> r = InversePageRank(g, xml_teleport(np.array([False, False, True])))
    >>> res = r.run(BoundElseChange(1e-12) | MaxSweeps(500))
    >>> res.figure_name, np.round(res.values, 4).tolist()
    ('l1_error_bound', [0.4273, 0.3676, 0.2051])

    Notes
    -----
    Gauss-Seidel sweeps on the eigen-equation, r fixed within a sweep (module docstring).
    Stop with ``BoundElseChange(tol)``: :meth:`norm_delta` is the proven bound of
    :mod:`ranking.pagerank.inverse_bound` (inf until its weights are certified), and raises
    :class:`NoErrorBound` where none exists. ``details()["normalisation_r"]`` is the last r
    of eq. 7.

    References
    ----------
    Mignet et al.: Acquisition of XML data in Xyleme, §5.2 (PR', PR''), §5.3
    (``../shared/seeds/002_a12aa06e521cba43.txt``).
    """

    kind = "interest"

    def __init__(
        self,
        graph: SlicedGraph,
        teleport: np.ndarray,
        damping: float = 0.85,
        *,
        variant: str = "PR'",
        extrapolate: bool = True,
        monitor: ScanMonitor | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__(graph, damping, monitor=monitor, cancel=cancel)
        self.teleport = graph.vector("teleport-inverse")
        copy_distribution(teleport, self.teleport, "teleport vector E'")
        self.variant = variant
        self.interest = graph.vector(self.kind)
        self.children_sum = graph.vector("interest-children-sum")
        self.self_linked = graph.vector("self-linked", dtype=np.uint8)
        self.extrapolation = (
            PowerExtrapolation(
                [
                    (self.interest, graph.vector("interest-saved")),
                    (self.children_sum, graph.vector("interest-children-sum-saved")),
                ]
            )
            if extrapolate
            else None
        )
        self.bound_state = BoundState(damping)
        self.weights = AdjointWeights(graph, self.bound_state)
        self.last_delta = float("inf")
        self.last_bound = float("inf")
        self.r = 1.0
        self._moved = 0.0
        self.jacobi_from: int | None = None
        self._smallest: list[float] = []

    def init(self) -> None:
        """Start from x = 0, whose children sums are 0 (consistent without a scan); mark the
        pages with self-links (a sequential read of the slices)."""
        super().init()
        self.interest[:] = 0.0
        self.children_sum[:] = 0.0
        for view in self.graph.slices():
            kernels.mark_self_links(view.indptr, view.sources, view.lo, self.self_linked)
        self.last_delta = float("inf")
        self.last_bound = float("inf")
        self.bound_state.reset()
        self.weights.init()
        self.r = 1.0
        self.jacobi_from = None
        self._smallest = []
        if self.extrapolation is not None:
            self.extrapolation.reset()

    def begin_sweep(self) -> None:
        self._moved = 0.0
        self.weights.begin_sweep()

    def visit(self, view: SliceView) -> None:
        if self.jacobi_from is not None:
            self.weights.visit(view)
            kernels.inverse_scatter_slice(
                view.indptr, view.sources, view.lo, self.interest, self.children_sum
            )
            return
        moved, lowest = inverse_slice_sweep(
            view,
            self.interest,
            self.children_sum,
            self.graph.outdeg,
            self.self_linked,
            self.teleport,
            self.damping,
            self.r,
            weights=self.weights.step_of(view),
        )
        self._moved += moved
        self.weights.record(lowest)

    def end_sweep(self) -> None:
        self.sweeps += 1
        self.weights.end_sweep()
        if self.jacobi_from is not None:
            self.last_delta, total, weighted, ratio = kernels.inverse_finish_sweep(
                self.children_sum,
                self.graph.outdeg,
                self.teleport,
                self.damping,
                self.interest,
                self.weights.certified,
            )
            self.bound_state.observe(1.0 / total, ratio)
            # the bound holds for the vector the sweep started from; the new one is d away
            self.last_bound = self.bound_state.bound(weighted) + self.last_delta
            self.r = 1.0 / total
            self.weights.advance()
            return
        total, self.r = kernels.inverse_close_sweep(
            self.interest, self.children_sum, self.graph.outdeg, self.teleport, self.damping
        )
        self.last_delta = self._moved / total
        if self.extrapolation is not None and self.extrapolation.after_sweep(
            self.sweeps, self.last_delta
        ):
            _, self.r = kernels.inverse_close_sweep(
                self.interest, self.children_sum, self.graph.outdeg, self.teleport, self.damping
            )
        self._take_bound()
        self._keep_pace()

    def _take_bound(self) -> None:
        """The bound of :mod:`~ranking.pagerank.inverse_bound` for the current (normalised)
        interest."""
        weighted, ratio, lowest = kernels.inverse_residual(
            self.interest,
            self.children_sum,
            self.graph.outdeg,
            self.teleport,
            self.damping,
            self.r,
            self.weights.certified,
        )
        self.bound_state.observe(self.r, ratio)
        self.last_bound = self.bound_state.bound(weighted) if lowest >= 0 else float("inf")
        self.weights.advance()

    def _keep_pace(self) -> None:
        """Fall back to Jacobi sweeps when Gauss-Seidel does not keep pace (module docstring).

        In the first ``SETTLING_SWEEPS`` the pace is judged only over sweeps in which
        c·r < 1: while the estimate of r is above its limit no method contracts, and a
        plateau there handed a small site to 1,800 Jacobi sweeps
        (tests/ranking/test_ranking_small_sites.py). After them an r that stays high (an
        oscillating sweep) is judged against ``SLOWEST_RATE``.
        """
        jacobi = self.damping * self.r
        if jacobi >= 1.0 and self.sweeps <= SETTLING_SWEEPS:
            self._smallest.clear()  # r not settled yet: the window starts later
            return
        smallest = min(self.last_delta, self._smallest[-1] if self._smallest else np.inf)
        self._smallest.append(smallest)
        if len(self._smallest) > PROGRESS_WINDOW:
            # Jacobi's own pace is c·r: asking more of Gauss-Seidel than that would hand the
            # interest to slower sweeps (c·r = 0.99 on small sites: 1,800 sweeps to 1e-8)
            rate = jacobi if jacobi < 1.0 else SLOWEST_RATE
            if smallest > self._smallest[-1 - PROGRESS_WINDOW] * rate**PROGRESS_WINDOW:
                self.jacobi_from = self.sweeps + 1
                self.children_sum[:] = 0.0  # the Jacobi sweeps' accumulator from now on

    def norm_delta(self) -> float:
        """A proven bound on ‖x − x*‖₁ (:mod:`~ranking.pagerank.inverse_bound`), inf until the
        weights certify one; :class:`NoErrorBound` while none can be had (module docstring)."""
        return self.bound_state.checked(self.last_bound)

    def relative_change(self) -> float:
        """‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ / ‖x⁽ᵗ⁾‖₁ of the last sweep, before normalising x⁽ᵗ⁾."""
        return self.last_delta

    def vector(self) -> np.ndarray:
        return self.interest

    def details(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "normalisation_r": self.r,
            "slices": self.graph.n_slices,
            "jacobi_from_sweep": self.jacobi_from,
            "extrapolations": self.extrapolation.count if self.extrapolation else 0,
            "r_upper_bound": self.bound_state.r_bar,
            "weights_factor": self.bound_state.factor,
        }
