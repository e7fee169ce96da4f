"""One request's fetch (paper §3): robots.txt first (once per host), the scouting page
budget, then the GET, conditional when validators are stored. The HTTP session itself is
:mod:`~xyleme.crawler.fetcher`; what the response means is :mod:`~xyleme.crawler.classify`.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from metadata import FetchResult, PageType
from xyleme.crawler.classify import (
    BACK_OFF,
    CONTENT_TYPES,
    GONE,
    REDIRECTS,
    Outcome,
    http_date,
    parse_http_date,
)
from xyleme.crawler.content import (
    Kind,
    declared_kind,
    forbids_sniffing,
)
from xyleme.crawler.fetcher import FetchError
from xyleme.crawler.frontier import Level, Request
from xyleme.crawler.politeness import host_delay

if TYPE_CHECKING:
    import aiohttp

    from xyleme.crawler.fetcher import Response


class FetchStep:
    """The Crawler's fetch step (a mixin of :class:`~xyleme.crawler.Crawler`, which supplies
    ``fetcher``, ``robots``, ``frontier``, ``metadata``, ``settings`` and ``stats``).
    """

    async def _fetch(self, request: Request) -> Outcome | None:
        """Fetch one request; an outcome to commit, or None when it went back in the queue."""
        key = request.host
        rules = self.robots.lookup(key, time.monotonic())
        if rules is None:
            await self._learn_robots(key, request)
            self.frontier.finish(request)  # that was a request to the host: keep the delay
            self.frontier.push(request)
            return None
        refusal = rules.refusal(request.url, self.settings.robots_agent)
        if refusal is not None:
            self.frontier.finish(request, used_network=False)
            return self._failure(request, refusal, rules.refusal_kind, dead=rules.dead)
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

    async def _learn_robots(self, key: str, via: Request) -> None:
        """Fetch a host's robots.txt once, however many workers need it at the same time
        (``via``: the request that needed it first, the crawl log's referrer)."""
        pending = self._robots_pending.get(key)
        if pending is not None:
            await asyncio.shield(pending)
            return
        future = asyncio.get_running_loop().create_future()
        self._robots_pending[key] = future
        try:
            rules = await self.robots.fetch(
                key,
                lambda url: self._robots_get(url, via),
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

    async def _robots_get(self, url: str, via: Request) -> Response:
        """One GET on the way to a robots.txt; it has its crawl-log line like any fetch."""
        started = time.monotonic()
        try:
            response = await self.fetcher.get(
                url, limit=self.settings.robots_max_bytes, truncate=True
            )
        except FetchError as error:
            self.stats.count_error(error.kind)  # once: the pages it refuses are robots_unreachable
            await self._log_prerequisite(url, via, started, error=error)
            raise
        await self._log_prerequisite(url, via, started, response=response)
        return response

    def _delay_of(self, key: str) -> float:
        rules = self.robots.lookup(key, time.monotonic())
        crawl_delay = rules.crawl_delay(self.settings.robots_agent) if rules else None
        return host_delay(self.settings, crawl_delay)

    def _validators(self, request: Request) -> tuple[dict[str, str], PageType | None]:
        """Conditional-GET headers from the page's stored validators, and its stored type.

        Only a page whose last read succeeded is asked conditionally: after a failure or a
        redirect the body is needed (a 304 would leave its type unknown). A host that once
        answered an ``If-None-Match`` with a 200 and the very ETag it was sent is not sent
        one again (``If-Modified-Since`` alone): Apache's ``mod_deflate`` gives a compressed
        body the ETag ``"…-gzip"`` and compares ``If-None-Match`` with the plain one, so
        with both validators sent it never answers 304 (its bug 45023; RFC 9110 §13.2.2
        lets ``If-None-Match`` override ``If-Modified-Since``).
        """
        if request.url_id is None or request.level == Level.SCOUTING or request.reload:
            return {}, None
        page = self.metadata.page(request.url_id)  # no thread: a GIL convoy costs more
        if page.page_type not in CONTENT_TYPES:
            return {}, None
        headers = {}
        if page.etag and request.host not in self._etag_blind:
            headers["If-None-Match"] = page.etag
        if page.last_modified is not None:
            headers["If-Modified-Since"] = http_date(page.last_modified)
        return headers, page.page_type

    async def _get(self, request: Request) -> tuple[Outcome, float | None]:
        """The GET itself and what its response means; (outcome, back-off seconds)."""
        settings = self.settings
        started = time.monotonic()
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
                last_modified=parse_http_date(response.headers.get("Last-Modified")),
                content_type=response.headers.get("Content-Type"),
            )
            if status in REDIRECTS and "Location" in response.headers:
                return self._redirect(request, result, response.headers["Location"]), None
            if status == 304:
                if previous_type is None:
                    return self._failed(
                        request, result, "304 to an unconditional GET", "http"
                    ), None
                result.page_type = previous_type
                result.changed = False
                self.stats.not_modified += 1
                return Outcome(request, result), None
            if status in BACK_OFF:
                retry = self._backed_off(request, result, response.headers.get("Retry-After"))
                if retry[0] is None:  # tried again later: this answer has its log line now
                    result.reason = f"HTTP {status}: tried again in {retry[1]:g} s"
                    await self._log_fetch(request, result, None, time.monotonic() - started)
                return retry
            if status in GONE:
                return self._failed(request, result, f"HTTP {status}", "http_4xx", dead=True), None
            if not 200 <= status < 300:
                kind = "http_5xx" if status >= 500 else "http_other"
                return self._failed(request, result, f"HTTP {status}", kind), None
            if result.etag is not None and headers.get("If-None-Match") == result.etag:
                self._etag_blind.add(request.host)  # current, yet no 304: see _validators
            nosniff = forbids_sniffing(response.headers.get("X-Content-Type-Options"))
            kind = declared_kind(result.content_type, nosniff=nosniff)
            if kind is not None and not kind.is_document and not request.read_whole:
                return await self._resource(request, result, response, kind), None
            body, wire = await self.fetcher.read_body(
                response,
                settings.max_body_bytes,
                spool_over=settings.spool_over_bytes,
                spool_dir=settings.spool_dir,
            )
        self.stats.count_bytes(wire)
        outcome = Outcome(request, result)
        try:
            return await self._examine(outcome, body, response.headers), None
        finally:
            if outcome.body is None:
                body.discard()

    async def _resource(
        self, request: Request, result: FetchResult, response: aiohttp.ClientResponse, kind: Kind
    ) -> Outcome:
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
