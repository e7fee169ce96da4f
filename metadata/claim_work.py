"""What a crawl worker does with the pages it claimed (:mod:`metadata.claims` takes them):
read their URLs, keep its leases alive while they wait in its queue, and end each claim once
its fetch is committed.

Ending a claim also ends the page's due date (``next_refresh`` back to NULL): the refresh
pass of the coordinator gives the page its next one from the read just committed, and until
then the page is not due (a read page without ``next_refresh`` never is), so it is not read
twice. A page the worker could not queue (its scope refuses it, say) is postponed instead:
due again ``not_before`` (or at the next refresh pass, which plans every page anew), so it
does not come back at every claim.
"""

from __future__ import annotations

from collections.abc import Iterable

from metadata.store import Store, chunked

CHUNK = 900
"""URL-Ids per statement (SQLite binds at most 999 parameters)."""


class ClaimWork(Store):
    """The URLs, leases and ends of a worker's claims."""

    def claimed_pages(self, url_ids: Iterable[int]) -> list[tuple[int, str, bool, bool]]:
        """``(url_id, url, read, background)`` of each page: ``read`` whether it was ever
        fetched (the worker queues a read page as a refresh, an unread one as a discovery),
        ``background`` whether it is DEAD or answered with a redirect (re-checked at the
        background level, as the daemon does); in the order given, unknown ids left out."""
        wanted = list(dict.fromkeys(int(i) for i in url_ids))
        found: dict[int, tuple[int, str, bool, bool]] = {}
        for chunk in chunked(wanted, CHUNK):
            where, values = self.dialect.among("id", chunk)
            rows = self._all(
                "SELECT id, url, last_access IS NOT NULL, "
                f"type = 'DEAD' OR redirect_to IS NOT NULL FROM pages WHERE {where}",
                values,
            )
            found.update((row[0], (row[0], row[1], bool(row[2]), bool(row[3]))) for row in rows)
        return [found[url_id] for url_id in wanted if url_id in found]

    def renew_claims(self, url_ids: Iterable[int], worker: str, until: float) -> int:
        """Extend ``worker``'s leases on these pages to ``until`` (wall clock); returns how
        many it still held (a lease that ran out may be another worker's now)."""
        return self._update_pages(
            "SET claimed_until = ? WHERE claimed_by = ?", (until, worker), url_ids
        )

    def finish_claims(
        self, url_ids: Iterable[int], worker: str, *, not_before: float | None = None
    ) -> int:
        """End ``worker``'s claims on pages whose fetch is committed: not due until the next
        refresh pass plans them (``next_refresh`` NULL), or, with ``not_before``, due again
        then (pages it could not queue). Returns how many claims it still held."""
        return self._update_pages(
            "SET claimed_by = NULL, claimed_until = NULL, next_refresh = ? WHERE claimed_by = ?",
            (not_before, worker),
            url_ids,
        )

    def make_due(self, url_ids: Iterable[int], at: float) -> int:
        """Give the pages that have no due date one at ``at`` (simulated time): the retries
        a coordinator's refresh pass plans (a failed page has no ``next_refresh`` of its
        own), so a worker claims them. Pages already due keep their date (the most overdue
        are claimed first). Returns how many got one."""
        return self._update_pages("SET next_refresh = ? WHERE next_refresh IS NULL", (at,), url_ids)

    def _update_pages(self, change: str, params: tuple, url_ids: Iterable[int]) -> int:
        """``UPDATE pages {change} AND id IN (…)`` over the pages, in chunks, in one
        transaction; how many rows it changed."""
        changed = 0
        with self._write() as conn:
            for chunk in chunked(list(dict.fromkeys(int(i) for i in url_ids)), CHUNK):
                where, values = self.dialect.among("id", chunk)
                changed += conn.execute(
                    f"UPDATE pages {change} AND {where}", (*params, *values)
                ).rowcount
        return changed
