"""One-call rankings of a sliced graph: importance, interest, or both in one scan.

These choose the stop rules the issues fix (a proven ℓ₁ error bound for the direct vector and
for the interest, the relative change for the renormalised direct vector and where the
interest can have no bound, a max-sweeps guard for all) and turn
a guard that ran out into :class:`~ranking.errors.NotConverged` unless ``strict=False``.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import numpy as np

from ranking.pagerank.direct import DirectPageRank
from ranking.pagerank.inverse import InversePageRank, importance_teleport, xml_mask
from ranking.pagerank.sliced import CombinedScan, ScanMonitor
from ranking.pagerank.slices import SlicedGraph
from ranking.result import RankResult
from ranking.settings import VARIANTS
from ranking.stepping import (
    BoundElseChange,
    L1Bound,
    MaxSweeps,
    RelativeChange,
    StopRule,
    checked,
)


def direct_stop(tol: float, max_sweeps: int, *, renormalise: bool = False) -> StopRule:
    """‖Δ‖₁·c/(1−c) ≤ tol (relative change when renormalised), or ``max_sweeps``."""
    rule = RelativeChange(tol) if renormalise else L1Bound(tol)
    return rule | MaxSweeps(max_sweeps)


def inverse_stop(tol: float, max_sweeps: int) -> StopRule:
    """The proven ℓ₁ bound ≤ tol (the relative change where none can be had), or
    ``max_sweeps``."""
    return BoundElseChange(tol) | MaxSweeps(max_sweeps)


def pagerank(
    graph: SlicedGraph,
    *,
    damping: float = 0.85,
    personalization: np.ndarray | None = None,
    renormalise: bool = False,
    tol: float = 1e-8,
    max_sweeps: int = 1000,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
    strict: bool = True,
) -> RankResult:
    """Importance of every page: direct PageRank by sliced Gauss-Seidel (§5.1, §5.3).

    Parameters
    ----------
    graph : SlicedGraph
        The sliced link matrix.
    damping, personalization, renormalise
        As for :class:`~ranking.pagerank.direct.DirectPageRank`.
    tol : float
        Stop when the proven ℓ₁ error bound c/(1−c)·‖Δ‖₁ is at most ``tol``.
    max_sweeps : int
        Guard: raise :class:`NotConverged` (when ``strict``) after that many sweeps.
    monitor, cancel
        Progress reports per slice; an event that stops the run between slices.
    strict : bool
        Return a non-converged result instead of raising.

    Returns
    -------
    RankResult
        The vector (sums to 1 within ``tol``) with damping, sweeps, bound and snapshot.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> g = SlicedGraph.from_arrays(np.array([0, 0, 1]), np.array([1, 2, 2]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> np.round(pagerank(g).values, 3).tolist()
    [0.198, 0.282, 0.521]

    Notes
    -----
    Dangling pages hand their rank out by the personalization, so this is the standard
    PageRank (networkx's ``pagerank`` with the same ``alpha``).

    References
    ----------
    Mignet et al.: Acquisition of XML data in Xyleme, §5.1 and §5.3
    (``../shared/seeds/002_a12aa06e521cba43.txt``).
    """
    ranking = DirectPageRank(
        graph,
        damping,
        personalization=personalization,
        renormalise=renormalise,
        monitor=monitor,
        cancel=cancel,
    )
    return ranking.run(direct_stop(tol, max_sweeps, renormalise=renormalise), strict=strict)


def interest(
    graph: SlicedGraph,
    is_xml: np.ndarray,
    *,
    damping: float = 0.85,
    importance: np.ndarray | None = None,
    tol: float = 1e-8,
    max_sweeps: int = 1000,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
    strict: bool = True,
) -> RankResult:
    """Interest of every page: inverse PageRank biased to XML (§5.2).

    PR' (E' uniform on XML pages) by default; PR'' (E' = importance of the XML pages) when
    ``importance`` is given. Parameters as :func:`pagerank`; ``is_xml`` marks XML pages.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> g = SlicedGraph.from_arrays(np.array([0, 1]), np.array([1, 2]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> np.round(interest(g, np.array([False, False, True])).values, 3).tolist()
    [0.438, 0.323, 0.239]
    """
    if importance is None:
        teleport, variant = xml_mask(is_xml), "PR'"
    else:
        teleport, variant = importance_teleport(importance, is_xml), "PR''"
    ranking = InversePageRank(
        graph, teleport, damping, variant=variant, monitor=monitor, cancel=cancel
    )
    return ranking.run(inverse_stop(tol, max_sweeps), strict=strict)


def importance_and_interest(
    graph: SlicedGraph,
    is_xml: np.ndarray,
    *,
    damping: float = 0.85,
    variant: str = "PR'",
    tol: float = 1e-8,
    max_sweeps: int = 1000,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
    strict: bool = True,
) -> tuple[RankResult, RankResult]:
    """Importance and interest of every page, as Xyleme needs them (§5.2, §5.3).

    For PR' both vectors advance in one scan per sweep (combined computation), both by
    Gauss-Seidel, each until its own stop rule. PR'' needs the final
    importance as its E', so it runs the direct ranking first, then the inverse.

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 2]), np.array([1, 2, 0]),
    ...                            pathlib.Path(tempfile.mkdtemp()))
    >>> imp, intr = importance_and_interest(g, np.array([True, False, False]))
    >>> np.round(imp.values, 3).tolist(), imp.sweeps > 0
    ([0.333, 0.333, 0.333], True)
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    if variant == "PR''":
        importance = pagerank(
            graph,
            damping=damping,
            tol=tol,
            max_sweeps=max_sweeps,
            monitor=monitor,
            cancel=cancel,
            strict=strict,
        )
        inverse = interest(
            graph,
            is_xml,
            damping=damping,
            importance=importance.values,
            tol=tol,
            max_sweeps=max_sweeps,
            monitor=monitor,
            cancel=cancel,
            strict=strict,
        )
        return importance, inverse
    combined = CombinedScan(
        [
            (DirectPageRank(graph, damping), direct_stop(tol, max_sweeps)),
            (InversePageRank(graph, xml_mask(is_xml), damping), inverse_stop(tol, max_sweeps)),
        ],
        monitor=monitor,
        cancel=cancel,
    )
    importance, inverse = combined.run()
    return checked(importance, strict), checked(inverse, strict)


def warm_up() -> None:
    """Rank a three-page graph once, so numba loads every kernel's compiled code now.

    Importing the kernels compiles nothing: numba loads each one's cached machine code at its
    first call (0.2-0.4 s in all), which a daemon would otherwise pay in its first ranking
    pass. It calls this when it opens.
    """
    with tempfile.TemporaryDirectory(prefix="xyleme-warm-up-") as folder:
        graph = SlicedGraph.from_chunks(
            [(np.array([0, 1, 2]), np.array([1, 2, 0]))], Path(folder), num_pages=3
        )
        importance_and_interest(graph, np.array([True, False, False]))
