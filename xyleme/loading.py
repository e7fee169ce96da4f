"""The loader as the daemon's document sink: one call at a time, counted.

The crawler owns the hand-off (``xyleme.crawler.handoff``): it runs ``load`` and
``dependency_failed`` in a worker thread, in order, so parsing never stalls the fetchers, and
it scouts the links of every stored document. What the daemon adds is small: the loader is not
thread-safe, so its periodic ``expire_waiting`` must not run beside a load (one lock); a DTD
asked for by many documents is requested once until its fetch ends; and the documents loaded
are counted for ``xyleme status``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from loader import Loader, LoaderSettings, LoadOutcome, LoadResult
from loader.interfaces import Body, FetchedBody
from metadata import InvalidURL, Metadata, canonicalize_url
from metadata.clock import Clock
from xyleme import signals
from xyleme.crawler import Crawler, CrawlEvent, Level

log = logging.getLogger(__name__)
T = TypeVar("T")


class OnceFetcher:
    """The loader's ``DependencyFetcher``: asks the crawler for a dependency once until its
    fetch ends (every document that needs a DTD asks for it; the crawler would otherwise
    fetch it again for each of those whose request arrives while it is in flight).
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
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
        self.crawler.request(url, referrer_id)  # thread-safe: handed to the crawler's loop
        return True

    def answered(self, url: str) -> None:
        """The fetch of ``url`` ended (read or failed): a new request fetches it again."""
        with self._lock:
            self.pending.discard(url)


class LoaderSink:
    """The crawler's ``DocumentSink`` in the daemon: the loader behind a lock, counted.

    Parameters
    ----------
    folder : Path
        The repository's documents folder.
    md : Metadata
        The metadata manager (shared with the crawler; it is thread-safe).
    crawler : Crawler
        Where dependency requests go, and whose scope bounds them; the sink listens to its
        events to know when a dependency's fetch ended.
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
        self.fetcher = OnceFetcher(crawler)
        self.loader = Loader(
            folder,
            md,
            self.fetcher,
            clock,
            settings,
            in_scope=lambda url: crawler.scope.refusal(url) is None,
            link_refusal=crawler.link_refusal,
        )
        self.loaded = 0
        self._lock = threading.Lock()
        for signal in (signals.page_fetched, signals.page_failed, signals.page_dead):
            crawler.signals.connect(signal, self.dependency_answered)

    def load(
        self,
        url_id: int,
        url: str,
        body: Body,
        headers: Mapping[str, str],
        fetched_at: float,
        md5: str | None = None,
    ) -> LoadResult:
        """Load one body (the crawler calls it from its worker thread)."""
        return self.load_many([FetchedBody(url_id, url, body, headers, fetched_at, md5)])[0]

    def load_many(self, fetched: Sequence[FetchedBody]) -> list[LoadResult]:
        """Load a batch of bodies (the crawler's hand-off drains its queue into batches)."""
        results = self._locked(self.loader.load_many, fetched)
        for (_, url, *_), result in zip(fetched, results, strict=True):
            if result.outcome is LoadOutcome.STORED:
                self.loaded += 1
            elif result.outcome is LoadOutcome.FAILED:
                log.info("document %s refused: %s", url, result.reason)
        return results

    def dependency_arrived(
        self, url_id: int, url: str, body: Body, fetched_at: float
    ) -> LoadResult:
        """A DTD or entity the loader asked for arrived: its waiting documents load."""
        return self._locked(self.loader.dependency_arrived, url_id, url, body, fetched_at)

    def dependency_failed(self, url_id: int, url: str, reason: str) -> list[LoadResult]:
        """A DTD or entity could not be fetched: its waiting documents fail."""
        self.fetcher.answered(url)
        return self._locked(self.loader.dependency_failed, url_id, url, reason)

    def dependency_answered(self, event: CrawlEvent) -> None:
        """A dependency's fetch ended (read or failed): it may be asked for again."""
        if event.level == Level.DEPENDENCY:
            self.fetcher.answered(event.url)

    def not_loaded(self, read: Mapping[int, str]) -> list[int]:
        """Of documents read (URL-Id -> MD5 of the content read), those the loader has
        neither stored as their latest version nor parked waiting for a dependency."""
        with self._lock:
            latest = {change.url_id: change.md5 for change in self.loader.repository.changes()}
            parked = {document.url_id for document in self.loader.parking}
        return [
            url_id
            for url_id, md5 in read.items()
            if latest.get(url_id) != md5 and url_id not in parked
        ]

    async def expire_waiting(self) -> int:
        """Fail the documents that waited too long for a dependency; how many."""
        return len(await asyncio.to_thread(self._locked, self.loader.expire_waiting))

    def close(self) -> None:
        with self._lock:
            self.loader.close()

    def _locked(self, method: Callable[..., T], *args: object) -> T:
        """Call a loader method holding the lock (one loader call at a time)."""
        with self._lock:
            return method(*args)
