"""Direct PageRank (importance) by sliced, in-place Gauss-Seidel sweeps (paper §5.1, §5.3).

The equation (eq. 5 with the dangling pages made explicit)::

    x = c·(M·x + δ(x)·E) + (1 − c)·E,     δ(x) = Σ_{OutDeg(i)=0} x_i

M[j, i] = 1/OutDeg(i) for a link i → j; a page without links hands its rank out by E, so
the result is the standard PageRank of networkx or igraph, and ‖x‖₁ = 1.

Gauss-Seidel: page j's new value is computed from the *current* values of its in-neighbours,
so pages of earlier slices and earlier in the same slice are already new (the slice is
updated in place, §5.3 "Gauss-Seidel iterations"). Each page's own equation is solved
exactly, self-links included, and the dangling mass δ is kept current as dangling pages
change. Solving for the self-link matters on the web: a page whose links lead mostly back to
itself is a mode that a sweep reading its old value shrinks only by c.

Error bound. Write A = M + E·dᵀ (column-stochastic) as L + U, L the part already updated
when a page is computed (its self-link included). One sweep maps the error e = x − x* to
(I − cL)⁻¹·cU·e, whose ℓ₁ norm is at most c: the row vector c·1ᵀ(I − cL) dominates 1ᵀ·cU,
since with l_k the k-th column sum of L, c·(1 − c·l_k) ≥ c·(1 − l_k), and (I − cL)⁻¹ ≥ 0.
Hence
‖x⁽ᵗ⁾ − x*‖₁ ≤ c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁, the bound LAW's ``PageRankGaussSeidel`` uses.

The paper's normalisation factor r (eq. 6–7), ``renormalise=True``, drops the dangling term
and rescales instead: x = r·(c·M·x + (1 − c)·E) with ‖x‖₁ = 1. Summing gives r = 1/(1 − c·δ),
and substituting shows its fixed point satisfies the standard equation above with the larger
damping c' = c/(1 − c·δ), δ being the dangling mass of that fixed point itself. c' reaches 1
when δ ≥ (1 − c)/c (about 0.18 for c = 0.85, common while many pages are still uncrawled);
there the PageRank reading breaks down and a Gauss-Seidel form of the iteration diverges.
Since 1ᵀx = 1, the fixed point is the Perron vector of the positive matrix
c·M + (1 − c)·E·1ᵀ, so this variant runs eq. 6–7 literally: Jacobi sweeps (each slice reads
the previous vector) with r from the previous vector, a power method that always converges.
It has no proven bound and stops on the relative change.

Extrapolation. Every few sweeps the vector is extrapolated from two iterates six sweeps
apart (:mod:`ranking.pagerank.extrapolation`), removing the slowest error mode: 57 → 40
sweeps on the 1M-page benchmark graph. The bound above holds after any sweep, from whatever
vector it started, since it only uses the contraction of one sweep; so it holds again one
sweep after an extrapolation, and the stop rule is not asked on the extrapolated vector itself
(:meth:`DirectPageRank.norm_delta` is infinite there).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from ranking.errors import NoErrorBound
from ranking.pagerank import kernels
from ranking.pagerank.extrapolation import PowerExtrapolation
from ranking.pagerank.sliced import ScanMonitor, SlicedRanking
from ranking.pagerank.slices import SlicedGraph, SliceView
from ranking.stepping import contraction_bound

IN_SLICE_MODES = ("gauss-seidel", "jacobi")


class SliceSweep(NamedTuple):
    """What one slice's pass of the direct ranking measured."""

    delta: float
    """‖x_new − x_old‖₁ over the slice's pages."""
    dangling_change: float
    """How much the dangling mass δ changed (its pages of the slice)."""
    mass: float
    """Σ of the slice's new values."""


def direct_slice_sweep(
    view: SliceView,
    scaled: np.ndarray,
    outdeg: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    dangling: float,
    *,
    out: np.ndarray | None = None,
    renormalise: bool = False,
) -> SliceSweep:
    """The direct ranking's pass over one slice: the unit of work of a sweep (§5.3).

    ``scaled`` holds x_i/OutDeg(i) (x_i for dangling pages) for every page, ``dangling`` the
    current δ. Without ``out``, Gauss-Seidel: the slice's pages are solved in place in
    ``scaled`` from the newest values, δ kept current page by page (add the returned
    ``dangling_change`` to it before the next slice). With ``out`` (one value per page of the
    slice), every row reads ``scaled`` as it was and writes ``out``: a Jacobi pass, as a
    worker holding a copy of the vector does. ``teleport`` of length 1 is uniform.
    ``renormalise`` computes eq. 6–7's r instead of handing out δ (module docstring).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> g = SlicedGraph.from_arrays(np.array([0, 1]), np.array([1, 0]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> scaled = np.full(2, 0.5)
    >>> [direct_slice_sweep(v, scaled, g.outdeg, np.full(1, 0.5), 0.85, 0.0).delta
    ...  for v in g.slices()]
    [0.0]
    """
    in_place = out is None
    return SliceSweep(
        *kernels.gauss_seidel_slice(
            view.indptr,
            view.sources,
            view.lo,
            scaled,
            outdeg,
            teleport,
            damping,
            dangling,
            in_place,
            renormalise,
            scaled[view.lo : view.hi] if out is None else out,
        )
    )


class DirectPageRank(SlicedRanking):
    """Importance: PageRank over all pages by sliced Gauss-Seidel.

    Parameters
    ----------
    graph : SlicedGraph
        The sliced link matrix.
    damping : float
        c in ]0, 1[, 0.85 by default as in the paper.
    personalization : ndarray, optional
        E, non-negative, one value per page (normalised here); uniform when None. It is also
        the start vector (the paper's PR(M, E, E)) and where dangling pages send their rank.
    renormalise : bool
        Use the paper's factor r of eq. 6–7 instead of redistributing the dangling mass
        (Jacobi sweeps, see the module docstring).
    in_slice : {"gauss-seidel", "jacobi"}
        "jacobi" computes a slice from its old values (block-Jacobi inside the slice, later
        slices still see it): kept to measure what in-place updating buys.
    extrapolate : bool
        Remove the slowest error mode every few sweeps (:mod:`ranking.pagerank.extrapolation`; not
        with ``renormalise``); False to measure what it buys.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> from ranking.stepping import L1Bound, MaxSweeps
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 2, 2]), np.array([1, 2, 0, 1]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> r = DirectPageRank(g).run(L1Bound(1e-10) | MaxSweeps(200))
    >>> r.converged, np.round(r.values, 4).tolist()
    (True, [0.2148, 0.3974, 0.3878])

    Notes
    -----
    Stops, with ``L1Bound(tol)``, when c/(1 − c)·‖Δ‖₁ ≤ tol: then ‖x − x*‖₁ ≤ tol (module
    docstring). Vectors are memory-mapped when the graph's budget cannot hold them.

    References
    ----------
    Mignet, Preda, Abiteboul, Ailleret, Amann, Marian: Acquisition of XML data in Xyleme,
    §5.1 (eq. 5–7) and §5.3 (``../shared/seeds/002_a12aa06e521cba43.txt``). Page, Brin,
    Motwani, Winograd: The PageRank citation ranking, 1999. Boldi, Vigna: LAW
    ``PageRankGaussSeidel``.
    """

    kind = "importance"

    def __init__(
        self,
        graph: SlicedGraph,
        damping: float = 0.85,
        *,
        personalization: np.ndarray | None = None,
        renormalise: bool = False,
        in_slice: str = "gauss-seidel",
        extrapolate: bool = True,
        monitor: ScanMonitor | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        super().__init__(graph, damping, monitor=monitor, cancel=cancel)
        if in_slice not in IN_SLICE_MODES:
            raise ValueError(f"in_slice must be one of {IN_SLICE_MODES}, not {in_slice!r}")
        self.renormalise = renormalise
        self.in_slice = in_slice
        self.personalized = personalization is not None
        if personalization is None:
            self.teleport = np.full(1, 1.0 / graph.num_pages)
        else:
            self.teleport = graph.vector("teleport-direct")
            copy_distribution(personalization, self.teleport, "personalization")
        self.scaled = graph.vector("importance-scaled")
        self.previous = graph.vector("importance-previous") if renormalise else None
        self.extrapolation = (
            PowerExtrapolation([(self.scaled, graph.vector("importance-saved"))])
            if extrapolate and not renormalise
            else None
        )
        self.extrapolated = False
        self.dangling = 0.0
        self.last_delta = float("inf")
        self.last_mass = 1.0
        self._sweep_delta = 0.0
        self._sweep_mass = 0.0
        self._sweep_dangling = 0.0
        self._scratch: np.ndarray | None = None

    def init(self) -> None:
        super().init()
        start = self.teleport[0] if len(self.teleport) == 1 else self.teleport
        self.scaled[:] = start
        self.dangling = kernels.scale(self.scaled, self.graph.outdeg, self.scaled)
        self.last_delta = float("inf")
        self.extrapolated = False
        if self.extrapolation is not None:
            self.extrapolation.reset()

    def begin_sweep(self) -> None:
        self._sweep_delta = 0.0
        self._sweep_mass = 0.0
        self._sweep_dangling = self.dangling
        if self.previous is not None:
            self.previous[:] = self.scaled

    def visit(self, view: SliceView) -> None:
        live = self.previous is None
        out = None if live else self.scaled[view.lo : view.hi]  # eq. 6–7 reads ``previous``
        if self.in_slice == "jacobi" and live:
            if self._scratch is None:
                self._scratch = np.empty(int(np.diff(self.graph.bounds).max()))
            out = self._scratch[: view.hi - view.lo]
        sweep = direct_slice_sweep(
            view,
            self.scaled if live else self.previous,
            self.graph.outdeg,
            self.teleport,
            self.damping,
            self.dangling if live else self._sweep_dangling,
            out=out,
            renormalise=self.renormalise,
        )
        if self.in_slice == "jacobi" and live:
            self.scaled[view.lo : view.hi] = out
        self.dangling += sweep.dangling_change
        self._sweep_delta += sweep.delta
        self._sweep_mass += sweep.mass

    def end_sweep(self) -> None:
        self.last_delta = self._sweep_delta
        self.last_mass = self._sweep_mass
        self.sweeps += 1
        self.extrapolated = self.extrapolation is not None and self.extrapolation.after_sweep(
            self.sweeps, self.last_delta
        )
        if self.extrapolated:
            self.dangling = kernels.dangling_mass(self.scaled, self.graph.outdeg)

    def norm_delta(self) -> float:
        """c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁, a proven bound on ‖x⁽ᵗ⁾ − x*‖₁ (module docstring);
        infinite after an extrapolation, which the sweep's change does not bound."""
        if self.renormalise:
            raise NoErrorBound("the renormalised ranking (eq. 6–7) has no proven ℓ₁ bound")
        if self.extrapolated:
            return float("inf")
        return contraction_bound(self.damping, self.last_delta)

    def relative_change(self) -> float:
        return self.last_delta / self.last_mass

    def vector(self) -> np.ndarray:
        values = self.graph.vector(self.kind)
        kernels.unscale(self.scaled, self.graph.outdeg, values)
        return values

    def details(self) -> dict[str, object]:
        details: dict[str, object] = {
            "personalization": "given" if self.personalized else "uniform",
            "renormalise": self.renormalise,
            "in_slice": self.in_slice,
            "slices": self.graph.n_slices,
            "dangling_mass": self.dangling,
            "extrapolations": self.extrapolation.count if self.extrapolation else 0,
        }
        if self.renormalise:
            details["effective_damping"] = self.damping / (1.0 - self.damping * self.dangling)
        return details


def copy_distribution(values: np.ndarray, out: np.ndarray, name: str) -> None:
    """Copy a non-negative vector into ``out`` normalised to ℓ₁ norm 1, or say what is wrong."""
    values = np.asarray(values)
    if values.shape != out.shape:
        raise ValueError(f"the {name} has {values.size} values for {out.size} pages")
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError(f"the {name} must be finite and non-negative")
    total = float(values.sum(dtype=np.float64))
    if total <= 0:
        raise ValueError(f"the {name} is zero everywhere")
    np.divide(values, total, out=out)
