"""Page selection strategies for an OPIC crawl (OPIC paper §3.1): Greedy, Random, Cycle.

OPIC's estimates do not depend on the order pages are read in, as long as every page is
read again and again; the order only changes how fast they converge. A strategy answers one
question, :meth:`PageSelector.next_page`: which known page to read next. The crawler (or a
simulation) reads it and reports the fetch to :meth:`ranking.opic.OPIC.on_fetch`; a strategy
that is asked again before that answers the same page (Greedy) or moves on (Random, Cycle).
"""

from __future__ import annotations

import heapq
from typing import Protocol

import numpy as np

from ranking.opic.cash import OPIC
from ranking.opic.errors import NoPages


class PageSelector(Protocol):
    """The one question a crawler asks of a selection strategy."""

    def next_page(self) -> int:
        """The URL-Id to read next; raise :class:`NoPages` when no page is known."""
        ...


class Greedy:
    """Read the page with the most cash next (§3.1, close to Xyleme's strategy).

    A lazy max-heap of ``(key, page)`` per distinct weight, where a page's cash is
    ``key + weight·credit`` (see :meth:`ranking.opic.OPIC.cash_keys`): the virtual page's
    payments raise every page of one weight by the same amount and so keep each heap's
    order, and a page's key only changes when OPIC reports it. Changed pages are pushed
    again; an entry whose key no longer matches the page's is stale and skipped when it
    surfaces. Heaps are rebuilt once they hold many stale entries. ``next_page`` costs
    O(log n) amortised, never a scan.

    Examples
    --------
    >>> opic = OPIC(pages=3)
    >>> greedy = Greedy(opic)
    >>> opic.on_fetch(0, [2])
    >>> greedy.next_page()
    2
    """

    def __init__(self, opic: OPIC) -> None:
        self._opic = opic
        self._heaps: dict[float, list[tuple[float, int]]] = {}
        self._entries = 0
        self._rebuild()
        opic.watch_cash(self._cash_changed)

    def next_page(self) -> int:
        best_page, best_cash = -1, -np.inf
        credit = self._opic.credit
        for weight, heap in self._heaps.items():
            if weight == 0:  # placeholders, never selected
                continue
            top = self._valid_top(weight, heap)
            if top is not None and -top[0] + weight * credit > best_cash:
                best_page, best_cash = top[1], -top[0] + weight * credit
        if best_page < 0:
            raise NoPages()
        return best_page

    def _valid_top(self, weight: float, heap: list[tuple[float, int]]) -> tuple[float, int] | None:
        """The heap's top entry after dropping stale ones, or ``None`` if it empties."""
        while heap:
            negative_key, page = heap[0]
            if self._opic.cash_key(page) == (weight, -negative_key):
                return heap[0]
            heapq.heappop(heap)
            self._entries -= 1
        return None

    def _cash_changed(self, ids: np.ndarray) -> None:
        if self._entries > 4 * self._opic.pages + 1024:
            self._rebuild()
            return
        weights, keys = self._opic.cash_keys(ids)
        for page, weight, key in zip(ids.tolist(), weights.tolist(), keys.tolist(), strict=True):
            heapq.heappush(self._heaps.setdefault(weight, []), (-key, page))
        self._entries += len(ids)

    def _rebuild(self) -> None:
        pages = np.arange(self._opic.pages)
        weights, keys = self._opic.cash_keys(pages)
        self._heaps = {}
        for weight in np.unique(weights).tolist():
            chosen = weights == weight
            heap = list(zip((-keys[chosen]).tolist(), pages[chosen].tolist(), strict=True))
            heapq.heapify(heap)
            self._heaps[weight] = heap
        self._entries = self._opic.pages


class RandomSelection:
    """Read a known page chosen uniformly at random (§3.1, Random).

    Draws URL-Ids until one is a known page: cheap while placeholders are few.
    """

    def __init__(self, opic: OPIC, seed: int | None = None) -> None:
        self._opic = opic
        self._rng = np.random.default_rng(seed)

    def next_page(self) -> int:
        if self._opic.known_pages == 0:
            raise NoPages()
        while True:
            page = int(self._rng.integers(self._opic.pages))
            if self._opic.is_known(page):
                return page


class Cycle:
    """Read the known pages in URL-Id order, round and round (§3.1, Cycle).

    Pages discovered meanwhile join the current round when the cursor reaches them.
    """

    def __init__(self, opic: OPIC) -> None:
        self._opic = opic
        self._cursor = 0

    def next_page(self) -> int:
        if self._opic.known_pages == 0:
            raise NoPages()
        while True:
            if self._cursor >= self._opic.pages:
                self._cursor = 0
            page = self._cursor
            self._cursor += 1
            if self._opic.is_known(page):
                return page


STRATEGIES = {"greedy": Greedy, "random": RandomSelection, "cycle": Cycle}
"""Strategy classes by name, for settings and the command line."""
