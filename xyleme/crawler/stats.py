"""Crawl statistics: rates, responses by status and type, errors by kind, queue sizes.

Plain counters updated by the crawler; :meth:`CrawlStats.snapshot` gives a JSON-ready dict
for the daemon, the CLI and the dashboard.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class CrawlStats:
    """Counters of one crawler run (real time)."""

    started: float = field(default_factory=time.monotonic)
    pages: int = 0
    bytes: int = 0
    by_status: Counter[int] = field(default_factory=Counter)
    by_type: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    robots_fetches: int = 0
    not_modified: int = 0
    changed: int = 0
    host_fetches: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Fetches per (host key, crawl-log status) since :meth:`take_host_fetches` last ran."""

    def count_response(self, status: int | None, page_type: str) -> None:
        """One fetch result was recorded (any outcome)."""
        self.pages += 1
        if status is not None:
            self.by_status[status] += 1
        self.by_type[page_type] += 1

    def count_fetch(self, host: str, status: int) -> None:
        """One fetch (its crawl-log line): an HTTP status, or a negative code without one."""
        self.host_fetches[(host, status)] += 1

    def take_host_fetches(self) -> dict[str, dict[int, int]]:
        """The fetch counts per host and status since the last call, which are then
        forgotten: the daemon adds them to the stored counts at each checkpoint."""
        taken, self.host_fetches = self.host_fetches, Counter()
        by_host: dict[str, dict[int, int]] = {}
        for (host, status), count in taken.items():
            by_host.setdefault(host, {})[status] = count
        return by_host

    def count_bytes(self, wire_bytes: int) -> None:
        """Bytes read off the wire (compressed size)."""
        self.bytes += wire_bytes

    def count_error(self, kind: str) -> None:
        """A failure of a kind (dns, timeout, too_large, robots, http_5xx…)."""
        self.errors[kind] += 1

    def count_rejected(self, reason: str) -> None:
        """A URL refused before any fetch (scope, trap, suffix), by its reason's first word."""
        self.rejected[reason.split(":", 1)[0]] += 1

    def snapshot(self, queues: dict[int, int] | None = None, hosts: int = 0) -> dict:
        """Everything as plain values, with pages/s and bytes/s since the start."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        return {
            "elapsed_s": round(elapsed, 3),
            "pages": self.pages,
            "pages_per_s": round(self.pages / elapsed, 1),
            "bytes": self.bytes,
            "bytes_per_s": round(self.bytes / elapsed, 1),
            "by_status": dict(sorted(self.by_status.items())),
            "by_type": dict(sorted(self.by_type.items())),
            "errors": dict(sorted(self.errors.items())),
            "rejected": dict(sorted(self.rejected.items())),
            "robots_fetches": self.robots_fetches,
            "not_modified": self.not_modified,
            "changed": self.changed,
            "queues": queues or {},
            "hosts": hosts,
        }
