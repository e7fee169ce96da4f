"""Liveness probes: is a known page still there? (the re-check of LiveRank, seed 001).

:class:`CrawlerProbe` answers the re-check engine (:func:`xyleme.jobs.recheck.recheck`) one URL-Id
at a time with the crawler's own machinery, outside its frontier (the crawl's hot path is
untouched): the same :class:`~xyleme.crawler.fetcher.Fetcher` (identity, timeouts, caps,
resolver), the same scope, robots.txt through :class:`~xyleme.crawler.robots.RobotsCache`
(RFC 9309, fetched once per host), and per-host politeness through the host slots of a
:class:`~xyleme.crawler.frontier.Frontier` (minimum delay, Crawl-delay, Retry-After). A probe
built with :meth:`CrawlerProbe.sharing` uses a running crawler's own session, robots.txt
cache and host slots, so the daemon's re-check and its crawl are polite to a host together.

Verdicts (docs/liverank.md, "Re-check"):

* DEAD: 404 or 410; a host that does not resolve (DNS failure, of the page or of its
  robots.txt); a soft 404 — a 200 whose body :func:`looks_like_soft_404` (GET only: a HEAD
  has no body, which is why the paper's soft 404s need a GET).
* ALIVE: any other 2xx (after following up to ``max_redirects`` redirects).
* UNKNOWN: timeouts, refused connections, 5xx, a 429/503 still there after ``max_retries``,
  robots.txt unreachable or disallowing, out of scope: nothing says the page is gone.

Each verdict is written to the metadata with its reason (:meth:`CrawlerProbe.probe`), so DEAD
pages stop being refreshed and the live ones are refreshed by the daemon as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from conventions.hosts import host_key
from metadata import FetchResult, InvalidURL, Metadata, PageRecord, PageType, canonicalize_url
from metadata.clock import Clock, SystemClock
from xyleme.crawler.classify import parse_http_date
from xyleme.crawler.content import classify
from xyleme.crawler.fetcher import Fetcher, FetchError
from xyleme.crawler.frontier import Frontier
from xyleme.crawler.liveness import Liveness, Verdict
from xyleme.crawler.politeness import host_delay, retry_after_seconds
from xyleme.crawler.robots import RobotsCache, RobotsRules
from xyleme.crawler.scope import Scope
from xyleme.crawler.settings import CrawlerSettings

if TYPE_CHECKING:
    import aiohttp

    from xyleme.crawler.engine import Crawler

METHODS = ("head", "get")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_GONE = frozenset({404, 410})
_BACK_OFF = frozenset({429, 503})
_HEAD_REFUSED = frozenset({405, 501})
_ALIVE_TYPES = frozenset({PageType.HTML, PageType.XML, PageType.DTD, PageType.RESOURCE})
SOFT_404_BYTES = 64 * 1024
"""How much of a GET body is read to judge a soft 404 (titles and headings come first)."""
_SOFT_404 = re.compile(
    rb"<(title|h1)[^>]*>([^<]{0,200}?\b(?:404|not found|no longer (?:exists|available)"
    rb"|does not exist|page (?:is )?missing)\b[^<]{0,200})</\1",
    re.IGNORECASE,
)
SLOT_POLL_SECONDS = 0.05
"""How often a probe waiting for a busy host looks again (a shared slot is also freed by
the crawler's workers, which do not wake the probe)."""


def looks_like_soft_404(body: bytes) -> str | None:
    """The soft-404 rule: the text of the ``<title>`` or an ``<h1>`` of the body's first
    :data:`SOFT_404_BYTES` bytes says 404, "not found", "no longer exists/available", "does not
    exist" or "page (is) missing" (case-insensitive); returns that text, or None.

    The LiveRank paper (§3.1) found half of uk-2002's 200 answers to be such pages.

    >>> looks_like_soft_404(b"<html><head><title>Page Not Found</title></head></html>")
    'Page Not Found'
    >>> looks_like_soft_404(b"<body><h1 class='err'>Error 404</h1></body>")
    'Error 404'
    >>> looks_like_soft_404(b"<title>Catalogue</title><p>not found here</p>") is None
    True
    """
    match = _SOFT_404.search(body[:SOFT_404_BYTES])
    return None if match is None else match.group(2).decode("utf-8", "replace").strip()


class CrawlerProbe:
    """A :class:`xyleme.jobs.recheck.LivenessProbe` over HTTP with the crawler's machinery.

    Parameters
    ----------
    metadata
        Where the URLs are read and every verdict is recorded (``record=False``: nowhere).
    settings, scope, clock, resolver
        As for :class:`~xyleme.crawler.Crawler`: limits and politeness, what may be fetched,
        the simulated time that dates the records, name resolution.
    method
        ``"head"`` (the default: cheap, but blind to soft 404s) or ``"get"``. A server that
        refuses HEAD (405, 501) is asked again with GET.
    record
        Write each verdict to the metadata (see :meth:`probe`).

    Examples
    --------
    ::

        async with CrawlerProbe(md, CrawlerSettings(min_delay=0.1), method="get") as probe:
            answer = await probe.probe(url_id)   # Liveness(verdict, reason, status)
    """

    def __init__(
        self,
        metadata: Metadata,
        settings: CrawlerSettings | None = None,
        scope: Scope | None = None,
        *,
        clock: Clock | None = None,
        resolver: aiohttp.abc.AbstractResolver | None = None,
        method: str = "head",
        record: bool = True,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, not {method!r}")
        self.metadata = metadata
        self.settings = settings = settings or CrawlerSettings()
        self.scope = scope or Scope()
        self.clock = clock or SystemClock()
        self.method = method
        self.record = record
        self.fetcher = Fetcher(settings, resolver, self._vouches_for)
        self.robots = RobotsCache.from_settings(settings)
        self.frontier = Frontier(self._delay_of, settings.per_host_concurrency)
        """Only its host slots are used: the probe queues nothing."""
        self.fetches = 0
        """HTTP requests sent (robots.txt, redirect hops and HEAD→GET retries included)."""
        self._owns_fetcher = True
        self._freed: dict[str, asyncio.Condition] = {}
        self._robots_pending: dict[str, asyncio.Task[RobotsRules]] = {}

    def _vouches_for(self, host: str, address: str) -> bool:
        return self.scope.vouches_for(host, address)

    @classmethod
    def sharing(cls, crawler: Crawler, *, method: str = "head") -> CrawlerProbe:
        """A probe on a running crawler's session, robots.txt cache and host slots.

        Its verdicts are recorded in the crawler's metadata, dated by its clock; the crawler
        owns the session (the probe neither opens nor closes it: the crawler must be running).
        """
        probe = cls(
            crawler.metadata, crawler.settings, crawler.scope, clock=crawler.clock, method=method
        )
        probe.fetcher, probe.robots, probe.frontier = (
            crawler.fetcher,
            crawler.robots,
            crawler.frontier,
        )
        probe._owns_fetcher = False
        return probe

    async def __aenter__(self) -> CrawlerProbe:
        if self._owns_fetcher:
            await self.fetcher.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._owns_fetcher:
            await self.fetcher.close()

    # ------------------------------------------------------------------ the probe

    async def probe(self, url_id: int) -> Liveness:
        """Test one page and record the verdict (unless ``record`` is False).

        Recorded as: DEAD with its reason; UNKNOWN as ERROR with its reason (a failure, no
        observation); ALIVE after a GET as a read (type, MD5, validators: the metadata
        decides whether it changed). ALIVE after a HEAD is a read only when the validators
        tell whether the page changed (its ETag, else its Last-Modified, against the stored
        ones); otherwise the page only gets its live type back (``set_type``), so no false
        "unchanged" observation biases its change rate.
        """
        page = self.metadata.page(url_id)
        answer, response = await self._judge(page.url)
        if self.record:
            self._record(page, answer, response)
        return answer

    async def _judge(self, url: str) -> tuple[Liveness, _Answered | None]:
        """Follow redirects up to ``max_redirects`` and judge the final answer."""
        chain: list[str] = []
        while True:
            refusal = self.scope.refusal(url)
            if refusal is not None:
                return Liveness(Verdict.UNKNOWN, refusal), None
            outcome = await self._ask(url)
            if not isinstance(outcome, _Answered):
                return outcome, None
            status = outcome.status
            if status in _REDIRECTS and outcome.location:
                chain.append(url)
                try:
                    url = canonicalize_url(urljoin(url, outcome.location))
                except InvalidURL as error:
                    return Liveness(Verdict.UNKNOWN, f"redirect to an invalid URL: {error}"), None
                if url in chain or len(chain) > self.settings.max_redirects:
                    return Liveness(
                        Verdict.UNKNOWN, f"redirect loop or chain at {url}", status
                    ), None
                continue
            return self._verdict(outcome, chain), outcome

    def _verdict(self, answer: _Answered, chain: list[str]) -> Liveness:
        status = answer.status
        via = f" (redirected to {answer.url})" if chain else ""
        if status in _GONE:
            return Liveness(Verdict.DEAD, f"HTTP {status}{via}", status)
        if 200 <= status < 300:
            soft = looks_like_soft_404(answer.body) if answer.body is not None else None
            if soft is not None:
                return Liveness(Verdict.DEAD, f"soft 404: 200 with {soft!r}{via}", status)
            return Liveness(Verdict.ALIVE, f"HTTP {status} to {answer.method}{via}", status)
        return Liveness(Verdict.UNKNOWN, f"HTTP {status}{via}", status)

    async def _ask(self, url: str) -> _Answered | Liveness:
        """One URL through robots.txt and its host's slot: its response, or a verdict."""
        key = host_key(url)
        rules = self.robots.lookup(key, time.monotonic()) or await self._learn_robots(key)
        refusal = rules.refusal(url, self.settings.robots_agent)
        if refusal is not None:
            return Liveness(Verdict.DEAD if rules.dead else Verdict.UNKNOWN, refusal)
        method = self.method.upper()
        attempts = 0
        while True:
            await self._enter(key)
            back_off = None
            try:
                answer = await self._fetch(url, method)
                if answer.status in _HEAD_REFUSED and method == "HEAD":
                    method = "GET"
                    answer = await self._fetch(url, method)
                if answer.status not in _BACK_OFF or attempts >= self.settings.max_retries:
                    return answer  # a 429/503 after every retry is judged UNKNOWN
                attempts += 1
                back_off = retry_after_seconds(
                    answer.retry_after,
                    self.clock.now(),
                    self.settings.retry_after_default,
                    self.settings.max_retry_after,
                    self.clock.speed,
                )
            except FetchError as error:
                return Liveness(Verdict.DEAD if error.dead else Verdict.UNKNOWN, error.reason)
            finally:
                await self._leave(key, back_off)

    async def _fetch(self, url: str, method: str) -> _Answered:
        self.fetches += 1
        async with self.fetcher.request(url, method=method) as response:
            body = None
            if method == "GET" and 200 <= response.status < 300:
                read, _ = await self.fetcher.read_body(response, self.settings.max_body_bytes)
                body = read.data()
            headers = response.headers
            return _Answered(
                url=url,
                method=method,
                status=response.status,
                body=body,
                location=headers.get("Location"),
                retry_after=headers.get("Retry-After"),
                etag=headers.get("ETag"),
                last_modified=headers.get("Last-Modified"),
                content_type=headers.get("Content-Type"),
            )

    # ------------------------------------------------------------------ politeness, robots

    async def _enter(self, key: str) -> None:
        """Wait until the host's slot lets a request start (delay, concurrency, back-off)."""
        freed = self._freed.setdefault(key, asyncio.Condition())
        async with freed:
            while not (slot := self.frontier.slot(key)).can_start(now := time.monotonic()):
                # asyncio.timeout, not wait_for: a cancel racing wait_for's timeout leaves
                # Condition.wait re-taking the lock after we left, and the host's slot stuck
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(slot.next_start - now, SLOT_POLL_SECONDS)):
                        await freed.wait()
            slot.start(now)

    async def _leave(self, key: str, back_off: float | None) -> None:
        freed = self._freed[key]
        async with freed:
            self.frontier.release(key, back_off=back_off)
            freed.notify()

    def _delay_of(self, key: str) -> float:
        rules = self.robots.lookup(key, time.monotonic())
        crawl_delay = rules.crawl_delay(self.settings.robots_agent) if rules else None
        return host_delay(self.settings, crawl_delay)

    async def _learn_robots(self, key: str) -> RobotsRules:
        """The host's robots.txt, fetched once however many probes need it at the same time."""
        pending = self._robots_pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._fetch_robots(key))
            self._robots_pending[key] = pending
            pending.add_done_callback(lambda _: self._robots_pending.pop(key, None))
        return await asyncio.shield(pending)

    async def _fetch_robots(self, key: str) -> RobotsRules:
        await self._enter(key)
        try:

            def get(url: str):
                self.fetches += 1
                return self.fetcher.get(url, limit=self.settings.robots_max_bytes, truncate=True)

            rules = await self.robots.fetch(
                key, get, lambda url: self.scope.robots_refusal(url) is None, time.monotonic
            )
        finally:
            await self._leave(key, None)
        self.frontier.set_delay(
            key, host_delay(self.settings, rules.crawl_delay(self.settings.robots_agent))
        )
        return rules

    # ------------------------------------------------------------------ recording

    def _record(self, page: PageRecord, answer: Liveness, response: _Answered | None) -> None:
        now = self.clock.now()
        if answer.verdict is not Verdict.ALIVE:
            page_type = PageType.DEAD if answer.verdict is Verdict.DEAD else PageType.ERROR
            self.metadata.record_fetch(
                FetchResult(page.url_id, now, page_type, status=answer.status, reason=answer.reason)
            )
            return
        stored = page.page_type if page.page_type in _ALIVE_TYPES else None
        kind = classify(response.content_type, response.url, response.body or b"")
        # A HEAD has no body to sniff: the stored type stands when the header says nothing.
        page_type = stored if kind.sniffed and response.body is None and stored else kind.page_type
        last_modified = parse_http_date(response.last_modified)
        result = FetchResult(
            page.url_id,
            now,
            page_type,
            status=answer.status,
            etag=response.etag,
            last_modified=last_modified,
            content_type=response.content_type,
        )
        if response.body is not None:
            result.md5 = hashlib.md5(response.body).hexdigest()
            result.size = len(response.body)
        else:
            result.changed = _changed_by_validators(page, response.etag, last_modified)
            if result.changed is None:
                self.metadata.set_type(page.url_id, page_type, answer.reason)
                return
        self.metadata.record_fetch(result)


@dataclass(slots=True)
class _Answered:
    """The parts of a response a verdict and its record need (the body only after a GET)."""

    url: str
    method: str
    status: int
    body: bytes | None
    location: str | None
    retry_after: str | None
    etag: str | None
    last_modified: str | None
    content_type: str | None


def _changed_by_validators(
    page: PageRecord, etag: str | None, last_modified: float | None
) -> bool | None:
    """Whether a page changed, as far as a HEAD's validators tell (None: they cannot)."""
    if etag and page.etag:
        return etag != page.etag
    if last_modified is not None and page.last_modified is not None:
        return last_modified > page.last_modified
    return None
