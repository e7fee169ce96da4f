"""What the crawler hands the archive: one HTTP exchange, or one fetch for the crawl log.

The crawler knows nothing of WARC or of log formats: its fetcher calls
:meth:`ExchangeSink.exchange` after each HTTP exchange, its workers call
:meth:`ExchangeSink.fetched` after each fetch (a page read, refused or failed). Both return
at once while there is room in the sink's queue and make the caller wait (asynchronously)
when there is none: back-pressure, never unbounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(slots=True)
class Exchange:
    """An HTTP request and its response as the fetcher saw them.

    ``body`` is the decoded body (bytes, or a file the sink now owns and removes), or None
    when it was not read (a redirect, an error page, a HEAD). ``response_headers`` are as
    received, in order; ``md5`` is the hex MD5 of ``body`` (the crawler's change test).
    """

    url: str
    method: str
    request_headers: list[tuple[str, str]]
    status: int
    reason: str
    protocol: str
    response_headers: list[tuple[str, str]]
    body: bytes | Path | None
    size: int
    md5: str | None
    ip: str | None = None
    at: float = 0.0
    """when the response came, in the repository clock's seconds (set by the sink)"""


@dataclass(slots=True)
class Fetch:
    """One line of the crawl log: a fetch the crawler made (or refused) and its outcome."""

    wall: float
    """real time (Unix seconds) the fetch ended"""
    at: float
    """the repository clock's time of the fetch (metadata's ``fetched_at``)"""
    status: int
    """the HTTP status, or a negative code for a fetch without response (docs/archive.md)"""
    size: int | None
    url: str
    hops: str
    """discovery path: one letter per hop from a seed (L link, R redirect, E dependency…)"""
    referrer: str | None
    content_type: str | None
    duration_ms: int
    md5: str | None
    level: int
    page_type: str
    reason: str | None


class ExchangeSink(Protocol):
    """Where the crawler reports what it fetched (the archive)."""

    records_exchanges: bool
    """Whether :meth:`exchange` keeps anything: False spares the fetcher building them."""

    async def exchange(self, exchange: Exchange) -> None:
        """Take one HTTP exchange (its ``body`` file, if any, is the sink's to remove)."""

    async def fetched(self, fetch: Fetch) -> None:
        """Take one fetch for the crawl log."""
