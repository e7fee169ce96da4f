"""What a response means (paper §3, the crawler's reading of a fetch): the status turned into
a redirect, a back-off, a failure or a page; a read body typed, hashed and, for HTML, its links
and directives taken. It only judges: the GET is :mod:`~xyleme.crawler.fetching`'s job.
"""

from __future__ import annotations

import email.utils
import functools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from metadata import FetchResult, InvalidURL, PageType, URLTooLong, canonicalize_url
from xyleme.crawler.content import (
    Kind,
    classify,
    forbids_sniffing,
    headers_for_loader,
    media_type,
)
from xyleme.crawler.fetcher import Body, FetchError, discard_spooled
from xyleme.crawler.frontier import Request
from xyleme.crawler.htmlparse import MalformedHTML, extract_links_off_loop
from xyleme.crawler.politeness import retry_after_seconds
from xyleme.crawler.sitemapbody import SITEMAP_JUNK, gunzip_sitemap, is_gzip, read_text_sitemap

if TYPE_CHECKING:
    from collections.abc import Mapping

log = logging.getLogger(__name__)

REDIRECTS = frozenset({301, 302, 303, 307, 308})
GONE = frozenset({404, 410})
BACK_OFF = frozenset({429, 503})
CONTENT_TYPES = frozenset({PageType.HTML, PageType.XML, PageType.DTD, PageType.RESOURCE})


@dataclass(slots=True)
class Outcome:
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


def http_date(timestamp: float) -> str:
    return email.utils.formatdate(timestamp, usegmt=True)


@functools.lru_cache(maxsize=4096)
def parse_http_date(value: str | None) -> float | None:
    """An HTTP date as a timestamp (None if absent or unreadable); servers repeat dates."""
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


class ResponseClassification:
    """The Crawler's response classification (a mixin of :class:`~xyleme.crawler.Crawler`,
    which supplies ``settings``, ``stats``, ``clock``, ``frontier``, ``sink`` and the link
    admission).
    """

    async def _examine(self, outcome: Outcome, body: Body, headers: Mapping[str, str]) -> Outcome:
        """Type a read body, hash it, and take an HTML page's links and directives; a body
        for the loader stays in ``outcome.body`` (whoever clears that removes its file)."""
        request, result = outcome.request, outcome.result
        if request.sitemap and is_gzip(body):
            return await self._unpacked_sitemap(outcome, body, headers)
        result.size = body.size
        result.md5 = body.md5
        kind = None
        if request.dependency:
            page_type = PageType.DTD  # entities may come as anything: the loader judges
        else:
            nosniff = forbids_sniffing(headers.get("X-Content-Type-Options"))
            kind = classify(result.content_type, request.url, body.head, nosniff=nosniff)
            if request.sitemap and kind.page_type not in (PageType.XML, PageType.HTML):
                return self._text_sitemap(outcome, body, kind)
            if not kind.is_document:
                return self._as_resource(request, result, kind)
            page_type = kind.page_type
        result.page_type = page_type
        if page_type is PageType.HTML:
            try:
                links = await extract_links_off_loop(
                    body.data,
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

    async def _unpacked_sitemap(
        self, outcome: Outcome, packed: Body, headers: Mapping[str, str]
    ) -> Outcome:
        """A sitemap that is a gzip file (``sitemap.xml.gz``): unpacked under the caps, then
        examined by its own bytes (the gzip Content-Type says nothing of them)."""
        request, result = outcome.request, outcome.result
        settings = self.settings
        try:
            body = gunzip_sitemap(
                packed, settings.max_decoded_bytes, settings.spool_over_bytes, settings.spool_dir
            )
        except FetchError as error:
            return self._failed(request, result, error.reason, error.kind)
        result.content_type = None
        unpacked = {
            name: value for name, value in headers.items() if name.lower() != "content-type"
        }
        try:
            return await self._examine(outcome, body, unpacked)
        finally:
            if outcome.body is None:
                body.discard()

    def _text_sitemap(self, outcome: Outcome, body: Body, kind: Kind) -> Outcome:
        """A sitemap that is no XML: the protocol's text form, one URL per line; its URLs
        are its links (within scope as always), the page a resource that has children."""
        request, result = outcome.request, outcome.result
        found = read_text_sitemap(body.data())
        outcome = self._as_resource(request, result, kind)
        invalid: list[tuple[str, str]] = []
        links: list[str] = []
        for url in found.urls:
            try:
                links.append(canonicalize_url(url))
            except URLTooLong as error:
                invalid.append((error.canonical, error.reason))
            except InvalidURL as error:
                invalid.append((url, error.reason))
        outcome.children, outcome.rejects = self._keep_links(links, invalid)
        outcome.follow = list(outcome.children)
        if found.junk:
            self.stats.rejected[SITEMAP_JUNK] += found.junk
        log.info("%s: %s", request.url, found.note())
        return outcome

    def _as_resource(self, request: Request, result: FetchResult, kind: Kind) -> Outcome:
        """Record a resource: its type (the sniffed one when the header said nothing
        better), size and MD5; no links, not loaded, out of the rankings."""
        result.page_type = PageType.RESOURCE
        if kind.media != media_type(result.content_type):
            result.content_type = kind.media
        return Outcome(request, result, children=[])

    def _take_canonical(self, outcome: Outcome, follow: bool) -> None:
        """Honour ``rel=canonical``: another in-scope page is recorded (``canonical_to``) and,
        unless the page says nofollow, scouted like a followed link."""
        target = outcome.canonical
        if target is None or target == outcome.request.url or self._link_refusal(target):
            return
        outcome.canonical_to = target
        if follow and target not in outcome.follow:
            outcome.follow.append(target)

    def _redirect(self, request: Request, result: FetchResult, location: str) -> Outcome:
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
        refusal = self._refusal(target, any_suffix=request.read_whole)
        if refusal is not None:
            outcome = self._failed(request, result, f"redirect refused: {refusal}", "redirect")
            outcome.rejects.append((target, refusal))
            return outcome
        result.page_type = PageType.UNKNOWN  # no content of its own: it forwards
        result.md5 = None
        return Outcome(request, result, children=[target], redirect=target)

    def _backed_off(
        self, request: Request, result: FetchResult, retry_after: str | None
    ) -> tuple[Outcome | None, float]:
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
    ) -> Outcome:
        result.page_type = PageType.DEAD if dead else PageType.ERROR
        result.reason = reason
        result.md5 = None
        self.stats.count_error(kind)
        return Outcome(request, result, kind=kind)

    def _failure(self, request: Request, reason: str, kind: str, *, dead: bool = False) -> Outcome:
        """An outcome for a fetch that got no response at all."""
        result = FetchResult(
            url_id=request.url_id or 0, fetched_at=self.clock.now(), page_type=PageType.ERROR
        )
        return self._failed(request, result, reason, kind, dead=dead)
