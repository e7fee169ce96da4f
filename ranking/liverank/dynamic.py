"""The dynamic LiveRanks of §2.5: BFS and active in-degree (AI), updated at every answer.

Both start by testing the training set Z (which bootstraps the knowledge of a and keeps them
from focusing on one corner of the graph), then follow the answers: a live page vouches for
the pages it links to. Both fall back on static PageRank order when they run out of leads.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from ranking.liverank.graph import LinkGraph
from ranking.liverank.orderings import positions
from ranking.liverank.session import UNTESTED, LiveRankSession, OrderCursor


def _unique_in_first_seen_order(pages: np.ndarray) -> np.ndarray:
    _, first = np.unique(pages, return_index=True)
    return pages[np.sort(first)]


class BreadthFirstSession(LiveRankSession):
    """BFS (§2.5): a FIFO queue started with Z; a live page enqueues its untested children.

    When the queue is empty, the untested page of highest static PageRank comes next (the
    paper's footnote 1: other fallbacks made no significant difference).
    """

    name = "bfs"
    natural_batch = 1

    def __init__(self, graph: LinkGraph, sample: np.ndarray, pagerank_order: np.ndarray) -> None:
        super().__init__(graph.n_pages)
        self._graph = graph
        self._queue: deque[int] = deque(np.asarray(sample).tolist())
        self._queued = np.zeros(graph.n_pages, dtype=bool)
        self._queued[np.asarray(sample)] = True
        self._fallback = OrderCursor(pagerank_order)

    def _choose(self, size: int) -> np.ndarray:
        chosen: list[int] = []
        while self._queue and len(chosen) < size:
            page = self._queue.popleft()
            if self.state[page] == UNTESTED:
                chosen.append(page)
        if chosen:
            return np.array(chosen, dtype=np.int64)
        return self._fallback.take(self.state, size)

    def _learn(self, url_ids: np.ndarray, alive: np.ndarray) -> None:
        children = self._graph.successors_of_many(url_ids[alive])
        children = children[(self.state[children] == UNTESTED) & ~self._queued[children]]
        children = _unique_in_first_seen_order(children)
        self._queued[children] = True
        self._queue.extend(children.tolist())


class ActiveIndegreeSession(LiveRankSession):
    """AI (§2.5): the untested page with the most live parents found so far comes next.

    Each page's activity score counts the pages found alive that link to it; it starts at
    zero and is raised as answers arrive. Z is tested first; afterwards the highest score
    wins, ties by highest static PageRank. A heap with lazy deletion keeps each choice at
    O(log n).
    """

    name = "ai"
    natural_batch = 1

    def __init__(self, graph: LinkGraph, sample: np.ndarray, pagerank_order: np.ndarray) -> None:
        super().__init__(graph.n_pages)
        self._graph = graph
        self.activity = np.zeros(graph.n_pages, dtype=np.int64)
        self._pagerank_position = positions(pagerank_order)
        self._sample = OrderCursor(sample)
        self._fallback = OrderCursor(pagerank_order)
        self._heap: list[tuple[int, int, int]] = []

    def _choose(self, size: int) -> np.ndarray:
        chosen = self._sample.take(self.state, size)
        if chosen.size:
            return chosen
        best: list[int] = []
        while self._heap and len(best) < size:
            negative_score, _, page = heapq.heappop(self._heap)
            if self.state[page] == UNTESTED and -negative_score == self.activity[page]:
                best.append(page)
        if best:
            return np.array(best, dtype=np.int64)
        return self._fallback.take(self.state, size)

    def _learn(self, url_ids: np.ndarray, alive: np.ndarray) -> None:
        children = self._graph.successors_of_many(url_ids[alive])
        children = children[self.state[children] == UNTESTED]
        np.add.at(self.activity, children, 1)
        for page in np.unique(children).tolist():
            entry = (-int(self.activity[page]), int(self._pagerank_position[page]), page)
            heapq.heappush(self._heap, entry)
