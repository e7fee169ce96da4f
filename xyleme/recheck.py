"""The re-check of an old repository in LiveRank order (LiveRank paper §2.3).

Which of the pages read long ago are still alive? A re-check fetches them again at the
background level (4), most likely alive first: ``p`` orders them by the PageRank of the old
link graph, ``i`` by in-degree, ``r`` at random (the baseline). The adaptive strategies need
the answers of a first sample as they come, which a queue handed over once cannot use.
"""

from __future__ import annotations

import numpy as np

from metadata import Metadata
from ranking.liverank import LiveRankSettings, make_liverank, replay
from ranking.liverank_repository import load_snapshot
from ranking.liverank_settings import STATIC_STRATEGIES

RECHECK_KEY = "recheck"
"""State key of a re-check ordered while no daemon ran (the next daemon queues it)."""


def recheck_order(md: Metadata, strategy: str = "p", limit: int | None = None) -> np.ndarray:
    """The URL-Ids of the read pages in the order a re-check tests them.

    Examples
    --------
    >>> # recheck_order(md, "p", 1000) -> the 1000 pages of highest PageRank, best first
    """
    if strategy not in STATIC_STRATEGIES:
        raise ValueError(f"a re-check strategy is one of {', '.join(STATIC_STRATEGIES)}")
    snapshot = load_snapshot(md)
    if not snapshot.graph.n_pages:
        return np.empty(0, dtype=np.int64)
    session = make_liverank(snapshot.graph, LiveRankSettings(strategy=strategy))
    order, _ = replay(session, snapshot.answers)
    return snapshot.url_ids[order[:limit]]
