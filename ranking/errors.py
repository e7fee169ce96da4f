"""The named failures of the ranking package: one hierarchy under :class:`RankingError`.

Every error a user can cause (a bad edge file, a budget too small for one page's in-links, a
run that did not converge) is one of these, so the CLI can print a sentence, not a traceback.
Every iteration of the package (sliced Gauss-Seidel, power iteration, LiveRank's PageRank)
stops through :mod:`ranking.stepping` and fails with :class:`NotConverged`; the OPIC and
LiveRank errors (:mod:`ranking.opic`, :mod:`ranking.liverank`) derive from
:class:`RankingError` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ranking.result import RankResult


class RankingError(Exception):
    """Base class of every ranking failure."""


class InvalidGraph(RankingError, ValueError):
    """The edges cannot form a link matrix (negative ids, ids beyond the page count, a
    teleport or zap vector that is not a distribution, ...)."""


class BudgetTooSmall(RankingError):
    """The memory budget cannot hold even the smallest possible slice."""


class NoErrorBound(RankingError):
    """The algorithm has no true bound of the kind a stop rule asked for.

    Raised by :meth:`IterativeRanking.norm_delta` (and ``relative_change``) when the
    algorithm cannot provide the figure, so that nothing ever stops on a bound that does not
    hold (LAW's ``SpectralRanking.normDelta`` makes the same choice).
    """


class NotConverged(RankingError):
    """The max-sweeps guard stopped the iteration before the convergence criterion held.

    The partial result is attached as ``result`` so a caller may still use it knowingly.
    """

    def __init__(self, result: RankResult) -> None:
        super().__init__(
            f"{result.kind} did not converge: {result.figure_name} {result.figure:.3g} "
            f"after {result.sweeps} sweeps (raise max_sweeps or loosen tol)"
        )
        self.result = result


class RankingCancelled(RankingError):
    """The caller cancelled a run between two slices; nothing was written."""
