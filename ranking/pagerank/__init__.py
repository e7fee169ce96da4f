"""PageRank of the warehouse: importance and interest by sliced Gauss-Seidel (seed 002, §5).

The sliced rankings work on a :class:`SlicedGraph` (the link matrix cut by destination and
written to disk, sized by a memory budget) and need nothing else: build one from edge arrays,
.npy files or streamed chunks, then call :func:`pagerank`, :func:`interest` or
:func:`importance_and_interest`. Every solver is a small subclass of the stepping core
(:mod:`ranking.stepping`): :class:`DirectPageRank` and :class:`InversePageRank` sweep the
slices, :class:`PowerIteration` and its peers iterate over CSR matrices in RAM.
:func:`direct_slice_sweep` and :func:`inverse_slice_sweep` are one slice's work, for a runner
that spreads the slices over workers. See docs/ranking.md.

The names load on first use (PEP 562): the compiled kernels (numba) are paid for only by
what uses them (LiveRank uses :mod:`ranking.pagerank.power` alone, plain scipy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ranking.pagerank.compute import (
        direct_stop,
        importance_and_interest,
        interest,
        inverse_stop,
        pagerank,
        warm_up,
    )
    from ranking.pagerank.direct import (
        DirectPageRank,
        SliceSweep,
        copy_distribution,
        direct_slice_sweep,
    )
    from ranking.pagerank.inverse import (
        InversePageRank,
        importance_teleport,
        inverse_slice_sweep,
        xml_mask,
        xml_teleport,
    )
    from ranking.pagerank.inverse_bound import BoundState
    from ranking.pagerank.memory import anon_rss_bytes, parse_size
    from ranking.pagerank.power import PowerIteration, PowerIterationPageRank
    from ranking.pagerank.power_interest import PowerIterationInterest
    from ranking.pagerank.sliced import CombinedScan, ScanMonitor, SlicedRanking, scan
    from ranking.pagerank.slices import SlicedGraph, SliceView

__all__ = [
    "BoundState",
    "CombinedScan",
    "DirectPageRank",
    "InversePageRank",
    "PowerIteration",
    "PowerIterationInterest",
    "PowerIterationPageRank",
    "ScanMonitor",
    "SliceSweep",
    "SliceView",
    "SlicedGraph",
    "SlicedRanking",
    "anon_rss_bytes",
    "copy_distribution",
    "direct_slice_sweep",
    "direct_stop",
    "importance_and_interest",
    "importance_teleport",
    "interest",
    "inverse_slice_sweep",
    "inverse_stop",
    "pagerank",
    "parse_size",
    "scan",
    "warm_up",
    "xml_mask",
    "xml_teleport",
]

_MODULE_OF = {
    "BoundState": "ranking.pagerank.inverse_bound",
    "CombinedScan": "ranking.pagerank.sliced",
    "DirectPageRank": "ranking.pagerank.direct",
    "InversePageRank": "ranking.pagerank.inverse",
    "PowerIteration": "ranking.pagerank.power",
    "PowerIterationInterest": "ranking.pagerank.power_interest",
    "PowerIterationPageRank": "ranking.pagerank.power",
    "ScanMonitor": "ranking.pagerank.sliced",
    "SliceSweep": "ranking.pagerank.direct",
    "SliceView": "ranking.pagerank.slices",
    "SlicedGraph": "ranking.pagerank.slices",
    "SlicedRanking": "ranking.pagerank.sliced",
    "anon_rss_bytes": "ranking.pagerank.memory",
    "copy_distribution": "ranking.pagerank.direct",
    "direct_slice_sweep": "ranking.pagerank.direct",
    "direct_stop": "ranking.pagerank.compute",
    "importance_and_interest": "ranking.pagerank.compute",
    "importance_teleport": "ranking.pagerank.inverse",
    "interest": "ranking.pagerank.compute",
    "inverse_slice_sweep": "ranking.pagerank.inverse",
    "inverse_stop": "ranking.pagerank.compute",
    "pagerank": "ranking.pagerank.compute",
    "parse_size": "ranking.pagerank.memory",
    "scan": "ranking.pagerank.sliced",
    "warm_up": "ranking.pagerank.compute",
    "xml_mask": "ranking.pagerank.inverse",
    "xml_teleport": "ranking.pagerank.inverse",
}


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
