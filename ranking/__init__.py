"""Page ranking: sliced Gauss-Seidel PageRank (paper §5), OPIC and LiveRank orderings.

The sliced rankings work on a :class:`SlicedGraph` (the link matrix cut by destination and
written to disk, sized by a memory budget) and need nothing else: build one from edge arrays,
.npy files or streamed chunks, then call :func:`pagerank`, :func:`interest` or
:func:`importance_and_interest`. See docs/ranking.md.

The names below load on first use (PEP 562), so importing ``ranking.opic`` or the CLI does
not pay for numba and the compiled kernels.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "BoundElseChange": "ranking.stopping",
    "BudgetTooSmall": "ranking.errors",
    "CombinedScan": "ranking.sliced",
    "DirectPageRank": "ranking.direct",
    "InvalidGraph": "ranking.errors",
    "InversePageRank": "ranking.inverse",
    "IterativeRanking": "ranking.iterative",
    "L1Bound": "ranking.stopping",
    "MaxSweeps": "ranking.stopping",
    "NoErrorBound": "ranking.errors",
    "NotConverged": "ranking.errors",
    "PowerIterationPageRank": "ranking.power",
    "RankResult": "ranking.result",
    "RankingCancelled": "ranking.errors",
    "RankingError": "ranking.errors",
    "RankingSettings": "ranking.settings",
    "RelativeChange": "ranking.stopping",
    "ScanMonitor": "ranking.sliced",
    "SlicedGraph": "ranking.slices",
    "StopRule": "ranking.stopping",
    "importance_and_interest": "ranking.compute",
    "importance_teleport": "ranking.inverse",
    "interest": "ranking.compute",
    "pagerank": "ranking.compute",
    "xml_teleport": "ranking.inverse",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ranking' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
