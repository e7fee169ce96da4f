"""What becomes of a finished fetch: committed to the metadata in batches (URL-Ids, then fetch
records and the links they refused, in one transaction); after the commit, the signals fired,
the found links sent to admission, and a new or changed XML body (or a DTD the loader asked
for) handed to the loader through its lane (:class:`LoaderLane`), where it is parsed, checked
and stored as a version (``loader.Loader``).

The loader's calls are synchronous and CPU-bound: the lane makes them in a worker thread, in
order, so parsing never stalls the fetchers, and tells the crawler what each load found so
it can queue the document's links. The bodies queued while the loader was busy go to it
together, up to :data:`BATCH` at a time (``load_many`` makes its writes in two transactions,
where one load at a time makes two per document), each with the MD5 its fetch computed; a
batch that raises is loaded again one body at a time, so one bad body costs only its own load.
The loader is not thread-safe: every call to it, the lane's and its owner's
(:meth:`LoaderLane.call`: the periodic ``expire_waiting``, the check at start), holds the
lane's lock, so none runs beside a load.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from loader import Body, DocumentSink, FetchedBody, LoadOutcome, LoadResult
from metadata import FetchResult, PageType
from xyleme import signals
from xyleme.crawler.classify import Outcome
from xyleme.crawler.fetcher import discard_spooled
from xyleme.crawler.frontier import Level, Request

log = logging.getLogger(__name__)
T = TypeVar("T")

BATCH = 100
"""Most bodies handed to the loader in one ``load_many`` call."""

UNRECORDED = object()  # a fetch the metadata refused: no event follows it


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
    ``stats`` and the loader's ``lane``).
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
        elif request.dependency:
            self._dependency_ended(request)
        if outcome.follow and request.depth < self.settings.max_scout_depth:
            self._scout(outcome.follow, request.url_id, request.depth)
        if self.lane.running:
            if outcome.body is not None:
                await self.lane.room(self.settings.max_pending_loads)
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
            self.lane.fail(url_id, url, result.reason or "fetch failed")
        elif outcome.body is not None and request.dependency:  # straight back to the loader
            self.lane.dependency(url_id, url, outcome.body, result.fetched_at, request.depth)
            outcome.body = None  # the lane owns it now
        elif outcome.body is not None and (changed is not False or request.reload):
            fetched = FetchedBody(
                url_id, url, outcome.body, outcome.headers, result.fetched_at, result.md5
            )
            self.lane.load(fetched, request.depth)
            outcome.body = None


@dataclass(slots=True)
class _Load:
    fetched: FetchedBody
    depth: int  # the scouting depth of the document's request

    @property
    def body(self) -> Body:
        return self.fetched.body


@dataclass(slots=True)
class _Dependency:
    url_id: int
    url: str
    body: Body
    fetched_at: float
    depth: int


@dataclass(slots=True)
class _Failure:
    url_id: int
    url: str
    reason: str


class LoaderLane:
    """The crawler's one door to the loader (its ``sink``): a queue of bodies, and of
    dependencies fetched or failed, served in order by one task while the crawler runs.

    ``on_loaded(result, depth)`` runs on the event loop after each load, with the depth of
    the request that brought the body (0 for the documents a failed dependency let load);
    ``on_done()`` after each item, so the crawler can tell when all work is over. ``loaded``
    counts the documents stored (``xyleme status``).
    """

    def __init__(
        self, on_loaded: Callable[[LoadResult, int], None], on_done: Callable[[], None]
    ) -> None:
        self.sink: DocumentSink | None = None
        self.loaded = 0
        self.pending = 0
        self._on_loaded = on_loaded
        self._on_done = on_done
        self._lock = threading.Lock()  # one loader call at a time
        self._queue: asyncio.Queue[_Load | _Dependency | _Failure | None] = asyncio.Queue()
        self._served = asyncio.Event()
        self._task: asyncio.Task | None = None

    @property
    def running(self) -> bool:
        """Whether the lane takes work (from :meth:`start` to :meth:`close`)."""
        return self._task is not None

    def start(self) -> None:
        """Start serving (on the running loop; a queue of its own for each run)."""
        self._queue, self._served = asyncio.Queue(), asyncio.Event()
        self._task = asyncio.create_task(self._serve(), name="xyro-loader-lane")

    def load(self, fetched: FetchedBody, depth: int) -> None:
        """Queue a body for ``sink.load_many``; a spooled body's file is removed after it."""
        self.pending += 1
        self._queue.put_nowait(_Load(fetched, depth))

    def dependency(self, url_id: int, url: str, body: Body, fetched_at: float, depth: int) -> None:
        """Queue a DTD, entity or schema the loader asked for (``sink.dependency_arrived``)."""
        self.pending += 1
        self._queue.put_nowait(_Dependency(url_id, url, body, fetched_at, depth))

    def fail(self, url_id: int, url: str, reason: str) -> None:
        """Queue ``sink.dependency_failed`` for a DTD or entity that could not be fetched."""
        self.pending += 1
        self._queue.put_nowait(_Failure(url_id, url, reason))

    async def call(self, method: Callable[..., T], *args: object) -> T:
        """``method(*args)``, a call of the loader's, in a worker thread and never beside a
        load (the lane may be running or not)."""
        return await asyncio.to_thread(self._locked, method, *args)

    async def expire_waiting(self) -> int:
        """Load without it the documents that waited too long for a dependency; how many
        (the refresh pass's ``Parking``, a crawl worker's periodic job)."""
        return len(await self.call(self.sink.expire_waiting))

    async def room(self, limit: int) -> None:
        """Wait until fewer than ``limit`` items are queued (the writer's backpressure: the
        bodies held in memory are bounded by the loader's pace)."""
        while self.pending >= limit:
            self._served.clear()
            await self._served.wait()

    async def close(self) -> None:
        """Serve what is queued, then stop (the fetches behind it are already committed)."""
        if self._task is not None:
            self._queue.put_nowait(None)
            try:
                await asyncio.shield(self._task)
            finally:
                self._task = None

    def _locked(self, method: Callable[..., T], *args: object) -> T:
        with self._lock:
            return method(*args)

    async def _serve(self) -> None:
        try:
            await self._serve_queue()
        finally:  # cancelled: the bodies still queued will never load
            while not self._queue.empty():
                item = self._queue.get_nowait()
                if isinstance(item, _Load | _Dependency):
                    discard_spooled(item.body)  # the loader leaves it in place
            self.pending = 0

    async def _serve_queue(self) -> None:
        held: list[_Dependency | _Failure | None] = []  # what ended a batch, served after it
        while True:
            item = held.pop() if held else await self._queue.get()
            if item is None:
                return
            if isinstance(item, _Failure):
                await self._fail(item)
                continue
            if isinstance(item, _Dependency):
                await self._arrived(item)
                continue
            batch = [item]
            while len(batch) < BATCH and not self._queue.empty():
                following = self._queue.get_nowait()
                if not isinstance(following, _Load):
                    held.append(following)
                    break
                batch.append(following)
            await self._load(batch)

    async def _load(self, batch: list[_Load]) -> None:
        """Load a batch in one ``load_many`` call, in order (one body per call if it raises)."""
        done = 0
        try:
            results = await self._load_together(batch)
            for item in batch:
                try:
                    if results is None:
                        [result] = await self.call(self.sink.load_many, [item.fetched])
                    else:
                        result = results[done]
                    self._count(result, item.fetched.url)
                    self._on_loaded(result, item.depth)
                except Exception:
                    log.exception("the loader failed on %s", item.fetched.url)
                finally:
                    done += 1
                    self._finished(item)
        finally:  # cancelled: the bodies not loaded yet are dropped all the same
            for item in batch[done:]:
                self._finished(item)

    async def _load_together(self, batch: list[_Load]) -> list[LoadResult] | None:
        """The results of ``load_many`` on the batch, or None: load them one by one."""
        if len(batch) == 1:
            return None
        try:
            return await self.call(self.sink.load_many, [item.fetched for item in batch])
        except Exception:
            log.exception("the loader failed on a batch of %d: one by one now", len(batch))
            return None

    def _count(self, result: LoadResult, url: str) -> None:
        if result.outcome is LoadOutcome.STORED:
            self.loaded += 1
        elif result.outcome is LoadOutcome.FAILED:
            log.info("document %s refused: %s", url, result.reason)

    def _finished(self, item: _Load | _Dependency) -> None:
        discard_spooled(item.body)  # the loader leaves it in place
        self._served_one()

    async def _arrived(self, item: _Dependency) -> None:
        try:
            result = await self.call(
                self.sink.dependency_arrived, item.url_id, item.url, item.body, item.fetched_at
            )
            self._on_loaded(result, item.depth)  # the documents that waited on it, loaded
        except Exception:
            log.exception("the loader failed on %s", item.url)
        finally:
            self._finished(item)

    async def _fail(self, item: _Failure) -> None:
        try:
            retried = await self.call(
                self.sink.dependency_failed, item.url_id, item.url, item.reason
            )
            for result in retried or ():  # the waiting documents, loaded without it
                self._on_loaded(result, 0)
        except Exception:
            log.exception("the loader failed on %s", item.url)
        finally:
            self._served_one()

    def _served_one(self) -> None:
        """One item done: the backlog shrinks, and a fetcher waiting for room may go on."""
        self.pending -= 1
        self._served.set()
        self._on_done()
