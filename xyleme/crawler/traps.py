"""Spider-trap guards on a URL's shape, as Heritrix's and Nutch's URL filters do.

A trap is a site that makes URLs without end: calendars (``/2031/05/`` → next month…),
paths that grow by repeating themselves (``/a/b/a/b/a/…``: relative links on a page served
under many paths), queries that grow a parameter per click, and plain depth. These checks
read the URL's text alone; the host budget (pages *read* per host, in the engine) catches
the traps they miss without letting one page with many links spend it.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xyleme.crawler.settings import CrawlerSettings

# A date in a path or query: YYYY/MM[/DD] or YYYY-MM[-DD], or YYYYMMDD of this century or the
# last (an 8-digit id rarely looks like one). Not glued to other digits.
_DATE = re.compile(
    r"(?<![0-9])(?:([12][0-9]{3})([-/])(0[1-9]|1[0-2])(?:\2(?:0[1-9]|[12][0-9]|3[01]))?"
    r"|((?:19|20)[0-9]{2})(0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01]))(?![0-9])"
)


def _path_and_query(url: str) -> tuple[str, str]:
    """An absolute URL's path and query, by slicing (it runs for every link of every page)."""
    begin = url.find("//") + 2
    ends = [found for found in (url.find("/", begin), url.find("?", begin)) if found >= 0]
    start = min(ends, default=len(url))
    path, _, query = url[start:].partition("#")[0].partition("?")
    return path, query


@dataclass(frozen=True, slots=True)
class TrapGuard:
    """Refuses URLs whose shape says "trap", with the reason.

    >>> guard = TrapGuard(max_url_length=200, max_path_segments=8, last_calendar_year=2027)
    >>> guard.refusal("http://a.example/docs/api/docs/api/docs/x")
    "spider trap: path segment 'docs' repeated 3 times (max 2)"
    >>> guard.refusal("http://a.example/calendar/2031/05/")
    'spider trap: date 2031-05 outside the calendar years 1970–2027'
    >>> guard.refusal("http://a.example/?s=1&s=2&s=3")
    "spider trap: query parameter 's' repeated 3 times (max 2)"
    >>> guard.refusal("http://a.example/blog/2024/05/12/post") is None
    True
    """

    max_url_length: int = 1024
    max_path_segments: int = 24
    max_repeats: int = 2
    max_query_params: int = 16
    first_calendar_year: int = 1970
    last_calendar_year: int = 9999

    @classmethod
    def from_settings(cls, settings: CrawlerSettings) -> TrapGuard:
        """The guard a crawler's settings describe; the calendar is counted from this year."""
        return cls(
            settings.max_url_length,
            settings.max_path_segments,
            settings.max_repeated_segments,
            settings.max_query_params,
            settings.first_calendar_year,
            time.gmtime().tm_year + settings.calendar_years_ahead,
        )

    def refusal(self, url: str) -> str | None:
        """Why ``url`` looks like a trap, or None."""
        if len(url) > self.max_url_length:
            return f"spider trap: URL of {len(url)} characters (max {self.max_url_length})"
        path, query = _path_and_query(url)
        depth = path.count("/")
        if depth > self.max_path_segments:
            return f"spider trap: {depth} path segments (max {self.max_path_segments})"
        segments = [segment for segment in path.split("/") if segment]
        reason = self._repeated("path segment", segments)
        if reason is None and query:
            params = query.split("&")
            if len(params) > self.max_query_params:
                return f"spider trap: {len(params)} query parameters (max {self.max_query_params})"
            reason = self._repeated("query parameter", [p.split("=", 1)[0] for p in params])
        return reason or self._calendar(path + "?" + query)

    def _repeated(self, what: str, items: list[str]) -> str | None:
        if len(items) <= self.max_repeats or len(set(items)) == len(items):
            return None
        item, count = Counter(items).most_common(1)[0]
        if count > self.max_repeats:
            return f"spider trap: {what} {item!r} repeated {count} times (max {self.max_repeats})"
        return None

    def _calendar(self, text: str) -> str | None:
        for match in _DATE.finditer(text):
            year = int(match[1] or match[4])
            if not self.first_calendar_year <= year <= self.last_calendar_year:
                month = match[3] or match[5]
                return (
                    f"spider trap: date {year}-{month} outside the calendar years "
                    f"{self.first_calendar_year}–{self.last_calendar_year}"
                )
        return None


class HostBudget:
    """Pages read per host by scouting in one run, and whether a host has read its budget.

    It counts reads, never links found: a page with 100,000 links to its own host queues
    them all, and that host's later links are admitted like any other until ``limit`` pages
    have been read (Heritrix's queue budget, Nutch's ``generate.max.count``).

    >>> budget = HostBudget(2)
    >>> [budget.spend("http://a.example") for _ in range(3)], budget.spent("http://a.example")
    ([True, True, False], True)
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._read: dict[str, int] = {}

    @property
    def reason(self) -> str:
        """The refusal recorded for a URL of a host whose budget is spent."""
        return f"spider trap: host page budget of {self.limit} pages read"

    def read(self, host_key: str) -> int:
        """Pages read from the host by scouting this run (``xyleme hosts``' budget used)."""
        return self._read.get(host_key, 0)

    def hosts(self) -> list[str]:
        """The hosts read by scouting this run."""
        return list(self._read)

    def spent(self, host_key: str) -> bool:
        return self._read.get(host_key, 0) >= self.limit

    def spend(self, host_key: str) -> bool:
        """Count one read from the host; False (and nothing counted) once its budget is spent."""
        if self.spent(host_key):
            return False
        self._read[host_key] = self._read.get(host_key, 0) + 1
        return True

    def clear(self) -> None:
        """Start a new run: every host's count goes back to zero."""
        self._read.clear()
