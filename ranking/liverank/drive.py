"""Build a LiveRank session for a strategy, and drive it against answers.

After Huynh, Mathieu and Viennot, "LiveRank: How to Refresh Old Datasets" (Internet
Mathematics 2015, seed 001). :func:`make_liverank` builds a session for any strategy of
:data:`~ranking.liverank.settings.STRATEGIES` over a :class:`LinkGraph`; the caller tests the
pages it hands out and records the answers (see :mod:`ranking.liverank.session`).
:func:`simulate` drives a session against a known truth, :func:`replay` as far as the known
answers go.

Example
-------
>>> import numpy as np
>>> from ranking.liverank import cost
>>> graph = LinkGraph.from_edges([0, 1, 2, 3], [1, 2, 0, 0], hosts=np.array([0, 0, 0, 1]))
>>> alive = np.array([True, True, True, False])
>>> order = simulate(make_liverank(graph, LiveRankSettings(strategy="p")), alive)
>>> order.tolist()
[0, 1, 2, 3]
>>> cost(order, alive, 1.0)
1.0
"""

from __future__ import annotations

import numpy as np

from ranking.errors import InvalidGraph
from ranking.liverank.dynamic import ActiveIndegreeSession, BreadthFirstSession
from ranking.liverank.errors import InvalidAnswer, LiveRankError
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
from ranking.liverank.pagerank import personalised_pagerank
from ranking.liverank.session import LiveRankSession, SampleBasedSession, StaticSession
from ranking.liverank.settings import LiveRankSettings

UNKNOWN_ANSWER, DEAD_ANSWER, ALIVE_ANSWER = -1, 0, 1
"""The codes of a known-answers array for :func:`replay`."""


def make_liverank(
    graph: LinkGraph,
    settings: LiveRankSettings | None = None,
    *,
    pagerank: np.ndarray | None = None,
) -> LiveRankSession:
    """A fresh session ordering ``graph``'s pages by ``settings.strategy``.

    Parameters
    ----------
    graph : LinkGraph
        The old snapshot (ASF needs its hosts).
    settings : LiveRankSettings, optional
        Strategy, sample size z and kind, damping, seed; defaults: P_a^{+/-}, a random 1 %.
    pagerank : numpy.ndarray, optional
        The static PageRank of ``graph`` when the caller already has it (it is the ordering
        P, the tie-break of P_a and AI, and the fallback of BFS); computed when omitted.

    Returns
    -------
    LiveRankSession
        Static (r, i, p), sample-based (pa, pa_pm, asf) or dynamic (bfs, ai).
    """
    settings = settings or LiveRankSettings()
    rng = np.random.default_rng(settings.seed)
    n_pages = graph.n_pages
    strategy = settings.strategy
    if strategy == "r":
        return StaticSession(strategy, random_order(n_pages, rng))
    by_indegree = indegree_order(graph)
    if strategy == "i":
        return StaticSession(strategy, by_indegree)
    if pagerank is None:
        pagerank = personalised_pagerank(graph, damping=settings.damping)
    by_pagerank = descending_order(pagerank)
    if strategy == "p":
        return StaticSession(strategy, by_pagerank)
    sample = draw_sample(
        settings.sample_kind,
        settings.sample_size(n_pages),
        rng=rng,
        pagerank_order=by_pagerank,
        indegree_order=by_indegree,
    )
    if strategy == "bfs":
        return BreadthFirstSession(graph, sample, by_pagerank)
    if strategy == "ai":
        return ActiveIndegreeSession(graph, sample, by_pagerank)

    if strategy == "asf":
        if graph.hosts is None:
            raise InvalidGraph("active-site first (asf) needs each page's host")
        ties = positions(rng.permutation(n_pages))  # within a site, pages come in random order

        def scores(tested: np.ndarray, tested_alive: np.ndarray) -> np.ndarray:
            return site_activity_scores(graph, tested, tested_alive)

    else:
        ties = positions(by_pagerank)
        adaptive = live_pagerank if strategy == "pa" else double_adaptive_scores

        def scores(tested: np.ndarray, tested_alive: np.ndarray) -> np.ndarray:
            return adaptive(graph, tested, tested_alive, damping=settings.damping)

    def adjust(tested: np.ndarray, tested_alive: np.ndarray) -> np.ndarray:
        return order_after_sample(tested, scores(tested, tested_alive), ties)

    return SampleBasedSession(strategy, n_pages, sample, adjust)


def simulate(session: LiveRankSession, alive: np.ndarray, batch_size: int = 0) -> np.ndarray:
    """Drive ``session`` to the end with the known truth ``alive``; return the whole order.

    ``batch_size`` 0 uses the session's natural batch: everything that is ready for static
    and sample-based strategies, one page at a time for dynamic ones (as in §4).
    """
    alive = np.asarray(alive, dtype=bool)
    if alive.shape != (session.n_pages,):
        raise InvalidAnswer(f"{alive.size} answers for {session.n_pages} pages")
    size = batch_size or session.natural_batch or session.n_pages
    batches: list[np.ndarray] = []
    while not session.exhausted:
        batch = session.next_batch(size)
        if not batch.size:
            raise LiveRankError(f"{session.name} handed out nothing though answers are all in")
        session.record_many(batch, alive[batch])
        batches.append(batch)
    return np.concatenate(batches) if batches else np.empty(0, dtype=np.int64)


def replay(session: LiveRankSession, answers: np.ndarray) -> tuple[np.ndarray, bool]:
    """The order ``session`` follows as far as the answers known so far decide it.

    ``answers`` holds one code per page: :data:`ALIVE_ANSWER`, :data:`DEAD_ANSWER` or
    :data:`UNKNOWN_ANSWER`. Batches are handed out as in :func:`simulate`; the replay stops
    after the first batch holding a page whose answer is unknown, since the strategy cannot
    go on without it (a static LiveRank is always complete; a sample-based one needs every
    sample answer; a dynamic one stops at its first unknown page). Returns the order and
    whether it covers every page.
    """
    answers = np.asarray(answers)
    if answers.shape != (session.n_pages,):
        raise InvalidAnswer(f"{answers.size} answers for {session.n_pages} pages")
    size = session.natural_batch or session.n_pages
    batches: list[np.ndarray] = []
    while not session.exhausted:
        batch = session.next_batch(size)
        batches.append(batch)
        if (answers[batch] == UNKNOWN_ANSWER).any():
            break
        session.record_many(batch, answers[batch] == ALIVE_ANSWER)
    order = np.concatenate(batches) if batches else np.empty(0, dtype=np.int64)
    return order, order.size == session.n_pages
