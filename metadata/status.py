"""Status-Data (paper §4): each document's loading status and the dependencies it waits for.

The loader parks a document until its DTDs and entities arrive; what it waits on is kept
here, so a restarted loader knows whom to wake when a dependency comes.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat

from metadata.dialect import upsert_sql
from metadata.store import LOOKUP_CHUNK, Store, chunked, require_page, require_pages
from metadata.types import LoadStatus

_COLUMNS = ("id", "status", "detail")


class LoadStatuses(Store):
    """Loading status and waits of documents."""

    def set_status(
        self,
        url_id: int,
        status: LoadStatus,
        detail: str | None = None,
        waiting_for: Iterable[int] = (),
    ) -> None:
        """Set a document's loading status and the dependencies it now waits for."""
        waiting = list(dict.fromkeys(int(dependency) for dependency in waiting_for))
        with self._write() as conn:
            require_page(conn, url_id)
            conn.execute(
                upsert_sql("load_status", _COLUMNS), (url_id, LoadStatus(status).value, detail)
            )
            conn.execute("DELETE FROM waiting WHERE page = ?", (url_id,))
            self.dialect.insert_many(
                conn, "waiting", ("dependency", "page"), zip(waiting, repeat(url_id))
            )

    def set_status_many(self, rows: Iterable[tuple[int, LoadStatus, str | None]]) -> None:
        """:meth:`set_status` for many ``(url_id, status, detail)`` in one transaction; the
        pages then wait for nothing (a loaded or failed document). An id without a page
        raises :class:`UnknownPage` and nothing is written."""
        values = [
            (int(url_id), LoadStatus(status).value, detail) for url_id, status, detail in rows
        ]
        with self._write() as conn:
            require_pages(conn, [row[0] for row in values])
            self.dialect.upsert_many(conn, "load_status", _COLUMNS, values)
            conn.executemany("DELETE FROM waiting WHERE page = ?", [(row[0],) for row in values])

    def status(self, url_id: int) -> tuple[LoadStatus, str | None] | None:
        """A document's loading status and detail, or None if it never had one."""
        row = self._one("SELECT status, detail FROM load_status WHERE id = ?", (url_id,))
        return None if row is None else (LoadStatus(row[0]), row[1])

    def statuses(self, url_ids: Iterable[int]) -> dict[int, tuple[LoadStatus, str | None]]:
        """:meth:`status` of many documents in one query (a loader's batch); the documents
        that never had one are left out."""
        wanted = list(dict.fromkeys(int(url_id) for url_id in url_ids))
        found: dict[int, tuple[LoadStatus, str | None]] = {}
        with self._read(len(wanted) > LOOKUP_CHUNK) as conn:
            for chunk in chunked(wanted, LOOKUP_CHUNK):
                where, values = self.dialect.among("id", chunk)
                rows = conn.execute(
                    f"SELECT id, status, detail FROM load_status WHERE {where}", values
                )
                found.update((url_id, (LoadStatus(s), d)) for url_id, s, d in rows)
        return found

    def awaited(self, dependency_ids: Iterable[int]) -> set[int]:
        """Those of ``dependency_ids`` that some document waits on (a loader's batch: one query)."""
        wanted = list(dict.fromkeys(int(url_id) for url_id in dependency_ids))
        awaited: set[int] = set()
        with self._read(len(wanted) > LOOKUP_CHUNK) as conn:
            for chunk in chunked(wanted, LOOKUP_CHUNK):
                where, values = self.dialect.among("dependency", chunk)
                rows = conn.execute(
                    f"SELECT DISTINCT dependency FROM waiting WHERE {where}", values
                )
                awaited.update(row[0] for row in rows)
        return awaited

    def waiting_for(self, url_id: int) -> list[int]:
        """The dependencies a document waits for (ascending URL-Ids)."""
        rows = self._all(
            "SELECT dependency FROM waiting WHERE page = ? ORDER BY dependency", (url_id,)
        )
        return [row[0] for row in rows]

    def waiting_on(self, dependency_id: int) -> list[int]:
        """The documents parked until ``dependency_id`` (a DTD, an entity) arrives."""
        rows = self._all(
            "SELECT page FROM waiting WHERE dependency = ? ORDER BY page", (dependency_id,)
        )
        return [row[0] for row in rows]
