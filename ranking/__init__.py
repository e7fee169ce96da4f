"""Page ranking: PageRank (sliced Gauss-Seidel, §5 of seed 002), OPIC and LiveRank.

Three subjects, one subpackage each, over one stepping core:

* :mod:`ranking.pagerank`: importance and interest of every page, by sliced Gauss-Seidel
  over the link matrix on disk (the warehouse's ranking pass), and the in-RAM power
  iteration it is measured against.
* :mod:`ranking.opic`: on-line page importance computed while crawling (seed 000).
* :mod:`ranking.liverank`: which pages of an old crawl to re-check first (seed 001).

The core, :mod:`ranking.stepping` (after LAW WebGraph's ``SpectralRanking``), owns the loop,
the stop rules and the error bounds; :mod:`ranking.errors` the one hierarchy of failures
(:class:`RankingError`); :class:`RankResult` carries a vector with how it was made. The
package takes arrays and graphs and returns results: it imports nothing of the store
(``metadata``) or of the daemon (``xyleme``). See docs/ranking.md.

This face holds the core only, so importing ``ranking.opic`` or the CLI does not pay for
numba and the compiled kernels that :mod:`ranking.pagerank` loads on first use.
"""

from __future__ import annotations

from ranking.errors import (
    BudgetTooSmall,
    InvalidGraph,
    NoErrorBound,
    NotConverged,
    RankingCancelled,
    RankingError,
)
from ranking.result import RankResult
from ranking.settings import RankingSettings
from ranking.stepping import (
    BoundElseChange,
    ContractingRanking,
    IterativeRanking,
    L1Bound,
    MaxSweeps,
    RelativeChange,
    StopRule,
    contraction_bound,
)

__all__ = [
    "BoundElseChange",
    "BudgetTooSmall",
    "ContractingRanking",
    "InvalidGraph",
    "IterativeRanking",
    "L1Bound",
    "MaxSweeps",
    "NoErrorBound",
    "NotConverged",
    "RankResult",
    "RankingCancelled",
    "RankingError",
    "RankingSettings",
    "RelativeChange",
    "StopRule",
    "contraction_bound",
]
