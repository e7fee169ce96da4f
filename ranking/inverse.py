"""Inverse PageRank (interest of HTML pages, biased to XML) by sliced Jacobi sweeps (§5.2).

The equation, with Mᵗ[i, j] = 1/OutDeg(i) for j ∈ Out(i) as §5.2 writes it::

    x = r·(c·Mᵗ·x + (1 − c)·E'),     r = 1/‖c·Mᵗ·x + (1 − c)·E'‖₁   (eq. 6–7, ‖x‖₁ = 1)

so a page's interest is r times the damped *average* of its children's interest plus its
own share of E': the XML that a forward random walk from the page reaches, discounted by c
per link. E' is uniform on XML pages and 0 elsewhere (PR'); the variant PR'' takes
E' = the importance of XML pages, normalised (``importance_teleport``). A page without
links keeps only its E' share.

Because 1ᵀx = 1, (1 − c)·E' = (1 − c)·E'·1ᵀx, and the fixed point is the Perron vector of
c·Mᵗ + (1 − c)·E'·1ᵀ, with r the inverse of its spectral radius: the iteration is the power
method on that matrix, which is how the dense test solves it.

Why no error bound: the columns of c·Mᵗ sum to c·Σ_{i→j} 1/OutDeg(i), which exceeds c
whenever a page's parents have few links, and r rescales every sweep, so the contraction
argument of the direct ranking fails. The stop rule is therefore the relative ℓ₁ change
of the normalised vector, ‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ (‖x⁽ᵗ⁾‖₁ = 1): scale-free, but a measure of
progress, not a distance to the fixed point.

Jacobi, not Gauss-Seidel: a slice holds the links *into* its pages, so it adds the slice's
interest to the accumulators of their parents, which lie anywhere; a parent's new interest
is complete only after the last slice. That is what lets one scan of the same slices serve
the direct and the inverse vectors (:class:`~ranking.sliced.CombinedScan`).
"""

from __future__ import annotations

import threading

import numpy as np

from ranking import kernels
from ranking.direct import copy_distribution
from ranking.errors import InvalidGraph
from ranking.sliced import ScanMonitor, SlicedRanking
from ranking.slices import SlicedGraph, SliceView


def xml_teleport(is_xml: np.ndarray) -> np.ndarray:
    """E' of PR': 1/N_XML on XML pages, 0 elsewhere.

    Examples
    --------
    >>> xml_teleport(np.array([True, False, True])).tolist()
    [0.5, 0.0, 0.5]
    """
    is_xml = np.asarray(is_xml, dtype=bool)
    count = int(is_xml.sum())
    if count == 0:
        raise InvalidGraph("no XML page: the interest (biased to XML) is undefined")
    return is_xml / count


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


class InversePageRank(SlicedRanking):
    """Interest: PageRank on the inverse link graph, biased to XML by E' (§5.2).

    Parameters
    ----------
    graph : SlicedGraph
        The sliced link matrix (the same slices as the direct ranking).
    teleport : ndarray
        E', non-negative, one value per page (normalised here): :func:`xml_teleport` for
        PR', :func:`importance_teleport` for PR''. Also the start vector, as the paper's
        PR(M_Out, E', E').
    damping : float
        c in ]0, 1[.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from ranking.stopping import MaxSweeps, RelativeChange
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 1]), np.array([1, 2, 0]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> r = InversePageRank(g, xml_teleport(np.array([False, False, True])))
    >>> res = r.run(RelativeChange(1e-12) | MaxSweeps(500))
    >>> res.figure_name, np.round(res.values, 4).tolist()
    ('relative_l1_change', [0.4273, 0.3676, 0.2051])

    Notes
    -----
    Stop with ``RelativeChange(tol)``: :meth:`norm_delta` raises, as no contraction bound
    holds (module docstring). ``details()["normalisation_r"]`` is the last r of eq. 7.

    References
    ----------
    Mignet et al.: Acquisition of XML data in Xyleme, §5.2 (PR', PR''), §5.3.
    """

    kind = "interest"

    def __init__(
        self,
        graph: SlicedGraph,
        teleport: np.ndarray,
        damping: float = 0.85,
        *,
        variant: str = "PR'",
        monitor: ScanMonitor | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__(graph, damping, monitor=monitor, cancel=cancel)
        self.teleport = graph.vector("teleport-inverse")
        copy_distribution(teleport, self.teleport, "teleport vector E'")
        self.variant = variant
        self.interest = graph.vector(self.kind)
        self.acc = graph.vector("interest-acc")
        self.last_delta = float("inf")
        self.r = 1.0

    def init(self) -> None:
        super().init()
        self.interest[:] = self.teleport
        self.acc[:] = 0.0
        self.last_delta = float("inf")

    def begin_sweep(self) -> None:
        """Nothing to prepare: the accumulators were zeroed by the previous sweep's end."""

    def visit(self, view: SliceView) -> None:
        kernels.inverse_scatter_slice(view.indptr, view.sources, view.lo, self.interest, self.acc)

    def end_sweep(self) -> None:
        self.last_delta, total = kernels.inverse_finish_sweep(
            self.acc, self.graph.outdeg, self.teleport, self.damping, self.interest
        )
        self.r = 1.0 / total
        self.sweeps += 1

    def relative_change(self) -> float:
        """‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ / ‖x⁽ᵗ⁾‖₁ after normalisation (‖x⁽ᵗ⁾‖₁ = 1)."""
        return self.last_delta

    def vector(self) -> np.ndarray:
        return self.interest

    def details(self) -> dict[str, object]:
        return {"variant": self.variant, "normalisation_r": self.r, "slices": self.graph.n_slices}
