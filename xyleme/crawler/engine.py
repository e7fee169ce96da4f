"""The crawler (Xyro, paper §3): moves URLs from the frontier through the fetcher to the
metadata manager, the loader and the event listeners. It decides nothing itself; each step
is another component's job:

1. ``submit`` canonicalises a URL, checks scope and trap guards and queues it (frontier);
2. a worker takes the best request a polite host allows (frontier + politeness slots);
3. it makes sure the host's robots.txt is known and allows the URL (robots);
4. it GETs the page, conditionally when validators are known (fetcher);
5. it types the body, hashes it (MD5) and extracts an HTML page's links (content, htmlparse);
6. the writer commits a batch of fetch results in one metadata transaction each for ids and
   for records (``ids_for`` + ``record_fetches``), then fires ``page_fetched`` /
   ``page_changed`` / ``page_dead`` / ``page_failed``, hands new XML to the loader's sink and
   queues the unseen links at level 3 (scouting).

Every failure becomes a FetchResult of type ERROR or DEAD with its reason; no exception
escapes a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import itertools
import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from loader import LoadOutcome
from metadata import FetchResult, InvalidURL, Metadata, PageType, canonicalize_url
from metadata.clock import Clock, SystemClock
from xyleme import signals
from xyleme.crawler.content import (
    Kind,
    classify,
    declared_kind,
    forbids_sniffing,
    headers_for_loader,
    media_type,
)
from xyleme.crawler.denylist import SuffixDenyList
from xyleme.crawler.exchanges import fetch_of
from xyleme.crawler.fetcher import Body, Fetcher, FetchError, discard_spooled
from xyleme.crawler.frontier import Frontier, Level, Request, host_key
from xyleme.crawler.handoff import LoaderLane
from xyleme.crawler.htmlparse import MalformedHTML, extract_links
from xyleme.crawler.politeness import host_delay, retry_after_seconds
from xyleme.crawler.robots import RobotsCache, RobotsRules
from xyleme.crawler.scope import Scope
from xyleme.crawler.seen import SeenURLs
from xyleme.crawler.settings import CrawlerSettings
from xyleme.crawler.stats import CrawlStats
from xyleme.crawler.traps import HostBudget, TrapGuard

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import aiohttp

    from loader import DocumentSink, LoadResult
    from xyleme.archive import ExchangeSink

log = logging.getLogger(__name__)

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = frozenset({404, 410})
_BACK_OFF = frozenset({429, 503})
_CONTENT_TYPES = frozenset({PageType.HTML, PageType.XML, PageType.DTD, PageType.RESOURCE})
SEEN_FILE = "crawler-seen.u64"
"""The saved seen-URL table, next to metadata.db (8 bytes per slot, see SeenURLs)."""
_UNRECORDED = object()  # a fetch the metadata refused: no event follows it


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


@dataclass(slots=True)
class _Outcome:
    """A finished fetch waiting for the writer: the result and what follows from it."""

    request: Request
    result: FetchResult
    children: list[str] | None = None
    follow: list[str] = field(default_factory=list)
    redirect: str | None = None
    rejects: list[tuple[str, str]] = field(default_factory=list)
    robots: frozenset[str] = frozenset()
    canonical: str | None = None
    canonical_to: str | None = None
    body: bytes | Path | None = None
    headers: Mapping[str, str] | None = None
    kind: str | None = None
    """the failure's kind (the stats' name), if the fetch failed"""

    def discard_body(self) -> None:
        """Drop the body; a spooled one's file is removed (the loader never got it)."""
        discard_spooled(self.body)
        self.body = None


def _http_date(timestamp: float) -> str:
    return email.utils.formatdate(timestamp, usegmt=True)


@functools.lru_cache(maxsize=4096)
def _parse_http_date(value: str | None) -> float | None:
    """An HTTP date as a timestamp (None if absent or unreadable); servers repeat dates."""
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


class Crawler:
    """Xyro: fetch what the modules submit, politely, and record everything it sees.

    Parameters
    ----------
    metadata : Metadata
        Where fetch results, URL-Ids and refusals are written.
    settings : CrawlerSettings
        Limits, delays, caps and timeouts (documented defaults).
    scope : Scope, optional
        What may be fetched; everything else is recorded as out of scope. By default the
        rules of ``settings.scope``. Connections to private addresses need its vouching
        (SSRF guard). Assigning ``crawler.scope`` later takes effect at once.
    clock : Clock
        Simulated time for ``fetched_at`` and HTTP dates.
    resolver : aiohttp.abc.AbstractResolver, optional
        Name resolution (the simulated web's in tests and the demo).
    sink : DocumentSink, optional
        The loader: receives new or changed XML/DTD bodies after their commit.
    exchanges : ExchangeSink, optional
        The archive: told of every HTTP exchange (WARC) and every fetch (crawl log).

    Examples
    --------
    A whole crawl of a loopback site, with its output, is in docs/crawler.md::

        scope = Scope(["http://127.0.0.1:8765/"])
        crawler = Crawler(md, CrawlerSettings(min_delay=0.1), scope)
        crawler.submit("http://127.0.0.1:8765/")
        stats = await crawler.run()
    """

    def __init__(
        self,
        metadata: Metadata,
        settings: CrawlerSettings | None = None,
        scope: Scope | None = None,
        *,
        clock: Clock | None = None,
        resolver: aiohttp.abc.AbstractResolver | None = None,
        sink: DocumentSink | None = None,
        exchanges: ExchangeSink | None = None,
    ) -> None:
        self.metadata = metadata
        self.settings = settings = settings or CrawlerSettings()
        self.clock = clock or SystemClock()
        self.sink = sink
        self.signals = signals.SignalManager()
        self.stats = CrawlStats()
        self.exchanges = exchanges
        self.fetcher = Fetcher(settings, resolver, self._vouches_for, exchanges)
        self._url_of = functools.lru_cache(maxsize=1024)(metadata.url_of)  # crawl-log referrers
        self.robots = RobotsCache.from_settings(settings)
        self.frontier = Frontier(self._delay_of, settings.per_host_concurrency)
        self.seen = self._saved_seen() or SeenURLs(settings.expected_urls)
        self._traps = TrapGuard.from_settings(settings)
        self._suffixes = SuffixDenyList(frozenset(settings.denied_suffixes))
        self.scope = scope if scope is not None else Scope(settings.scope)
        self._budget = HostBudget(settings.host_page_budget)
        self._url_ids: dict[str, int | None] = {}  # recent Map-Data answers
        self._robots_pending: dict[str, asyncio.Future[RobotsRules]] = {}
        self._outbox: asyncio.Queue[_Outcome | None] = asyncio.Queue()
        self._writer_took = asyncio.Event()  # the writer emptied some of the outbox
        self._busy = 0
        self._finished = asyncio.Event()
        self._until_idle = True
        self._closing = False
        self._stop_requested = False
        self._waiting_workers: set[asyncio.Task] = set()
        self._lane: LoaderLane | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

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

    # ------------------------------------------------------------------ submission API

    def submit(
        self,
        url_or_id: str | int,
        level: int = Level.SCOUTING,
        score: float = 0.0,
        *,
        referrer: int | None = None,
        reload: bool = False,
    ) -> bool:
        """Queue a URL (or a known URL-Id) at a level, ordered in it by ``score`` (higher first).

        The one submission API of every module (paper §3's five levels). Returns False when
        the URL is refused — invalid, out of scope, a trap or an unwanted suffix, each
        recorded with ``Metadata.reject`` and its reason — or already queued as urgently.
        An unknown URL-Id raises :class:`metadata.UnknownPage` (the caller's mistake).
        ``reload`` reads the page for the loader even if unchanged (``Request.reload``).
        """
        level = Level(level)
        if isinstance(url_or_id, int):
            url_id, url = url_or_id, self.metadata.url_of(url_or_id)
        else:
            url_id = None
            try:
                url = canonicalize_url(url_or_id)
            except InvalidURL as error:
                self._reject_now(url_or_id, error.reason, referrer)
                return False
        refusal = self._refusal(url, dependency=level == Level.DEPENDENCY)
        if refusal is not None:
            self._reject_now(url, refusal, referrer)
            return False
        self.seen.add(url)
        request = Request(
            url,
            level,
            score,
            url_id=url_id,
            referrer=referrer,
            dependency=level == 0,
            reload=reload,
        )
        return self.frontier.push(request)

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
        if self.submit(url, Level.DEPENDENCY, referrer=referrer_id):
            return True
        try:
            canonical = canonicalize_url(url)
        except InvalidURL:
            return False  # no URL-Id: nothing can wait on it
        refusal = self._refusal(canonical, dependency=True)
        if refusal is not None and self._lane is not None:
            # The loader may not have written the URL-Id its documents wait on yet (it asks
            # mid-load): the id is made here, and the lane serves the failure after that load.
            url_id = self.metadata.id_for(canonical)
            self._lane.fail(url_id, canonical, refusal)  # its waiting documents load now
        return False

    def _refusal(self, url: str, *, dependency: bool = False) -> str | None:
        """Why a canonical URL is not fetched (scope, trap shape, suffix), or None."""
        reason = self.scope.refusal(url) or self._traps.refusal(url)
        if reason is None and not dependency:
            reason = self._suffixes.refusal(url)
        return reason

    def link_refusal(self, url: str) -> str | None:
        """Why a canonical link is not followed (scope, trap shape, suffix), or None: the
        loader's admission of XML links, the same as an HTML link's (thread-safe)."""
        return self._link_refusal(url)

    def _reject_now(self, url: str, reason: str, referrer: int | None) -> None:
        self.stats.count_rejected(reason)
        self.metadata.reject(url, reason, referrer)

    # ------------------------------------------------------------------ running

    async def run(self, *, until_idle: bool = True) -> dict:
        """Crawl until nothing is left to fetch (or until :meth:`stop` / cancellation).

        Returns the stats snapshot. On the way out, requests in flight get
        ``shutdown_deadline`` seconds to finish, every finished fetch is committed, and
        the session is closed: the metadata is consistent whatever interrupted the run.
        """
        # A stop asked for after this run was scheduled but before it started still counts.
        self._closing = self._stop_requested
        self._until_idle = until_idle
        if not self._stop_requested:
            self._finished.clear()
        self._busy = 0
        self.stats = CrawlStats()
        self._budget.clear()  # the page budget is per run
        self._loop = asyncio.get_running_loop()
        if self.sink is not None:
            self._lane = LoaderLane(self.sink, self._loaded, self._check_idle)
            self._lane.start()
        await self.fetcher.open()
        workers = [
            asyncio.create_task(self._worker(), name=f"xyro-worker-{n}")
            for n in range(self.settings.concurrency)
        ]
        writer = asyncio.create_task(self._write_loop(), name="xyro-writer")
        self._check_idle()
        try:
            await self._finished.wait()
        finally:
            await self._shutdown(workers, writer)
            self._stop_requested = False  # answered: the next run starts afresh
        return self.snapshot()

    def stop(self) -> None:
        """Ask a running :meth:`run` to return (same clean shutdown as a cancellation).

        A run scheduled but not started yet returns as soon as it starts, so a stop that
        races a start (a ``resume`` quickly followed by a ``pause``) cannot be lost.
        """
        self._stop_requested = True
        self._closing = True
        self._finished.set()

    def backlog(self) -> int:
        """Fetch results waiting for the writer plus bodies waiting for the loader."""
        return self._outbox.qsize() + (self._lane.pending if self._lane is not None else 0)

    def snapshot(self) -> dict:
        """Current statistics, with queue sizes by level."""
        return self.stats.snapshot(self.frontier.sizes(), self.frontier.hosts)

    def host_snapshot(self) -> list[dict]:
        """Per host, what only the running crawler knows (``xyleme hosts``): the delay in
        force, requests queued and in flight, the back-off left (real seconds), robots.txt's
        state, note and age (real seconds since it was read; None when not known now), its
        Crawl-delay, and the pages scouted this run against ``host_page_budget``.

        Cheap enough for every checkpoint: one pass over the host slots, no per-request work.
        """
        now = time.monotonic()
        settings, agent = self.settings, self.settings.robots_agent
        slots = self.frontier.host_slots()
        keys = set(slots) | set(self.robots.hosts()) | set(self._budget.hosts())
        hosts = []
        for key in sorted(keys):
            slot, rules = slots.get(key), self.robots.lookup(key, now)
            robots = note = age = crawl_delay = None
            if rules is not None:
                crawl_delay = rules.crawl_delay(agent)
                if rules.disallow_reason is not None:
                    robots, ttl, note = "unreachable", self.robots.error_ttl, rules.note
                elif rules.parser is None:
                    robots, ttl, note = "no rules", self.robots.ttl, rules.note
                else:
                    robots, ttl = "rules", self.robots.ttl
                    root = rules.parser.can_fetch(key + "/", agent)
                    note = f"/ {'allowed' if root else 'refused'}"
                age = now - (rules.expires - ttl)
            hosts.append(
                {
                    "host": key,
                    "delay": slot.delay if slot else host_delay(settings, crawl_delay),
                    "queued": len(slot.pending) if slot else 0,
                    "in_flight": slot.active if slot else 0,
                    "backoff": max(0.0, slot.backoff_until - now) if slot else 0.0,
                    "robots": robots,
                    "robots_note": note,
                    "robots_age": None if age is None else max(0.0, age),
                    "crawl_delay": crawl_delay,
                    "scouted": self._budget.read(key),
                    "budget": settings.host_page_budget,
                }
            )
        return hosts

    async def _shutdown(self, workers: list[asyncio.Task], writer: asyncio.Task) -> None:
        self._closing = True
        for task in self._waiting_workers:
            task.cancel()  # holds no request: nothing to lose
        busy = [task for task in workers if not task.done()]
        if busy:
            _, late = await asyncio.wait(busy, timeout=self.settings.shutdown_deadline)
            for task in late:
                task.cancel()  # abandoned in flight: its page keeps its previous record
            await asyncio.gather(*late, return_exceptions=True)
        self._outbox.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(writer)
        if self._lane is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._lane.close()
            self._lane = None
        await self.fetcher.close()
        self._save_seen()

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

    async def _worker(self) -> None:
        task = asyncio.current_task()
        while not self._closing:
            self._waiting_workers.add(task)
            try:
                await self._room_to_write()
                request = await self.frontier.get()
            finally:
                self._waiting_workers.discard(task)
            self._busy += 1
            started = time.monotonic()
            try:
                outcome = await self._fetch(request)
            except asyncio.CancelledError:
                self.frontier.finish(request)
                self.frontier.push(request)  # abandoned in flight: queued for the next run
                raise
            except Exception as error:  # a bug of ours: still a record, never a lost URL
                log.exception("crawler worker failed on %s", request.url)
                self.frontier.finish(request)
                outcome = self._failure(request, f"internal error: {error!r}", "internal")
            if outcome is None:  # re-queued (robots.txt first, a back-off) or over budget
                self._busy -= 1
                self._check_idle()
            else:
                if self.exchanges is not None:
                    await self._log_fetch(outcome, time.monotonic() - started)
                self._outbox.put_nowait(outcome)

    async def _log_fetch(self, outcome: _Outcome, seconds: float) -> None:
        """Tell the archive's crawl log (a failure of the log costs the line, not the fetch)."""
        try:
            fetch = fetch_of(
                outcome.request, outcome.result, outcome.kind, time.time(), seconds, self._url_of
            )
        except Exception:
            log.exception("no crawl-log line for %s", outcome.request.url)
            return
        await self.exchanges.fetched(fetch)

    async def _room_to_write(self) -> None:
        """Backpressure: no new fetch while ``max_pending_writes`` results wait for the writer."""
        while self._outbox.qsize() >= self.settings.max_pending_writes:
            self._writer_took.clear()
            await self._writer_took.wait()

    def _check_idle(self) -> None:
        idle = self._busy == 0 and len(self.frontier) == 0 and self._outbox.empty()
        idle = idle and (self._lane is None or self._lane.pending == 0)
        if idle and self._until_idle:
            self._finished.set()

    # ------------------------------------------------------------------ one fetch

    async def _fetch(self, request: Request) -> _Outcome | None:
        """Fetch one request; an outcome to commit, or None when it went back in the queue."""
        key = request.host
        rules = self.robots.lookup(key, time.monotonic())
        if rules is None:
            await self._learn_robots(key)
            self.frontier.finish(request)  # that was a request to the host: keep the delay
            self.frontier.push(request)
            return None
        refusal = rules.refusal(request.url, self.settings.robots_agent)
        if refusal is not None:
            self.frontier.finish(request, used_network=False)
            return self._failure(request, refusal, rules.error_kind or "robots", dead=rules.dead)
        if request.level == Level.SCOUTING and not self._budget.spend(key):
            self.frontier.finish(request, used_network=False)
            self._reject_now(request.url, self._budget.reason, request.referrer)
            return None
        back_off = None
        try:
            outcome, back_off = await self._get(request)
        except FetchError as error:
            outcome = self._failure(request, error.reason, error.kind, dead=error.dead)
        finally:
            self.frontier.finish(request, back_off=back_off)
        return outcome

    async def _learn_robots(self, key: str) -> None:
        """Fetch a host's robots.txt once, however many workers need it at the same time."""
        pending = self._robots_pending.get(key)
        if pending is not None:
            await asyncio.shield(pending)
            return
        future = asyncio.get_running_loop().create_future()
        self._robots_pending[key] = future
        try:
            rules = await self.robots.fetch(
                key,
                lambda url: self.fetcher.get(
                    url, limit=self.settings.robots_max_bytes, truncate=True
                ),
                lambda url: self.scope.robots_refusal(url) is None,
                time.monotonic,
            )
            self.stats.robots_fetches += 1
            self.frontier.set_delay(
                key, host_delay(self.settings, rules.crawl_delay(self.settings.robots_agent))
            )
            future.set_result(rules)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as error:
            future.set_exception(error)
            future.exception()  # marked as retrieved: maybe nobody else waits for it
            raise
        finally:
            del self._robots_pending[key]

    def _delay_of(self, key: str) -> float:
        rules = self.robots.lookup(key, time.monotonic())
        crawl_delay = rules.crawl_delay(self.settings.robots_agent) if rules else None
        return host_delay(self.settings, crawl_delay)

    def _validators(self, request: Request) -> tuple[dict[str, str], PageType | None]:
        """Conditional-GET headers from the page's stored validators, and its stored type.

        Only a page whose last read succeeded is asked conditionally: after a failure or a
        redirect the body is needed (a 304 would leave its type unknown).
        """
        if request.url_id is None or request.level == Level.SCOUTING or request.reload:
            return {}, None
        page = self.metadata.page(request.url_id)  # no thread: a GIL convoy costs more
        if page.page_type not in _CONTENT_TYPES:
            return {}, None
        headers = {}
        if page.etag:
            headers["If-None-Match"] = page.etag
        if page.last_modified is not None:
            headers["If-Modified-Since"] = _http_date(page.last_modified)
        return headers, page.page_type

    async def _get(self, request: Request) -> tuple[_Outcome, float | None]:
        """The GET itself and what its response means; (outcome, back-off seconds)."""
        settings = self.settings
        headers, previous_type = self._validators(request)
        async with self.fetcher.request(request.url, headers) as response:
            status = response.status
            fetched_at = self.clock.now()
            result = FetchResult(
                url_id=request.url_id or 0,
                fetched_at=fetched_at,
                page_type=PageType.ERROR,
                status=status,
                etag=response.headers.get("ETag"),
                last_modified=_parse_http_date(response.headers.get("Last-Modified")),
                content_type=response.headers.get("Content-Type"),
            )
            if status in _REDIRECTS and "Location" in response.headers:
                return self._redirect(request, result, response.headers["Location"]), None
            if status == 304:
                if previous_type is None:
                    return self._failed(
                        request, result, "304 to an unconditional GET", "http"
                    ), None
                result.page_type = previous_type
                result.changed = False
                self.stats.not_modified += 1
                return _Outcome(request, result), None
            if status in _BACK_OFF:
                return self._backed_off(request, result, response.headers.get("Retry-After"))
            if status in _GONE:
                return self._failed(request, result, f"HTTP {status}", "http_4xx", dead=True), None
            if not 200 <= status < 300:
                kind = "http_5xx" if status >= 500 else "http_other"
                return self._failed(request, result, f"HTTP {status}", kind), None
            nosniff = forbids_sniffing(response.headers.get("X-Content-Type-Options"))
            kind = declared_kind(result.content_type, nosniff=nosniff)
            if kind is not None and not kind.is_document and not request.dependency:
                return await self._resource(request, result, response, kind), None
            body, wire = await self.fetcher.read_body(
                response,
                settings.max_body_bytes,
                spool_over=settings.spool_over_bytes,
                spool_dir=settings.spool_dir,
            )
        self.stats.count_bytes(wire)
        outcome = _Outcome(request, result)
        try:
            return self._examine(outcome, body, response.headers), None
        finally:
            if outcome.body is None:
                body.discard()

    def _examine(self, outcome: _Outcome, body: Body, headers: Mapping[str, str]) -> _Outcome:
        """Type a read body, hash it, and take an HTML page's links and directives; a body
        for the loader stays in ``outcome.body`` (whoever clears that removes its file)."""
        request, result = outcome.request, outcome.result
        result.size = body.size
        result.md5 = body.md5
        kind = None
        if request.dependency:
            page_type = PageType.DTD  # entities may come as anything: the loader judges
        else:
            nosniff = forbids_sniffing(headers.get("X-Content-Type-Options"))
            kind = classify(result.content_type, request.url, body.head, nosniff=nosniff)
            if not kind.is_document:
                return self._as_resource(request, result, kind)
            page_type = kind.page_type
        result.page_type = page_type
        if page_type is PageType.HTML:
            try:
                links = extract_links(
                    body.data(),
                    request.url,
                    self.settings.robots_agent,
                    content_type=result.content_type,
                )
            except MalformedHTML as error:
                return self._failed(request, result, f"malformed HTML: {error}", "malformed")
            outcome.children, outcome.rejects = self._keep_links(links.links, links.invalid)
            kept = set(outcome.children)
            outcome.follow = [link for link in links.follow if link in kept]
            outcome.robots, outcome.canonical = links.robots, links.canonical
            result.robots = links.directives
            self._take_canonical(outcome, links.follows_links)
        elif self.sink is not None:
            outcome.body, outcome.headers = body.content, headers_for_loader(headers, kind)
        return outcome

    async def _resource(
        self, request: Request, result: FetchResult, response: aiohttp.ClientResponse, kind: Kind
    ) -> _Outcome:
        """A body its Content-Type calls no document: hashed up to ``max_resource_bytes``
        and dropped; a bigger one keeps its declared size and no MD5 (it is not read)."""
        try:
            body, wire = await self.fetcher.read_body(
                response, self.settings.max_resource_bytes, keep=False
            )
        except FetchError as error:
            if error.kind != "too_large":
                raise
            result.size = response.content_length
        else:
            self.stats.count_bytes(wire)
            result.size, result.md5 = body.size, body.md5
        return self._as_resource(request, result, kind)

    def _as_resource(self, request: Request, result: FetchResult, kind: Kind) -> _Outcome:
        """Record a resource: its type (the sniffed one when the header said nothing
        better), size and MD5; no links, not loaded, out of the rankings."""
        result.page_type = PageType.RESOURCE
        if kind.media != media_type(result.content_type):
            result.content_type = kind.media
        return _Outcome(request, result, children=[])

    def _take_canonical(self, outcome: _Outcome, follow: bool) -> None:
        """Honour ``rel=canonical``: another in-scope page is recorded (``canonical_to``) and,
        unless the page says nofollow, scouted like a followed link."""
        target = outcome.canonical
        if target is None or target == outcome.request.url or self._link_refusal(target):
            return
        outcome.canonical_to = target
        if follow and target not in outcome.follow:
            outcome.follow.append(target)

    def _keep_links(
        self, links: list[str], invalid: list[tuple[str, str]]
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """Split a page's links into children and refusals (out of scope, trap, suffix).

        A refused URL is recorded once per run: the seen-URL table remembers it.
        """
        kept: list[str] = []
        rejects = [(url, f"invalid URL: {reason}") for url, reason in invalid]
        for link in links:
            reason = self._link_refusal(link)
            if reason is None:
                kept.append(link)
            elif self.seen.add(link):
                rejects.append((link, reason))
        return kept, rejects

    def _redirect(self, request: Request, result: FetchResult, location: str) -> _Outcome:
        """A 3xx: the page is recorded with ``redirect_to``; the target is queued (own URL-Id)."""
        try:
            target = canonicalize_url(urljoin(request.url, location))
        except InvalidURL as error:
            return self._failed(
                request, result, f"redirect to an invalid URL: {error.reason}", "redirect"
            )
        chain = (*request.redirects, request.url)
        if target in chain:
            return self._failed(request, result, f"redirect loop back to {target}", "redirect")
        if len(chain) > self.settings.max_redirects:
            reason = f"more than {self.settings.max_redirects} redirects"
            return self._failed(request, result, reason, "redirect")
        refusal = self._refusal(target, dependency=request.dependency)
        if refusal is not None:
            outcome = self._failed(request, result, f"redirect refused: {refusal}", "redirect")
            outcome.rejects.append((target, refusal))
            return outcome
        result.page_type = PageType.UNKNOWN  # no content of its own: it forwards
        result.md5 = None
        return _Outcome(request, result, children=[target], redirect=target)

    def _backed_off(
        self, request: Request, result: FetchResult, retry_after: str | None
    ) -> tuple[_Outcome | None, float]:
        """A 429/503: the host backs off; the request is tried again, or recorded as ERROR."""
        settings = self.settings
        seconds = retry_after_seconds(
            retry_after,
            self.clock.now(),
            settings.retry_after_default,
            settings.max_retry_after,
            self.clock.speed,
        )
        if request.attempts < settings.max_retries:
            request.attempts += 1
            self.frontier.push(request)
            return None, seconds
        reason = (
            f"HTTP {result.status} after {request.attempts + 1} tries (Retry-After {seconds:g}s)"
        )
        return self._failed(
            request, result, reason, "http_5xx" if result.status == 503 else "http_4xx"
        ), seconds

    def _failed(
        self, request: Request, result: FetchResult, reason: str, kind: str, *, dead: bool = False
    ) -> _Outcome:
        result.page_type = PageType.DEAD if dead else PageType.ERROR
        result.reason = reason
        result.md5 = None
        self.stats.count_error(kind)
        return _Outcome(request, result, kind=kind)

    def _failure(self, request: Request, reason: str, kind: str, *, dead: bool = False) -> _Outcome:
        """An outcome for a fetch that got no response at all."""
        result = FetchResult(
            url_id=request.url_id or 0, fetched_at=self.clock.now(), page_type=PageType.ERROR
        )
        return self._failed(request, result, reason, kind, dead=dead)

    # ------------------------------------------------------------------ the writer

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

    async def _commit(self, batch: list[_Outcome]) -> None:
        # On the loop's thread: a writer thread would hold the GIL while the loop's socket
        # calls wait for it (measured: half the throughput).
        try:
            verdicts = self._record(batch)
        except Exception:
            log.exception("batch of %d fetch results refused: recording one by one", len(batch))
            verdicts = [self._record_alone(outcome) for outcome in batch]
        for count, (outcome, changed) in enumerate(zip(batch, verdicts, strict=True), 1):
            if changed is not _UNRECORDED:
                await self._after_commit(outcome, changed)
            outcome.discard_body()  # a body the loader did not take
            if count % self.settings.commit_slice == 0:
                await asyncio.sleep(0)  # events and hand-offs in slices: the fetchers run
        self._busy -= len(batch)
        self._check_idle()

    def _record_alone(self, outcome: _Outcome) -> object:
        """Record one outcome in its own transactions; a failure is logged with its URL."""
        try:
            return self._record([outcome])[0]
        except Exception:
            log.exception("could not record the fetch of %s", outcome.request.url)
            self.stats.count_error("metadata")
            return _UNRECORDED

    def _record(self, batch: list[_Outcome]) -> list[bool | None]:
        """URL-Ids for pages, children and redirects, then the fetch results: two transactions."""
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
        results = []
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
            for url, reason in outcome.rejects:
                metadata.reject(url, reason, request.url_id)
            results.append(result)
        return metadata.record_fetches(results)

    def _remember_ids(self, urls: list[str], url_ids: list[int | None]) -> None:
        """Keep recent URL -> URL-Id answers (they never change); forget the oldest half
        when ``id_cache_size`` is reached, so memory stays bounded."""
        ids = self._url_ids
        if len(ids) + len(urls) > self.settings.id_cache_size:
            for url in list(itertools.islice(ids, len(ids) // 2 + len(urls))):
                del ids[url]
        ids.update(zip(urls, url_ids, strict=True))

    async def _after_commit(self, outcome: _Outcome, changed: bool | None) -> None:
        request, result = outcome.request, outcome.result
        self.stats.count_response(result.status, result.page_type.value)
        for _, reason in outcome.rejects:
            self.stats.count_rejected(reason)
        if changed:
            self.stats.changed += 1
        self._fire(outcome, changed)
        # A scouting redirect follows the seen-URL table like any link; a module's request
        # (a refresh, the loader's DTD) wants the target itself, seen or not.
        is_new = outcome.redirect is not None and self.seen.add(outcome.redirect)
        if outcome.redirect is not None and (is_new or request.level != Level.SCOUTING):
            target = Request(
                outcome.redirect,
                request.level,
                request.score,
                referrer=request.url_id,
                depth=request.depth,
                redirects=(*request.redirects, request.url),
                dependency=request.dependency,
                reload=request.reload,
            )
            self.frontier.push(target)
        if outcome.follow and request.depth < self.settings.max_scout_depth:
            self._scout(outcome.follow, request)
        if self._lane is not None:
            if outcome.body is not None:
                await self._lane.room(self.settings.max_pending_loads)
            self._hand_to_loader(outcome, changed)

    def _scout(self, links: Iterable[str], parent: Request) -> None:
        """Queue a page's unseen links at level 3, unless their host's page budget is spent.

        A link its host's robots.txt (already known) disallows is recorded at once, without
        a trip through the queue and a worker.
        """
        now = time.monotonic()
        for link in links:
            if not self.seen.add(link):
                continue
            key = host_key(link)
            if self._budget.spent(key):
                self.stats.count_rejected(self._budget.reason)
                self.metadata.reject(link, self._budget.reason, parent.url_id)
                continue
            request = Request(
                link, Level.SCOUTING, referrer=parent.url_id, depth=parent.depth + 1, host=key
            )
            rules = self.robots.lookup(key, now)
            refusal = rules and rules.refusal(link, self.settings.robots_agent)
            if refusal:
                self._busy += 1
                kind = rules.error_kind or "robots"
                self._outbox.put_nowait(self._failure(request, refusal, kind, dead=rules.dead))
            else:
                self.frontier.push(request)

    def _fire(self, outcome: _Outcome, changed: bool | None) -> None:
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

    def _hand_to_loader(self, outcome: _Outcome, changed: bool | None) -> None:
        """Queue what the loader must see: a new or changed XML body, any body it asked for
        (a DTD or entity, under the URL it asked for), or the failure of what it asked for."""
        request, result = outcome.request, outcome.result
        url_id, url = result.url_id, request.url
        if request.dependency and request.redirects:  # the loader waits on the first URL
            url = request.redirects[0]
            url_id = self.metadata.id_for(url, create=False) or url_id
        if request.dependency and result.page_type in (PageType.ERROR, PageType.DEAD):
            self._lane.fail(url_id, url, result.reason or "fetch failed")
        elif outcome.body is not None and (
            changed is not False or request.dependency or request.reload
        ):
            self._lane.load(url_id, url, outcome.body, outcome.headers, result.fetched_at, request)
            outcome.body = None  # the lane owns it now

    def _loaded(self, result: LoadResult, request: Request | None) -> None:
        """A document the loader stored: queue its links (the loader found them, §3).

        A dependency's result carries the documents that waited on it (``retried``): their
        links are followed too, from the depth of the request that brought the dependency,
        or from a seed's depth when the dependency could not be had (``request`` None).
        """
        for retried in result.retried:
            self._loaded(retried, request and replace(request, url_id=retried.url_id))
        if result.outcome != LoadOutcome.STORED or not result.links:
            return
        if request is None:  # the document itself, loaded when its dependency failed
            url = self.metadata.url_of(result.url_id)
            request = Request(url, Level.SCOUTING, url_id=result.url_id)
        if request.depth >= self.settings.max_scout_depth:
            return
        links = self.metadata.urls_of(self.metadata.children(result.url_id).tolist())
        follow = []
        for link in links:
            reason = self._link_refusal(link)
            if reason is None:
                follow.append(link)
            elif self.seen.add(link):
                self.stats.count_rejected(reason)
                self.metadata.reject(link, reason, result.url_id)
        self._scout(follow, request)
