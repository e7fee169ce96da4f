"""LiveRank: re-check an old repository so that the pages still alive come first (seed 001).

After Huynh, Mathieu and Viennot, "LiveRank: How to Refresh Old Datasets" (Internet
Mathematics 2015). :func:`make_liverank` builds a :class:`LiveRankSession` for any strategy
of :data:`STRATEGIES` over a :class:`LinkGraph`: static orderings (§2.3), sample-based ones
(§2.4) and dynamic ones (§2.5). The caller tests the pages it hands out and records the
answers; :func:`simulate` and :func:`replay` drive a session against known answers, and
:func:`cost` scores an order (§2.1). The PageRank of eq. (1), :func:`personalised_pagerank`,
is the stepping core's power iteration (:class:`LivePageRank`). See docs/liverank.md.

Example
-------
>>> import numpy as np
>>> graph = LinkGraph.from_edges([0, 1, 2, 3], [1, 2, 0, 0])
>>> session = make_liverank(graph, LiveRankSettings(strategy="i"))
>>> simulate(session, np.array([True, True, False, False])).tolist()
[0, 1, 2, 3]
"""

from __future__ import annotations

from ranking.liverank.cost import BENCHMARK_ALPHAS, cost, cost_curve, fetches_needed
from ranking.liverank.drive import (
    ALIVE_ANSWER,
    DEAD_ANSWER,
    UNKNOWN_ANSWER,
    make_liverank,
    replay,
    simulate,
)
from ranking.liverank.dynamic import ActiveIndegreeSession, BreadthFirstSession
from ranking.liverank.errors import InvalidAnswer, LiveRankError, NoLivePages, UnknownStrategy
from ranking.liverank.graph import LinkGraph
from ranking.liverank.orderings import (
    descending_order,
    double_adaptive_scores,
    draw_sample,
    indegree_order,
    live_pagerank,
    order_after_sample,
    positions,
    random_order,
    site_activity_scores,
)
from ranking.liverank.pagerank import DAMPING, LivePageRank, personalised_pagerank
from ranking.liverank.session import LiveRankSession, SampleBasedSession, StaticSession
from ranking.liverank.settings import SAMPLE_KINDS, STRATEGIES, LiveRankSettings

__all__ = [
    "ALIVE_ANSWER",
    "BENCHMARK_ALPHAS",
    "DAMPING",
    "DEAD_ANSWER",
    "SAMPLE_KINDS",
    "STRATEGIES",
    "UNKNOWN_ANSWER",
    "ActiveIndegreeSession",
    "BreadthFirstSession",
    "InvalidAnswer",
    "LinkGraph",
    "LivePageRank",
    "LiveRankError",
    "LiveRankSession",
    "LiveRankSettings",
    "NoLivePages",
    "SampleBasedSession",
    "StaticSession",
    "UnknownStrategy",
    "cost",
    "cost_curve",
    "descending_order",
    "double_adaptive_scores",
    "draw_sample",
    "fetches_needed",
    "indegree_order",
    "live_pagerank",
    "make_liverank",
    "order_after_sample",
    "personalised_pagerank",
    "positions",
    "random_order",
    "replay",
    "simulate",
    "site_activity_scores",
]
