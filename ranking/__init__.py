"""Page ranking: sliced Gauss-Seidel PageRank (paper §5), OPIC and LiveRank orderings.

The sliced rankings work on a :class:`SlicedGraph` (the link matrix cut by destination and
written to disk, sized by a memory budget) and need nothing else: build one from edge arrays,
.npy files or streamed chunks, then call :func:`pagerank`, :func:`interest` or
:func:`importance_and_interest`. See docs/ranking.md.
"""

from ranking.compute import importance_and_interest, interest, pagerank
from ranking.direct import DirectPageRank
from ranking.errors import (
    BudgetTooSmall,
    InvalidGraph,
    NoErrorBound,
    NotConverged,
    RankingCancelled,
    RankingError,
)
from ranking.inverse import InversePageRank, importance_teleport, xml_teleport
from ranking.iterative import IterativeRanking
from ranking.power import PowerIterationPageRank
from ranking.result import RankResult
from ranking.sliced import CombinedScan, ScanMonitor
from ranking.slices import SlicedGraph
from ranking.stopping import L1Bound, MaxSweeps, RelativeChange, StopRule

__all__ = [
    "BudgetTooSmall",
    "CombinedScan",
    "DirectPageRank",
    "InvalidGraph",
    "InversePageRank",
    "IterativeRanking",
    "L1Bound",
    "MaxSweeps",
    "NoErrorBound",
    "NotConverged",
    "PowerIterationPageRank",
    "RankResult",
    "RankingCancelled",
    "RankingError",
    "RelativeChange",
    "ScanMonitor",
    "SlicedGraph",
    "StopRule",
    "importance_and_interest",
    "importance_teleport",
    "interest",
    "pagerank",
    "xml_teleport",
]
