"""The store's revisit subject: per URL, the last WARC response record the archive wrote.

Its contract is :class:`metadata.api.RevisitsAPI`; the archive (``xyleme.archive``) uses it.

A revisit record must name the response it repeats (WARC-Refers-To, its date and payload
digest), and that response must be in *this* archive (it may have been switched off when
the metadata last saw the page), so the archive keeps its own small table, a private file
next to its WARC files (like the crawler's seen-URL table next to metadata.db), read and
written by the archive's writer process only. It is committed after the WARC files are
flushed: after a crash it may miss the last records (the next fetch then writes a full
response again), never name a record that is not on disk.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

from metadata.errors import translated
from metadata.store import rollback

INDEX_NAME = "revisits.sqlite"


class Stored(NamedTuple):
    """The last response record of a URL."""

    md5: str
    record_id: str
    date: str
    digest: str


class RevisitIndex:
    """URL → :class:`Stored`, in ``folder/revisits.sqlite`` (one thread)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / INDEX_NAME
        with translated(self.path):
            self._conn = sqlite3.connect(self.path, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS stored(url TEXT PRIMARY KEY, md5 TEXT NOT NULL, "
                "record_id TEXT NOT NULL, date TEXT NOT NULL, digest TEXT NOT NULL) WITHOUT ROWID"
            )
        self._pending: dict[str, Stored] = {}

    def get(self, url: str) -> Stored | None:
        pending = self._pending.get(url)
        if pending is not None:
            return pending
        with translated(self.path):
            row = self._conn.execute(
                "SELECT md5, record_id, date, digest FROM stored WHERE url = ?", (url,)
            ).fetchone()
        return None if row is None else Stored(*row)

    def put(self, url: str, stored: Stored) -> None:
        """Remember a response record (kept in memory until :meth:`commit`)."""
        self._pending[url] = stored

    def commit(self) -> None:
        """Write what :meth:`put` remembered (call after the WARC files are flushed)."""
        if not self._pending:
            return
        rows = [(url, *stored) for url, stored in self._pending.items()]
        with translated(self.path):
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("INSERT OR REPLACE INTO stored VALUES (?, ?, ?, ?, ?)", rows)
            except BaseException:
                rollback(self._conn)
                raise
            self._conn.execute("COMMIT")
        self._pending.clear()

    def close(self) -> None:
        self.commit()
        self._conn.close()
