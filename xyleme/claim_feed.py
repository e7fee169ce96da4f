"""A crawl worker's queue fed from the store's claims (issue 20, docs/scaleout.md).

Every page a worker fetches is one it claimed (``Crawler.follows_links`` is off: the crawler
queues no link by itself). :meth:`ClaimFeed.feed`, run every few tenths of a second, ends the
claims of the pages whose fetch is committed (``Metadata.finish_claims``: the page is then
due only when the coordinator's refresh pass plans it), and when fewer than half a batch of
polled claims are outstanding, claims a batch of its part's due pages (most overdue first)
and queues them: a page read before as a refresh (level 1, fetched conditionally with the
validators the store holds), a DEAD or redirected one at the background level (4: the
coordinator's refresh pass makes it due every ``dead_recheck_units``), one never read at the
scouting level (3) as the daemon queues its unread pages (it has no validators: looking them
up would cost a round trip to the store per page, on the event loop). A page the crawler
refuses (out of scope, a trap) is postponed a time unit rather than claimed again at once.
The leases of the pages still waiting in the queue are renewed at each heartbeat
(:meth:`ClaimFeed.renew`); a clean stop gives them back (:meth:`ClaimFeed.release`), a
``kill -9`` lets them run out.

The links the worker finds on its own part's hosts do not wait for a claim poll: the feed is
the crawler's ``link_claims``, so they are claimed (the same lease, the same conditions as a
poll's) in the transaction that records them and queued once it commits, as the daemon queues
its links at once; up to ``found_cap`` of them outstanding, the rest wait for a poll. The
links of other parts are only stored.
"""

from __future__ import annotations

import asyncio
import logging
import time

import numpy as np

from metadata import Clock, Metadata
from xyleme import signals
from xyleme.crawler import Crawler, CrawlEvent, Level

log = logging.getLogger(__name__)


class ClaimFeed:
    """Claims of part ``part`` of ``parts`` taken as ``name``, ``batch`` pages at a time for
    ``lease_s`` wall-clock seconds; ``postpone_s`` simulated seconds for a refused page."""

    def __init__(
        self,
        md: Metadata,
        crawler: Crawler,
        clock: Clock,
        name: str,
        part: tuple[int, int],
        *,
        batch: int,
        lease_s: float,
        postpone_s: float,
        found_cap: int | None = None,
    ) -> None:
        self.md = md
        self.crawler = crawler
        self.clock = clock
        self.name = name
        self.part, self.parts = part
        self.batch = batch
        self.lease_s = lease_s
        self.postpone_s = postpone_s
        self.found_cap = 4 * batch if found_cap is None else found_cap
        self.outstanding: set[int] = set()
        """Pages claimed and not yet ended: queued, in flight, or waiting for their commit."""
        self.found: set[int] = set()
        """Those of :attr:`outstanding` claimed as found links (not counted in a poll's batch,
        so the due refreshes are still polled while links flow)."""
        self.read = 0
        """Fetches committed since the worker started (reads, failures, dead pages)."""
        self.claimed = 0
        self._done: list[int] = []
        self.paused = False
        """Set while the operator pauses fetching (``xyleme pause``): no claim is taken."""
        self._turn = asyncio.Lock()  # one look at a time: a give-back never races a claim
        self.running_low = asyncio.Event()
        """Set when fewer than half a batch of claimed pages wait: look now, not at the
        next tick (a page found is then fetched a commit and a claim after its finding)."""
        for signal in (signals.page_fetched, signals.page_failed, signals.page_dead):
            crawler.signals.connect(signal, self._committed)
        crawler.link_claims = self

    def _committed(self, event: CrawlEvent) -> None:
        """A fetch is committed: its claim ends at the next :meth:`feed`."""
        self.read += 1
        if event.result.url_id in self.outstanding:
            self._done.append(event.result.url_id)
            if self._polled() - len(self._done) < self.batch // 2:
                self.running_low.set()

    def _polled(self) -> int:
        """Outstanding claims taken by polls (not found links)."""
        return len(self.outstanding) - len(self.found)

    def claim(self, md: Metadata, url_ids: list[int]) -> list[int]:
        """The crawler's ``link_claims``: claim the found links of this part that are due
        and free, through the crawler's ``md`` in the transaction recording them (its commit
        thread)."""
        room = self.found_cap - len(self.found)
        if self.paused or room <= 0:
            return []
        return md.claim_due(
            self.part,
            self.parts,
            self.name,
            limit=room,
            due_by=self.clock.now(),
            lease_s=self.lease_s,
            among=url_ids,
        )

    def taken(self, url_ids: list[int]) -> None:
        """Found links claimed and committed: outstanding until their fetch commits."""
        self.claimed += len(url_ids)
        self.outstanding.update(url_ids)
        self.found.update(url_ids)

    async def feed(self) -> None:
        """End the committed pages' claims, then claim and queue more if the queue runs low."""
        async with self._turn:
            self.running_low.clear()
            await self.finish()
            if not self.paused:
                await self._claim()

    async def give_back(self) -> int:
        """End the committed pages' claims and give the others back (the crawler stopped:
        a pause); how many were given back."""
        async with self._turn:
            return await asyncio.to_thread(self.release)

    async def _claim(self) -> None:
        room = self.batch - self._polled()
        if room < max(1, self.batch // 2):
            return
        now = self.clock.now()
        url_ids = await asyncio.to_thread(
            self.md.claim_due,
            self.part,
            self.parts,
            self.name,
            limit=room,
            due_by=now,
            lease_s=self.lease_s,
        )
        if url_ids:
            self.claimed += len(url_ids)
            self.outstanding.update(url_ids)
            await self._queue(url_ids, now)

    async def finish(self) -> int:
        """End the claims of the pages whose fetch is committed; how many."""
        done, self._done = self._done, []
        if not done:
            return 0
        await asyncio.to_thread(self.md.finish_claims, done, self.name)
        self._forget(done)
        return len(done)

    def _forget(self, url_ids: list[int]) -> None:
        self.outstanding.difference_update(url_ids)
        self.found.difference_update(url_ids)

    async def _queue(self, url_ids: list[int], now: float) -> None:
        pages = await asyncio.to_thread(self.md.claimed_pages, url_ids)
        refused = [url_id for url_id, url, _, _ in pages if self.crawler.link_refusal(url)]
        gone = set(url_ids) - {url_id for url_id, _, _, _ in pages}
        refused_set = set(refused)
        levels: dict[int, list[int]] = {Level.REFRESH: [], Level.SCOUTING: [], Level.BACKGROUND: []}
        for url_id, _, read, background in pages:
            if url_id not in refused_set:
                level = (
                    Level.BACKGROUND if background else Level.REFRESH if read else Level.SCOUTING
                )
                levels[level].append(url_id)
        batches = [
            (np.asarray(ids, dtype=np.int64), level, np.zeros(len(ids)))
            for level, ids in levels.items()
            if ids
        ]
        if batches:
            await self.crawler.submit_plan(batches)
        later = [*refused, *gone]  # looked at again a unit later (the scope may widen)
        if refused:
            log.info("%d claimed pages refused by the scope: postponed a time unit", len(refused))
        if later:
            await asyncio.to_thread(
                self.md.finish_claims, later, self.name, not_before=now + self.postpone_s
            )
            self._forget(later)

    async def renew(self) -> None:
        """Extend the leases of the pages still outstanding (at each heartbeat)."""
        if self.outstanding:
            until = time.time() + self.lease_s
            await asyncio.to_thread(self.md.renew_claims, list(self.outstanding), self.name, until)

    def release(self) -> int:
        """At a clean stop, after the crawler's last commit: end the committed pages' claims
        and give the others back (still due, the next worker of the part claims them)."""
        done, self._done = self._done, []
        if done:
            self.md.finish_claims(done, self.name)
            self._forget(done)
        released = self.md.release_claims(list(self.outstanding), self.name)
        self.outstanding.clear()
        self.found.clear()
        return released
