"""Claims: which crawl worker holds which due pages, by a stable hash of their host.

Several workers share one store (issue 20, ARCHITECTURE.md "Past one machine"): worker I of
N owns the hosts whose :func:`conventions.host_hash` is I modulo N, so a host's politeness and
robots
live in exactly one worker (OPIC §4.1 partitions pages by host the same way). Every page
carries its host's hash (``pages.host_hash``, set when the URL gets its id), so the part is
computed in SQL and N can change without rewriting a row.

A worker claims a batch of its due pages for a lease (``pages.claimed_by``,
``claimed_until``, wall-clock seconds: leases are about processes, not the simulated
clock): one ``UPDATE … RETURNING`` whose inner select takes the rows ``FOR UPDATE SKIP
LOCKED`` on PostgreSQL, so two claimers never wait on each other nor take one page twice
(the claim is in the page's own row, which PostgreSQL re-checks once it holds the lock);
SQLite's one write lock serialises them instead. A killed worker's claims expire with their
lease and are claimed again; nothing it committed is lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from metadata.store import Store, chunked


def _claim_sql(skip_locked: str, among: str = "") -> str:
    # ?1 worker, ?2 lease end, ?3 parts, ?4 part, ?5 now (wall), ?6 due by (repository
    # clock), ?7 limit; ``among`` narrows the pages (``AND id IN (…)``, its ids ?8, ?9…, or
    # ``AND id = ANY(?8)`` on PostgreSQL: Dialect.among).
    # Due: a next refresh at or before ?6, or never read and discovered by then. A DEAD or
    # redirected page is due only by a next refresh: the one the coordinator's refresh pass
    # gives it every ``dead_recheck_units``, as the daemon re-checks it (docs/refresh.md).
    return f"""
UPDATE pages SET claimed_by = ?1, claimed_until = ?2
WHERE id IN (
  SELECT id FROM pages
  WHERE host_hash % ?3 = ?4 AND coalesce(claimed_until, 0) <= ?5
    AND coalesce(next_refresh, CASE WHEN last_access IS NULL AND type <> 'DEAD'
                                     AND redirect_to IS NULL THEN discovered_at END) <= ?6
    {among}
  ORDER BY coalesce(next_refresh, discovered_at), id
  LIMIT ?7{skip_locked})
RETURNING id
"""


class Claims(Store):
    """Due pages claimed by part, for a lease."""

    def claim_due(
        self,
        part: int,
        parts: int,
        worker: str,
        *,
        limit: int,
        due_by: float,
        lease_s: float,
        now: float | None = None,
        among: Iterable[int] | None = None,
    ) -> list[int]:
        """Claim up to ``limit`` due pages of ``part`` (of ``parts``) for ``worker`` until
        ``lease_s`` seconds after ``now`` (wall clock, default the system's); the most
        overdue first. Pages another worker holds under a live lease are left alone, as are
        those a concurrent claim is taking (PostgreSQL skips them rather than wait).

        ``among``: only those pages (the others of them left alone): a worker claims the
        links it just found on its own part's hosts in the transaction that records them,
        and queues them at once, as the daemon queues its links."""
        if not 0 <= part < parts:
            raise ValueError(f"part {part} is not in 0..{parts - 1}")
        if limit < 1 or lease_s <= 0:
            raise ValueError("limit and lease_s must be positive")
        now = time.time() if now is None else now
        chunks = [None] if among is None else chunked(list(dict.fromkeys(map(int, among))), 900)
        claimed: list[int] = []
        with self._write() as conn:
            for chunk in chunks:
                if len(claimed) >= limit:
                    break
                where, values = (
                    ("", []) if chunk is None else self.dialect.among("id", chunk, first=8)
                )
                sql = _claim_sql(self.dialect.skip_locked, where and f"AND {where}")
                params = (worker, now + lease_s, parts, part, now, due_by, limit - len(claimed))
                rows = conn.execute(sql, (*params, *values)).fetchall()
                claimed += (row[0] for row in rows)
        return sorted(claimed)

    def release_claims(self, url_ids: Iterable[int], worker: str) -> int:
        """End ``worker``'s claims on pages it is done with (written back, or given up);
        returns how many it still held (a lease that expired may be another's by now)."""
        released = 0
        with self._write() as conn:
            for chunk in chunked(list(dict.fromkeys(int(i) for i in url_ids)), 900):
                where, values = self.dialect.among("id", chunk)
                released += conn.execute(
                    "UPDATE pages SET claimed_by = NULL, claimed_until = NULL "
                    f"WHERE claimed_by = ? AND {where}",
                    (worker, *values),
                ).rowcount
        return released

    def claimed_by(self, worker: str) -> list[int]:
        """The pages ``worker`` holds a claim on (live or expired), ascending."""
        rows = self._all("SELECT id FROM pages WHERE claimed_by = ? ORDER BY id", (worker,))
        return [row[0] for row in rows]
