"""A crawl worker's part of OPIC (OPIC §4.1, :mod:`xyleme.jobs.opic_part`; issue 20).

Each committed fetch of the worker's part is credited to its :class:`~xyleme.jobs.PartOPIC`,
whose transfers and checkpoint are flushed through the store every few seconds and at the
stop. Nothing of it waits for the store on the event loop, where the fetches run: a fetch
whose children the store must tell (an XML page: its loader records the links) and every
fetch committed while a flush runs are kept aside, and credited in the flush's thread, the
children read there, before the flush itself. The loop never credits while that thread
works (it only appends to the list set aside), so the part's arrays have one writer at a
time. A fetch credited late is credited before the flush that makes it durable, as one
credited at once: a ``kill -9`` loses the reads since the last flush either way.
"""

from __future__ import annotations

import asyncio

import numpy as np

from metadata import FetchResult, Metadata, PageType
from xyleme.config import Config
from xyleme.crawler import Crawler
from xyleme.jobs import PartOPIC, PartOPICListener


class DeferringListener(PartOPICListener):
    """:class:`PartOPICListener` that sets aside the fetches it cannot credit without the
    store (or while a flush runs) for :meth:`credit_set_aside`."""

    def __init__(self, part: PartOPIC, md: Metadata, crawler: Crawler) -> None:
        super().__init__(part, md, events=crawler.signals)
        self.set_aside: list[FetchResult] = []
        self.flushing = False
        self._stored: dict[int, np.ndarray] = {}  # children read for credit_set_aside

    def __call__(self, result: FetchResult) -> None:
        if self.flushing or needs_the_store(result):
            self.set_aside.append(result)
        else:
            super().__call__(result)

    def credit_set_aside(self, results: list[FetchResult]) -> None:
        """Credit ``results``, the children of those that need the store read in one query
        (one round trip a flush, not one per XML page)."""
        asked = [result.url_id for result in results if needs_the_store(result)]
        found = self.links.children_many(asked) if asked else {}
        self._stored = {url_id: found.get(url_id, NO_CHILDREN) for url_id in asked}
        try:
            for result in results:
                super().__call__(result)
        finally:
            self._stored = {}

    def children_of(self, result: FetchResult) -> np.ndarray:
        stored = self._stored.get(result.url_id) if needs_the_store(result) else None
        return super().children_of(result) if stored is None else stored.astype(np.int64)


NO_CHILDREN = np.zeros(0, dtype=np.int64)


def needs_the_store(result: FetchResult) -> bool:
    """Whether OPIC reads this fetch's children from the store (``children_of``)."""
    return (
        result.page_type not in (PageType.ERROR, PageType.DEAD)
        and result.children is None
        and result.redirect_to is None
    )


class WorkerOPIC:
    """The worker's part: credited on each committed fetch, flushed every ``heartbeat_s`` (in
    a thread, :meth:`flush`) and at the stop (:meth:`last_flush`); the pages'
    ``opic_cash``/``opic_importance`` columns, most of a flush's cost, are written every
    ``SCORES_EVERY`` flushes and at the stop."""

    SCORES_EVERY = 10

    def __init__(self, md: Metadata, config: Config, crawler: Crawler, part: int, parts: int):
        self.md = md
        self.part = PartOPIC.restore(md, part, parts, config.opic)
        self.listener = DeferringListener(self.part, md, crawler)
        self.flushes = 0

    async def flush(self) -> None:
        """Credit the fetches set aside, send the outbox, take this part's transfers, commit
        the checkpoint, in a thread. A failed flush leaves the part's memory ahead of the
        store (:class:`~xyleme.jobs.PartStale`): the worker stops with the reason and its
        restart restores the part, as after a crash."""
        listener = self.listener
        listener.flushing = True
        taken, listener.set_aside = listener.set_aside, []
        try:
            await asyncio.to_thread(self._credit_and_flush, taken, last=False)
        finally:
            listener.flushing = False
        late, listener.set_aside = listener.set_aside, []
        for result in late:  # committed while the thread worked: credit those it can now
            listener(result)

    def last_flush(self) -> None:
        """The stop's flush, scores included (after the crawler's last commit)."""
        taken, self.listener.set_aside = self.listener.set_aside, []
        self._credit_and_flush(taken, last=True)

    def _credit_and_flush(self, taken: list[FetchResult], *, last: bool) -> None:
        self.listener.credit_set_aside(taken)
        self.flushes += 1
        self.part.flush(self.md, scores=last or self.flushes % self.SCORES_EVERY == 0)
