"""The crawler's orchestration (Xyro, paper §3): the workers, the writer task, the run and
its clean stop. It moves URLs from the frontier through the fetcher to the metadata manager,
the loader and the event listeners, and decides nothing itself; each step is a job of its
own module, mixed into :class:`Crawler`:

1. ``submit`` canonicalises a URL, checks scope and trap guards and queues it
   (:mod:`~xyleme.crawler.admission`, which also keeps the seen-URL table, the host page
   budget and the record of every refused link);
2. a worker takes the best request a polite host allows (frontier + politeness slots);
3. it makes sure the host's robots.txt is known and allows the URL, then GETs the page,
   conditionally when validators are known (:mod:`~xyleme.crawler.fetching`);
4. the response is judged: a redirect, a back-off, a failure, or a body typed, hashed (MD5)
   and, for HTML, its links extracted (:mod:`~xyleme.crawler.classify`);
5. the writer commits a batch of fetch results in one metadata transaction each for ids and
   for records (``ids_for`` + ``record_fetches``), then fires ``page_fetched`` /
   ``page_changed`` / ``page_dead`` / ``page_failed``, queues the unseen links at level 3
   and hands new XML to the loader's sink through its lane, in a worker thread, where it is
   stored as a version (:mod:`~xyleme.crawler.writer`).

Every failure becomes a FetchResult of type ERROR or DEAD with its reason; no exception
escapes a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from typing import TYPE_CHECKING

from conventions import host_key
from metadata import Clock, Metadata, SystemClock
from xyleme import signals
from xyleme.crawler.admission import LinkAdmission, LinkClaims
from xyleme.crawler.classify import Outcome, ResponseClassification
from xyleme.crawler.denylist import SuffixDenyList
from xyleme.crawler.exchanges import fetch_of, prerequisite_of, status_code
from xyleme.crawler.fetcher import Fetcher
from xyleme.crawler.fetching import FetchStep
from xyleme.crawler.frontier import Frontier
from xyleme.crawler.politeness import host_delay
from xyleme.crawler.robots import RobotsCache, RobotsRules
from xyleme.crawler.scope import Scope
from xyleme.crawler.seen import SeenURLs
from xyleme.crawler.settings import CrawlerSettings
from xyleme.crawler.stats import CrawlStats
from xyleme.crawler.traps import HostBudget, TrapGuard
from xyleme.crawler.writer import LoaderLane, ResultWriter

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiohttp

    from loader import DocumentSink
    from metadata import FetchResult
    from xyleme.archive import ExchangeSink
    from xyleme.crawler.fetcher import FetchError, Response
    from xyleme.crawler.frontier import Request

log = logging.getLogger(__name__)


class Crawler(LinkAdmission, FetchStep, ResponseClassification, ResultWriter):
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
    sink_for : callable, optional
        Instead of ``sink``: makes the sink around this crawler (the daemon's loader asks the
        crawler for DTDs and follows its scope: :meth:`make_loader`), so both are built in
        one go.
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
        sink_for: Callable[[Crawler], DocumentSink] | None = None,
        exchanges: ExchangeSink | None = None,
    ) -> None:
        self.metadata = metadata
        self.settings = settings = settings or CrawlerSettings()
        self.clock = clock or SystemClock()
        self.lane = LoaderLane(self._loaded, self._check_idle)
        """The hand-off to the loader: every call to the ``sink`` goes through it."""
        self.sink = sink
        self.signals = signals.SignalManager()
        self.stats = CrawlStats()
        self.exchanges = exchanges
        self.fetcher = Fetcher(settings, resolver, self._vouches_for, exchanges)
        self._url_of = functools.lru_cache(maxsize=1024)(metadata.url_of)  # crawl-log referrers
        self.robots = RobotsCache.from_settings(settings)
        self.frontier = Frontier(self._delay_of, settings.per_host_concurrency)
        self.seen = self._saved_seen() or SeenURLs(settings.expected_urls)
        self._indexed_sitemaps: set[str] = set()  # a sitemap index's entries submitted this run
        self._sitemaps: set[str] | None = None  # pages marked as sitemaps (read on first use)
        self._traps = TrapGuard.from_settings(settings)
        self._suffixes = SuffixDenyList(frozenset(settings.denied_suffixes))
        self.scope = scope if scope is not None else Scope(settings.scope)
        self._budget = HostBudget(settings.host_page_budget)
        self._url_ids: dict[str, int | None] = {}  # recent Map-Data answers
        self._robots_pending: dict[str, asyncio.Future[RobotsRules]] = {}
        self._etag_blind: set[str] = set()  # hosts whose ETags never validate (fetching.py)
        self._outbox: asyncio.Queue[Outcome | None] = asyncio.Queue()
        self._writer_took = asyncio.Event()  # the writer emptied some of the outbox
        self._busy = 0
        self._finished = asyncio.Event()
        self._until_idle = True
        self._closing = False
        self._stop_requested = False
        self._waiting_workers: set[asyncio.Task] = set()
        self._asked: set[str] = set()  # the loader's dependency requests, until fetched
        self.follows_links = True
        """Whether found links and redirect targets are queued here; a crawl worker of a
        shared store (``xyleme.worker``) only stores them: their part's owner claims them."""
        self.link_claims: LinkClaims | None = None
        self._claimed: list[Request] = []  # found links claimed by the last commit
        """A crawl worker's claims of the found links of its own part (``follows_links``
        off): taken in the transaction that records them, queued once it commits."""
        self.commits_in_thread = False
        """Whether a batch of results is committed in a thread (a store across the network,
        whose round trips would otherwise hold the event loop) rather than on the loop."""
        self._loop: asyncio.AbstractEventLoop | None = None
        if sink_for is not None:
            self.sink = sink_for(self)

    @property
    def sink(self) -> DocumentSink | None:
        """The loader: receives new or changed XML/DTD bodies after their commit."""
        return self.lane.sink

    @sink.setter
    def sink(self, sink: DocumentSink | None) -> None:
        self.lane.sink = sink

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
            self.lane.start()
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
        return self._outbox.qsize() + self.lane.pending

    def snapshot(self) -> dict:
        """Current statistics, with queue sizes by level."""
        return self.stats.snapshot(self.frontier.sizes(), self.frontier.hosts)

    def host_snapshot(self) -> list[dict]:
        """Per host, what only the running crawler knows (``xyleme hosts``): the delay in
        force, requests queued and in flight, the back-off left (real seconds), robots.txt's
        state, note and age (real seconds since it was read; None when not known now), its
        Crawl-delay, the pages scouted this run against ``host_page_budget``, and
        ``fetches``: the fetches by status since the previous snapshot (taken: each fetch
        is in one snapshot only, to be added to the stored counts).

        Cheap enough for every checkpoint: one pass over the host slots, no per-request work.
        """
        now = time.monotonic()
        settings, agent = self.settings, self.settings.robots_agent
        slots = self.frontier.host_slots()
        fetches = self.stats.take_host_fetches()
        keys = set(slots) | set(self.robots.hosts()) | set(self._budget.hosts()) | set(fetches)
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
                    "fetches": fetches.get(key, {}),
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
        with contextlib.suppress(asyncio.CancelledError):
            await self.lane.close()
        await self.fetcher.close()
        self._save_seen()

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
                await self._log_fetch(
                    outcome.request, outcome.result, outcome.kind, time.monotonic() - started
                )
                self._outbox.put_nowait(outcome)

    async def _log_fetch(
        self, request: Request, result: FetchResult, kind: str | None, seconds: float
    ) -> None:
        """Count the fetch's answer for ``xyleme hosts`` and tell the archive's crawl log (a
        failure of the log costs the line, not the fetch). Every fetch comes here: a recorded
        one, and a 429/503 that is tried again later."""
        self.stats.count_fetch(request.host, status_code(result.status, kind))
        if self.exchanges is None:
            return
        try:
            fetch = fetch_of(request, result, kind, time.time(), seconds, self._url_of)
        except Exception:
            log.exception("no crawl-log line for %s", request.url)
            return
        await self.exchanges.fetched(fetch)

    async def _log_prerequisite(
        self,
        url: str,
        via: Request,
        started: float,
        response: Response | None = None,
        error: FetchError | None = None,
    ) -> None:
        """:meth:`_log_fetch` for a robots.txt GET that ``via`` waited for (started at loop
        time ``started``): counted for its own host, logged with its own discovery path."""
        fetch = prerequisite_of(
            url, via, response, error, (time.time(), self.clock.now(), time.monotonic() - started)
        )
        self.stats.count_fetch(host_key(url), fetch.status)
        if self.exchanges is not None:
            await self.exchanges.fetched(fetch)

    async def _room_to_write(self) -> None:
        """Backpressure: no new fetch while ``max_pending_writes`` results wait for the writer."""
        while self._outbox.qsize() >= self.settings.max_pending_writes:
            self._writer_took.clear()
            await self._writer_took.wait()

    def _check_idle(self) -> None:
        idle = self._busy == 0 and len(self.frontier) == 0 and self._outbox.empty()
        idle = idle and self.lane.pending == 0
        if idle and self._until_idle:
            self._finished.set()
