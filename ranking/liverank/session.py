"""A LiveRank as a session: it hands out pages to test and learns from their answers.

Every strategy, static or not, is driven the same way, by the re-check, the benchmark and the
tests alike::

    while not session.exhausted:
        batch = session.next_batch(100)          # page ids, never handed out before
        ...test them (HEAD/GET through the crawler)...
        session.record_many(batch, alive)        # or session.record(url_id, alive) one by one

Static LiveRanks (§2.3) ignore the answers; sample-based ones (§2.4) first hand out the sample
Z, wait for all its answers, then hand out the rest in the adjusted order; dynamic ones (§2.5,
:mod:`ranking.liverank.dynamic`) update their order at every answer.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ranking.liverank.errors import InvalidAnswer

UNTESTED, PENDING, DEAD, ALIVE = 0, 1, 2, 3
"""A page's state in a session: not handed out yet, handed out, answered dead, alive."""


class LiveRankSession:
    """The bookkeeping every strategy shares: which pages were handed out and answered.

    Subclasses implement :meth:`_choose` (up to ``size`` untested pages, best first) and may
    override :meth:`_learn` (called with each batch of answers).
    """

    name = "?"
    natural_batch = 0
    """The batch size a simulation should use: 0 means "as many as are ready" (static and
    sample-based strategies), 1 means one page at a time (dynamic strategies, §2.5)."""

    def __init__(self, n_pages: int) -> None:
        self.state = np.full(n_pages, UNTESTED, dtype=np.int8)
        self._untested = n_pages
        self._pending = 0

    @property
    def n_pages(self) -> int:
        """How many pages the session orders."""
        return len(self.state)

    @property
    def exhausted(self) -> bool:
        """True when every page has been handed out and answered."""
        return self._untested == 0 and self._pending == 0

    def next_batch(self, size: int = 1) -> np.ndarray:
        """Up to ``size`` pages to test next, best first; they become pending.

        Returns fewer pages when all are handed out, and none while the strategy waits for
        answers (a sample-based strategy before the whole sample is answered): an empty batch
        while :attr:`exhausted` is False means "record the pending answers first".
        """
        if size < 1:
            raise ValueError(f"a batch holds at least one page, not {size}")
        chosen = self._choose(size)
        self.state[chosen] = PENDING
        self._untested -= chosen.size
        self._pending += chosen.size
        return chosen

    def record(self, url_id: int, alive: bool) -> None:
        """Take the answer for one pending page: alive (it still exists) or dead."""
        self.record_many(np.array([url_id]), np.array([alive]))

    def record_many(self, url_ids: np.ndarray, alive: np.ndarray) -> None:
        """Take the answers for several pending pages at once (one boolean per page)."""
        url_ids = np.asarray(url_ids, dtype=np.int64).ravel()
        alive = np.broadcast_to(np.asarray(alive, dtype=bool), url_ids.shape)
        if url_ids.size and (url_ids.min() < 0 or url_ids.max() >= self.n_pages):
            raise InvalidAnswer(f"an answer names a page outside 0…{self.n_pages - 1}")
        if (self.state[url_ids] != PENDING).any() or np.unique(url_ids).size != url_ids.size:
            stray = url_ids[self.state[url_ids] != PENDING]
            raise InvalidAnswer(
                f"answers for pages that are not pending (never handed out, or answered "
                f"twice): {stray[:5].tolist()}"
            )
        self.state[url_ids] = np.where(alive, ALIVE, DEAD)
        self._pending -= url_ids.size
        self._learn(url_ids, alive)

    def _choose(self, size: int) -> np.ndarray:
        raise NotImplementedError

    def _learn(self, url_ids: np.ndarray, alive: np.ndarray) -> None:
        """Static strategies learn nothing from answers."""


class OrderCursor:
    """Walks an ordering, skipping pages a session has already handed out."""

    def __init__(self, order: np.ndarray) -> None:
        self.order = np.asarray(order, dtype=np.int64)
        self.position = 0

    def take(self, state: np.ndarray, size: int) -> np.ndarray:
        """The next ``size`` untested pages of the ordering (fewer at its end)."""
        taken: list[np.ndarray] = []
        needed = size
        while needed and self.position < len(self.order):
            chunk = self.order[self.position : self.position + max(2 * needed, 64)]
            fresh = np.flatnonzero(state[chunk] == UNTESTED)[:needed]
            taken.append(chunk[fresh])
            needed -= fresh.size
            self.position += int(fresh[-1]) + 1 if needed == 0 else chunk.size
        return np.concatenate(taken) if taken else np.empty(0, dtype=np.int64)


class StaticSession(LiveRankSession):
    """A static LiveRank (§2.3): a fixed ordering, computed before any test."""

    def __init__(self, name: str, order: np.ndarray) -> None:
        super().__init__(len(order))
        self.name = name
        self._cursor = OrderCursor(order)

    def _choose(self, size: int) -> np.ndarray:
        return self._cursor.take(self.state, size)


class SampleBasedSession(LiveRankSession):
    """A sample-based LiveRank (§2.4): test Z, then the rest in an order adjusted on a(Z).

    ``adjust(sample, sample_alive)`` returns the order of the pages outside the sample; it is
    called once, when the next batch is asked for after the last sample answer. Until then,
    once the sample is all handed out, :meth:`next_batch` returns nothing.
    """

    def __init__(
        self,
        name: str,
        n_pages: int,
        sample: np.ndarray,
        adjust: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> None:
        super().__init__(n_pages)
        self.name = name
        self.sample = np.asarray(sample, dtype=np.int64)
        self._adjust = adjust
        self._cursor = OrderCursor(self.sample)
        self._adjusted = False

    def _choose(self, size: int) -> np.ndarray:
        chosen = self._cursor.take(self.state, size)
        if chosen.size or self._adjusted:
            return chosen
        if (self.state[self.sample] == PENDING).any():
            return chosen
        sample_alive = self.state[self.sample] == ALIVE
        self._cursor = OrderCursor(self._adjust(self.sample, sample_alive))
        self._adjusted = True
        return self._cursor.take(self.state, size)
