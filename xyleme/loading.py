"""The loader on the daemon's loop: parsing in a thread, its requests back on the loop.

The crawler hands every new or changed XML body to its ``DocumentSink`` and awaits it.
Parsing and validating a document is CPU work (ARCHITECTURE: it "must not stall the
fetchers"), so :class:`LoaderSink` runs :class:`loader.Loader` in a worker thread, one call
at a time (the loader is not thread-safe). What the loader asks of the crawler from that
thread — a DTD or entity at level 0 — is handed back to the loop, where the crawler lives.
After a document is stored, its links (the loader wrote them to Link-Data) that the crawler
has not seen yet are queued at the scouting level, as the crawler does for HTML links.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from loader import Loader, LoaderSettings, LoadOutcome, LoadResult
from metadata import InvalidURL, Metadata, canonicalize_url
from metadata.clock import Clock
from xyleme.crawler import Crawler, CrawlEvent, Level

log = logging.getLogger(__name__)
T = TypeVar("T")


class LoopFetcher:
    """The loader's ``DependencyFetcher``: requests made in its thread reach the crawler on
    the loop (the crawler's queues are not thread-safe).

    A dependency is asked for once until its fetch ends: every document that needs a DTD
    asks for it, and the crawler would otherwise fetch it again for each of them.
    """

    def __init__(self, crawler: Crawler, loop: asyncio.AbstractEventLoop) -> None:
        self.crawler = crawler
        self.loop = loop
        self.pending: set[str] = set()
        self._lock = threading.Lock()

    def request(self, url: str, referrer_id: int | None) -> bool:
        try:
            key = canonicalize_url(url)
        except InvalidURL:
            key = url  # the crawler records the refusal
        with self._lock:
            if key in self.pending:
                return True
            self.pending.add(key)
        self.loop.call_soon_threadsafe(self.crawler.request, url, referrer_id)
        return True

    def answered(self, url: str) -> None:
        """The fetch of ``url`` ended (read or failed): a new request fetches it again."""
        with self._lock:
            self.pending.discard(url)


class LoaderSink:
    """The crawler's ``DocumentSink``: loads in a thread, queues the links it found.

    Parameters
    ----------
    folder : Path
        The repository's documents folder.
    md : Metadata
        The metadata manager (shared with the crawler; it is thread-safe).
    crawler : Crawler
        Where dependency requests and newly found links go.
    clock : Clock
        Simulated time (the dependency timeout).
    settings : LoaderSettings
        Limits of the loader.
    """

    def __init__(
        self,
        folder: Path,
        md: Metadata,
        crawler: Crawler,
        clock: Clock,
        settings: LoaderSettings,
    ) -> None:
        self.md = md
        self.crawler = crawler
        self.folder = folder
        self.clock = clock
        self.settings = settings
        self.loaded = 0
        self._loader: Loader | None = None
        self._lock = threading.Lock()

    @property
    def loader(self) -> Loader:
        """The loader, built on first use from the loop it must hand requests back to."""
        if self._loader is None:
            self._loader = Loader(
                self.folder,
                self.md,
                LoopFetcher(self.crawler, asyncio.get_running_loop()),
                self.clock,
                self.settings,
                in_scope=lambda url: self.crawler.scope.refusal(url) is None,
            )
        return self._loader

    async def load(
        self,
        url_id: int,
        url: str,
        body_or_path: bytes,
        headers: Mapping[str, str],
        fetched_at: float,
    ) -> LoadResult:
        """Load one body in a thread; then queue the new links of a stored document."""
        result = await asyncio.to_thread(
            self._locked, self.loader.load, url_id, url, body_or_path, headers, fetched_at
        )
        if result.outcome is LoadOutcome.STORED:
            self.loaded += 1
            if result.links:
                children = await asyncio.to_thread(self._children_urls, url_id)
                self._scout(children, url_id)
        elif result.outcome is LoadOutcome.FAILED:
            log.info("document %s refused: %s", url, result.reason)
        return result

    def dependency_fetched(self, event: CrawlEvent) -> None:
        """A DTD or entity fetch ended well: it may be asked for again from now on."""
        if event.level == Level.DEPENDENCY and self._loader is not None:
            self._loader.fetcher.answered(event.url)

    def dependency_failed(self, event: CrawlEvent) -> None:
        """A DTD or entity could not be fetched: its waiting documents fail (in a thread)."""
        if event.level != Level.DEPENDENCY:
            return
        self.dependency_fetched(event)
        reason = event.result.reason or f"HTTP {event.result.status}"
        task = asyncio.get_running_loop().create_task(
            asyncio.to_thread(
                self._locked,
                self.loader.dependency_failed,
                event.result.url_id,
                event.url,
                reason,
            )
        )
        task.add_done_callback(_log_failure)

    async def expire_waiting(self) -> int:
        """Fail the documents that waited too long for a dependency; how many."""
        return len(await asyncio.to_thread(self._locked, self.loader.expire_waiting))

    def close(self) -> None:
        if self._loader is not None:
            with self._lock:
                self._loader.close()

    def _locked(self, method: Callable[..., T], *args: Any) -> T:
        """Call a loader method holding the lock (one loader call at a time)."""
        with self._lock:
            return method(*args)

    def _children_urls(self, url_id: int) -> list[str]:
        return self.md.urls_of(self.md.children(url_id).tolist())

    def _scout(self, urls: list[str], referrer: int) -> None:
        """Queue the links the crawler never saw (the seen-URL table remembers the rest)."""
        for url in urls:
            if url not in self.crawler.seen:
                self.crawler.submit(url, Level.SCOUTING, referrer=referrer)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("failing the documents waiting on a dependency failed", exc_info=task.exception())
