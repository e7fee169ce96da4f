"""Which URLs the crawler takes in (paper §3): the submission API, the scope, trap and suffix
verdicts, the seen-URL table (and its file), the per-host page budget, the bookkeeping of
every refused URL with its reason (``Metadata.reject``), a crawl worker's claims of the links
it finds, and the loader's requests for DTDs and entities (each once until its fetch ends).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from conventions import host_key
from loader import Loader, LoaderSettings, LoadOutcome
from metadata import URL_TOO_LONG, InvalidURL, canonicalize_url
from xyleme.crawler.frontier import Level, Request
from xyleme.crawler.scope import Scope
from xyleme.crawler.seen import SeenURLs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loader import LoadResult
    from metadata import Metadata
    from xyleme.crawler.classify import Outcome

log = logging.getLogger(__name__)


PLAN_SLICE = 256
"""Pages of a refresh plan admitted between two turns of the event loop."""

SEEN_FILE = "crawler-seen.u64"
"""The saved seen-URL table, next to metadata.db (8 bytes per slot, see SeenURLs)."""


class LinkClaims(Protocol):
    """A crawl worker's claims of the links it finds on its own part's hosts
    (``Crawler.link_claims``): the links skip the store's claim poll, as the daemon queues
    its links at once, and each fetch it makes is still of a page it claimed."""

    def claim(self, metadata: Metadata, url_ids: list[int]) -> list[int]:
        """Claim those of ``url_ids`` its part may fetch now through ``metadata``, inside the
        transaction that records them (any thread); the ids claimed."""

    def taken(self, url_ids: list[int]) -> None:
        """Those claims committed (on the event loop, before their requests are queued)."""


class LinkAdmission:
    """The Crawler's link admission (a mixin of :class:`~xyleme.crawler.Crawler`, which supplies
    ``metadata``, ``settings``, ``stats``, ``frontier``, ``robots``, ``seen`` and the guards).
    """

    @property
    def scope(self) -> Scope:
        """What may be fetched; a new scope forgets the verdicts cached under the old one."""
        return self._scope

    @scope.setter
    def scope(self, scope: Scope) -> None:
        self._scope = scope
        # A link recurs on many pages: its verdict is remembered (the hot path's second cost).
        self._link_refusal = functools.lru_cache(maxsize=1 << 16)(self._refusal)

    def _vouches_for(self, host: str, address: str) -> bool:
        return self._scope.vouches_for(host, address)

    def submit(
        self,
        url_or_id: str | int,
        level: int = Level.SCOUTING,
        score: float = 0.0,
        *,
        referrer: int | None = None,
        reload: bool = False,
        sitemap: bool = False,
    ) -> bool:
        """Queue a URL (or a known URL-Id) at a level, ordered in it by ``score`` (higher first).

        The one submission API of every module (paper §3's five levels). Returns False when
        the URL is refused — invalid, out of scope, a trap or an unwanted suffix, each
        recorded with ``Metadata.reject`` and its reason — or already queued as urgently.
        An unknown URL-Id raises :class:`metadata.UnknownPage` (the caller's mistake).
        ``reload`` reads the page for the loader even if unchanged (``Request.reload``);
        ``sitemap`` reads it as a sitemap the site names, never refused by its suffix
        (``Request.sitemap``), now and at every later read of the page (``Metadata.
        mark_sitemaps``: a URL-Id or URL submitted alone, a refresh, is read as one again).
        """
        level = Level(level)
        if isinstance(url_or_id, int):
            return self._admit(
                self.metadata.url_of(url_or_id), url_or_id, level, score, referrer, reload, sitemap
            )
        try:
            url = canonicalize_url(url_or_id)
        except InvalidURL as error:
            self._reject_now(url_or_id, error.reason, referrer)
            return False
        return self._admit(url, None, level, score, referrer, reload, sitemap)

    async def submit_plan(self, batches: Sequence[tuple[np.ndarray, int, np.ndarray]]) -> int:
        """Queue a refresh plan, ``(url_ids, level, scores)`` per batch, in one call.

        The :class:`refresh.scheduler.CrawlQueue` of the refresh pass: the URLs of every batch
        are read in one query (``submit`` reads one per URL-Id), then each page is admitted as
        ``submit`` would, the fetchers running between slices of ``PLAN_SLICE`` pages (a
        page's scope, trap and suffix checks cost ~50 µs: 20,000 at once would hold the
        loop for a second). Returns how many requests were queued.
        """
        ids = [np.asarray(url_ids, dtype=np.int64) for url_ids, _, _ in batches]
        urls = iter(self.metadata.urls_of(np.concatenate(ids).tolist() if ids else []))
        self._sitemaps = self.metadata.sitemap_urls()  # with those other workers marked
        queued = admitted = 0
        for url_ids, (_, level, scores) in zip(ids, batches, strict=True):
            level = Level(level)
            for url_id, score in zip(url_ids.tolist(), np.asarray(scores).tolist(), strict=True):
                queued += self._admit(next(urls), url_id, level, score, None, False)
                admitted += 1
                if admitted % PLAN_SLICE == 0:
                    await asyncio.sleep(0)
        return queued

    def _admit(
        self,
        url: str,
        url_id: int | None,
        level: Level,
        score: float,
        referrer: int | None,
        reload: bool,
        sitemap: bool = False,
    ) -> bool:
        """Queue a canonical URL unless scope, trap or suffix refuse it (recorded then); a
        page once marked as a sitemap is read as one whoever asks for it."""
        sitemap = sitemap or url in self._known_sitemaps()
        refusal = self._refusal(url, any_suffix=level == Level.DEPENDENCY or sitemap)
        if refusal is not None:
            self._reject_now(url, refusal, referrer)
            return False
        self.seen.add(url)
        if sitemap:
            self._mark_sitemap(url, url_id)
        request = Request(
            url,
            level,
            score,
            url_id=url_id,
            referrer=referrer,
            dependency=level == 0,
            reload=reload,
            sitemap=sitemap,
        )
        return self.frontier.push(request)

    def _known_sitemaps(self) -> set[str]:
        if self._sitemaps is None:
            self._sitemaps = self.metadata.sitemap_urls()
        return self._sitemaps

    def _mark_sitemap(self, url: str, url_id: int | None) -> None:
        """Keep with the page that it is a sitemap (a refresh, which names only its URL-Id,
        or a later run, reads it as one again)."""
        known = self._known_sitemaps()
        if url in known:
            return
        url_id = url_id if url_id is not None else self.metadata.id_for(url)
        if url_id is not None:
            self.metadata.mark_sitemaps([url_id])
            known.add(url)

    def request(self, url: str, referrer_id: int | None) -> bool | None:
        """The loader's :class:`loader.DependencyFetcher`: a DTD or entity, at level 0 (it
        must not wait behind anything), within the scope like any URL.

        The loader calls it from its worker thread: the request is then handed to the event
        loop (and None returned). A refused URL is reported to the loader at once
        (``dependency_failed``): its waiting documents are kept without it.
        """
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                in_loop = asyncio.get_running_loop() is loop
            except RuntimeError:
                in_loop = False
            if not in_loop:
                loop.call_soon_threadsafe(self._request_now, url, referrer_id)
                return None
        return self._request_now(url, referrer_id)

    def _request_now(self, url: str, referrer_id: int | None) -> bool:
        """Queue a dependency once until its fetch ends (``_dependency_ended``): every
        document that needs a DTD asks for it, and each would otherwise fetch it again."""
        try:
            canonical = canonicalize_url(url)
        except InvalidURL:
            canonical = None  # submit records the refusal; no URL-Id: nothing waits on it
        if canonical in self._asked:
            return True
        if self.submit(url, Level.DEPENDENCY, referrer=referrer_id):
            self._asked.add(canonical)
            return True
        refusal = canonical and self._refusal(canonical, any_suffix=True)
        if refusal and self.lane.running:
            # The loader may not have written the URL-Id its documents wait on yet (it asks
            # mid-load): the id is made here, and the lane serves the failure after that load.
            url_id = self.metadata.id_for(canonical)
            self.lane.fail(url_id, canonical, refusal)  # its waiting documents load now
        return False

    def _dependency_ended(self, request: Request) -> None:
        """The fetch of a dependency the loader asked for ended (read, failed or refused;
        after its redirects): a new request fetches it again."""
        self._asked.discard(request.redirects[0] if request.redirects else request.url)

    def make_loader(self, folder: Path, metadata: Metadata, settings: LoaderSettings) -> Loader:
        """The XML loader as this crawler's sink (``sink_for``): it asks the crawler for its
        DTDs and entities (:meth:`request`), never outside the scope, and records as refused
        the links the crawl refuses (:meth:`link_refusal`)."""
        return Loader(
            folder,
            metadata,
            self,
            self.clock,
            settings,
            in_scope=lambda url: self.scope.refusal(url) is None,  # the scope in force
            link_refusal=self.link_refusal,
        )

    def _refusal(self, url: str, *, any_suffix: bool = False) -> str | None:
        """Why a canonical URL is not fetched (scope, trap shape, suffix), or None; the
        suffix list (links to media) spares ``any_suffix``: a dependency, a named sitemap."""
        reason = self.scope.refusal(url) or self._traps.refusal(url)
        if reason is None and not any_suffix:
            reason = self._suffixes.refusal(url)
        return reason

    def link_refusal(self, url: str, *, sitemap: bool = False) -> str | None:
        """Why a canonical link is not followed (scope, trap shape, suffix), or None: the
        loader's admission of XML links, the same as an HTML link's (thread-safe); a
        ``sitemap`` a sitemap index names is spared the suffix list."""
        if sitemap:
            return self._refusal(url, any_suffix=True)
        return self._link_refusal(url)

    def _reject_now(self, url: str, reason: str, referrer: int | None) -> None:
        self.stats.count_rejected(reason)
        self.metadata.reject(url, reason, referrer)

    def _saved_seen(self) -> SeenURLs | None:
        """The seen-URL table a previous run saved next to the metadata (paper §3: URLs
        already taken in stay known across runs; refresh, not scouting, reads them again)."""
        path = self._seen_path()
        if not path.exists():
            return None
        try:
            return SeenURLs.load(path)
        except (OSError, ValueError):
            log.exception("ignoring an unreadable seen-URL table")
            return None

    def _save_seen(self) -> None:
        try:
            self.seen.save(self._seen_path())
        except OSError:  # a full disk must not turn a clean stop into a crash
            log.exception("could not save the seen-URL table")

    def _seen_path(self) -> Path:
        return Path(self.metadata.path).with_name(SEEN_FILE)

    def _keep_links(
        self, links: list[str], invalid: list[tuple[str, str]]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """Split a page's links into children and refusals (out of scope, trap, suffix).

        A refused URL is recorded once per run: the seen-URL table remembers it.
        """
        kept: list[str] = []
        rejects = [(url, self._invalid_refusal(url, reason)) for url, reason in invalid]
        for link in links:
            reason = self._link_refusal(link)
            if reason is None:
                kept.append(link)
            elif self.seen.add(link):
                rejects.append((link, reason))
        return kept, rejects

    def _invalid_refusal(self, url: str, reason: str) -> str:
        """Why a link with no canonical form is refused. One too long for a URL-Id (its
        ``url`` the canonical form all the same) is judged as any link first: an off-site
        link is out of scope, whatever its length; an admitted one is refused for its length."""
        if reason == URL_TOO_LONG:
            return self._link_refusal(url) or f"invalid URL: {reason}"
        return f"invalid URL: {reason}"

    def _scout(
        self,
        links: Sequence[str],
        referrer: int | None,
        depth: int,
        ids: Sequence[int | None] | None = None,
    ) -> None:
        """Queue the unseen links of a page (``referrer``, found at ``depth``) at level 3,
        unless their host's page budget is spent.

        ``ids`` are the links' URL-Ids when known (an XML document's children, from the
        loader): their requests carry them, so nothing looks them up again. A link its
        host's robots.txt (already known) disallows is recorded at once, without a trip
        through the queue and a worker; the links over budget are recorded together.
        """
        if not self.follows_links:  # a crawl worker: the links are stored, their owner claims
            return
        now = time.monotonic()
        over_budget: list[tuple[str, str, int | None]] = []
        known = ids if ids is not None else [None] * len(links)
        for link, url_id in zip(links, known, strict=True):
            if not self.seen.add(link):
                continue
            key = host_key(link)
            if self._budget.spent(key):
                self.stats.count_rejected(self._budget.reason)
                over_budget.append((link, self._budget.reason, referrer))
                continue
            request = Request(
                link,
                Level.SCOUTING,
                url_id=url_id,
                referrer=referrer,
                depth=depth + 1,
                host=key,
            )
            rules = self.robots.lookup(key, now)
            refusal = rules and rules.refusal(link, self.settings.robots_agent)
            if refusal:
                self._busy += 1
                failure = self._failure(request, refusal, rules.refusal_kind, dead=rules.dead)
                self._outbox.put_nowait(failure)
            else:
                self.frontier.push(request)
        self.metadata.reject_many(over_budget)

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

    def _loaded(self, result: LoadResult, depth: int) -> None:
        """A document the loader stored: queue its links (the loader found them, §3) as found
        at ``depth``, the depth of the request that brought the body.

        A dependency's result carries the documents that waited on it (``retried``): their
        links are followed too, from the depth of the dependency's request (a seed's depth,
        0, when the dependency could not be had).
        """
        for retried in result.retried:
            self._loaded(retried, depth)
        # A stored sitemap index (new or changed) has its entries read, as sitemaps, once a
        # run (two indexes that list each other and change at each read make no loop).
        sitemaps = _canonical_set(result.sitemaps)
        for sitemap in sitemaps - self._indexed_sitemaps:
            self._indexed_sitemaps.add(sitemap)
            self.submit(sitemap, Level.SCOUTING, referrer=result.url_id, sitemap=True)
        if result.outcome != LoadOutcome.STORED or not result.links:
            return
        if depth >= self.settings.max_scout_depth:
            return
        follow: list[tuple[int, str]] = []
        refused: list[tuple[str, str, int | None]] = []
        for child in result.children:  # the loader's admitted links: (URL-Id, URL)
            if child[1] in sitemaps:
                continue  # submitted above
            reason = self._link_refusal(child[1])
            if reason is None:
                follow.append(child)
            elif self.seen.add(child[1]):
                self.stats.count_rejected(reason)
                refused.append((child[1], reason, result.url_id))
        self.metadata.reject_many(refused)
        urls, ids = [url for _, url in follow], [url_id for url_id, _ in follow]
        self._scout(urls, result.url_id, depth, ids)


def _canonical_set(urls: Sequence[str]) -> set[str]:
    """The canonical forms of ``urls`` (an invalid one is left out: the loader recorded it)."""
    found = set()
    for url in urls:
        try:
            found.add(canonicalize_url(url))
        except InvalidURL:
            continue
    return found
