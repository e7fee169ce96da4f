"""The crawler's writer: finished fetches committed to the metadata in batches (URL-Ids, then
fetch records and the links they refused, in one transaction), then, after the commit, the
signals fired, the bodies handed to the loader and the found links sent to admission.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass
from typing import Protocol

from loader import FetchedBody
from metadata import FetchResult, Metadata, PageType
from xyleme import signals
from xyleme.crawler.classify import Outcome
from xyleme.crawler.frontier import Level, Request

log = logging.getLogger(__name__)


UNRECORDED = object()  # a fetch the metadata refused: no event follows it


class LinkClaims(Protocol):
    """A crawl worker's claims of the links it finds on its own part's hosts
    (``Crawler.link_claims``): the links skip the store's claim poll, as the daemon queues
    its links at once, and each fetch it makes is still of a page it claimed."""

    def claim(self, metadata: Metadata, url_ids: list[int]) -> list[int]:
        """Claim those of ``url_ids`` its part may fetch now through ``metadata``, inside the
        transaction that records them (any thread); the ids claimed."""

    def taken(self, url_ids: list[int]) -> None:
        """Those claims committed (on the event loop, before their requests are queued)."""


@dataclass(slots=True)
class CrawlEvent:
    """What listeners of the crawler's signals receive, after the commit.

    ``robots`` holds all the page's ``<meta name=robots>`` directives (noindex, nofollow,
    noarchive…) and ``canonical`` its ``rel=canonical`` URL as written; the metadata records
    the honoured ones (``result.robots``) and an in-scope other canonical page
    (``result.canonical_to``).
    """

    url: str
    result: FetchResult
    level: Level
    changed: bool | None = None
    robots: frozenset[str] = frozenset()
    canonical: str | None = None


class ResultWriter:
    """The Crawler's batched writes and post-commit events (a mixin of
    :class:`~xyleme.crawler.Crawler`, which supplies the outbox, ``metadata``, ``signals``,
    ``stats`` and the loader lane).
    """

    async def _write_loop(self) -> None:
        """Commit finished fetches in batches, then fire events and queue what they found."""
        loop = asyncio.get_running_loop()
        settings = self.settings
        last_gc = loop.time()
        done = False
        while not done:
            first = await self._outbox.get()
            batch = [] if first is None else [first]
            done = first is None
            deadline = loop.time() + settings.write_interval
            while not done and len(batch) < settings.write_batch:
                try:
                    item = self._outbox.get_nowait()
                except asyncio.QueueEmpty:
                    remaining = deadline - loop.time()
                    starving = bool(self._waiting_workers)  # idle workers: new links may help
                    if remaining <= 0 or self._busy <= len(batch) or starving:
                        break
                    try:
                        item = await asyncio.wait_for(self._outbox.get(), remaining)
                    except TimeoutError:
                        break
                if item is None:
                    done = True
                else:
                    batch.append(item)
            self._writer_took.set()
            if batch:
                await self._commit(batch)
            if loop.time() - last_gc > settings.idle_slot_seconds:
                self.frontier.collect_idle(settings.idle_slot_seconds)
                last_gc = loop.time()

    async def _commit(self, batch: list[Outcome]) -> None:
        # On the loop's thread: a writer thread would hold the GIL while the loop's socket
        # calls wait for it (measured: half the throughput). A store across the network
        # (``commits_in_thread``) waits for its server instead, the GIL released: then the
        # fetchers run meanwhile.
        try:
            if self.commits_in_thread:
                verdicts = await asyncio.to_thread(self._record, batch)
            else:
                verdicts = self._record(batch)
        except Exception:
            log.exception("batch of %d fetch results refused: recording one by one", len(batch))
            verdicts = [self._record_alone(outcome) for outcome in batch]
        self._queue_claimed()
        for count, (outcome, changed) in enumerate(zip(batch, verdicts, strict=True), 1):
            if changed is not UNRECORDED:
                await self._after_commit(outcome, changed)
            outcome.discard_body()  # a body the loader did not take
            if count % self.settings.commit_slice == 0:
                await asyncio.sleep(0)  # events and hand-offs in slices: the fetchers run
        self._busy -= len(batch)
        self._check_idle()

    def _record_alone(self, outcome: Outcome) -> object:
        """Record one outcome in its own transactions; a failure is logged with its URL."""
        try:
            return self._record([outcome])[0]
        except Exception:
            log.exception("could not record the fetch of %s", outcome.request.url)
            self.stats.count_error("metadata")
            return UNRECORDED

    def _record(self, batch: list[Outcome]) -> list[bool | None]:
        """URL-Ids for pages, children and redirects, then the fetch results with the links
        they refused: two transactions for the whole batch."""
        metadata = self.metadata
        ids = self._url_ids
        wanted: list[str] = []
        for outcome in batch:
            if outcome.request.url_id is None and outcome.request.url not in ids:
                wanted.append(outcome.request.url)
            if outcome.children:
                wanted.extend(url for url in outcome.children if url not in ids)
            if outcome.canonical_to is not None and outcome.canonical_to not in ids:
                wanted.append(outcome.canonical_to)
        if wanted:
            wanted = list(dict.fromkeys(wanted))
            self._remember_ids(wanted, metadata.ids_for(wanted, canonical=True))
        results, refusals = [], []
        for outcome in batch:
            request, result = outcome.request, outcome.result
            if request.url_id is None:
                request.url_id = ids[request.url]
            result.url_id = request.url_id
            if outcome.children is not None:
                result.children = [ids[url] for url in outcome.children]
            if outcome.redirect is not None:
                result.redirect_to = ids[outcome.redirect]
            if outcome.canonical_to is not None:
                result.canonical_to = ids[outcome.canonical_to]
            refusals += [(url, reason, request.url_id) for url, reason in outcome.rejects]
            results.append(result)
        with metadata.transaction():  # the refused links commit with their pages' records
            metadata.reject_many(refusals)
            verdicts = metadata.record_fetches(results)
            found = self._found_links(batch) if self.link_claims is not None else {}
            claimed = self.link_claims.claim(metadata, list(found)) if found else []
        self._claimed.extend(found[url_id] for url_id in claimed)  # committed: queued next
        return verdicts

    def _found_links(self, batch: list[Outcome]) -> dict[int, Request]:
        """The links the batch's pages would scout (``_after_commit``), as requests by URL-Id."""
        ids, found = self._url_ids, {}
        for outcome in batch:
            request = outcome.request
            if outcome.follow and request.depth < self.settings.max_scout_depth:
                for url in outcome.follow:
                    url_id = ids.get(url)
                    if url_id is not None and url_id not in found:
                        found[url_id] = Request(
                            url,
                            Level.SCOUTING,
                            url_id=url_id,
                            referrer=request.url_id,
                            depth=request.depth + 1,
                        )
        return found

    def _queue_claimed(self) -> None:
        """Queue the found links the last commit claimed (``link_claims``)."""
        if self._claimed:
            claimed, self._claimed = self._claimed, []
            self.link_claims.taken([request.url_id for request in claimed])
            for request in claimed:
                self.frontier.push(request)

    def _remember_ids(self, urls: list[str], url_ids: list[int | None]) -> None:
        """Keep recent URL -> URL-Id answers (they never change); forget the oldest half
        when ``id_cache_size`` is reached, so memory stays bounded."""
        ids = self._url_ids
        if len(ids) + len(urls) > self.settings.id_cache_size:
            for url in list(itertools.islice(ids, len(ids) // 2 + len(urls))):
                del ids[url]
        ids.update(zip(urls, url_ids, strict=True))

    async def _after_commit(self, outcome: Outcome, changed: bool | None) -> None:
        request, result = outcome.request, outcome.result
        self.stats.count_response(result.status, result.page_type.value)
        for _, reason in outcome.rejects:
            self.stats.count_rejected(reason)
        if changed:
            self.stats.changed += 1
        self._fire(outcome, changed)
        # A scouting redirect follows the seen-URL table like any link; a module's request
        # (a refresh, the loader's DTD) wants the target itself, seen or not.
        redirect = outcome.redirect if self.follows_links else None
        is_new = redirect is not None and self.seen.add(redirect)
        if redirect is not None and (is_new or request.level != Level.SCOUTING):
            target = Request(
                redirect,
                request.level,
                request.score,
                referrer=request.url_id,
                depth=request.depth,
                redirects=(*request.redirects, request.url),
                dependency=request.dependency,
                reload=request.reload,
                sitemap=request.sitemap,
            )
            self.frontier.push(target)
        if outcome.follow and request.depth < self.settings.max_scout_depth:
            self._scout(outcome.follow, request.url_id, request.depth)
        if self._lane is not None:
            if outcome.body is not None:
                await self._lane.room(self.settings.max_pending_loads)
            self._hand_to_loader(outcome, changed)

    def _fire(self, outcome: Outcome, changed: bool | None) -> None:
        result = outcome.result
        if result.page_type is PageType.DEAD:
            chosen = [signals.page_dead]
        elif result.page_type is PageType.ERROR:
            chosen = [signals.page_failed]
        else:
            chosen = (
                [signals.page_fetched, signals.page_changed] if changed else [signals.page_fetched]
            )
        manager = self.signals
        if not any(manager.has_listeners(signal) for signal in chosen):
            return
        event = CrawlEvent(
            outcome.request.url,
            result,
            outcome.request.level,
            changed,
            outcome.robots,
            outcome.canonical,
        )
        for signal in chosen:
            manager.send_catch_log(signal, event)

    def _hand_to_loader(self, outcome: Outcome, changed: bool | None) -> None:
        """Queue what the loader must see: a new or changed XML body, any body it asked for
        (a DTD or entity, under the URL it asked for), or the failure of what it asked for."""
        request, result = outcome.request, outcome.result
        url_id, url = result.url_id, request.url
        if request.dependency and request.redirects:  # the loader waits on the first URL
            url = request.redirects[0]
            url_id = self.metadata.id_for(url, create=False) or url_id
        if request.dependency and result.page_type in (PageType.ERROR, PageType.DEAD):
            self._lane.fail(url_id, url, result.reason or "fetch failed")
        elif outcome.body is not None and request.dependency:  # straight back to the loader
            self._lane.dependency(url_id, url, outcome.body, result.fetched_at, request.depth)
            outcome.body = None  # the lane owns it now
        elif outcome.body is not None and (changed is not False or request.reload):
            fetched = FetchedBody(
                url_id, url, outcome.body, outcome.headers, result.fetched_at, result.md5
            )
            self._lane.load(fetched, request.depth)
            outcome.body = None
