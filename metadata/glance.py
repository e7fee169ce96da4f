"""A glance at a repository with :mod:`sqlite3` alone: its named state, its pages counted by
type, the latest time it recorded; opened writable, the named state only (the command table
``xyleme status`` asks a running daemon through).

Why not :class:`metadata.Metadata`: opening the manager imports numpy, sqlite-utils and
pydantic (0.2 s of CPU), and ``xyleme status`` must start in a tenth of that. The queries
live here once; the manager's :meth:`~metadata.state.NamedState.get_state`,
:meth:`~metadata.state.NamedState.latest_time` and ``count_by_type`` run the same functions
on their own connections.

>>> import tempfile, pathlib
>>> from metadata import Metadata
>>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
>>> with Metadata.create(path) as md:
...     md.put_state("paused", b"1")
>>> with Glance.open(path) as glance:
...     glance.get_state("paused"), glance.latest_time()
(b'1', None)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Self
from urllib.parse import quote

from metadata.errors import NotARepository, SchemaTooNew
from metadata.schema import APPLICATION, latest_version
from metadata.types import PageType


def state_value(conn: sqlite3.Connection, key: str) -> bytes | None:
    """The named blob ``key``, or None."""
    row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return None if row is None else bytes(row[0])


def put_state_value(conn: sqlite3.Connection, key: str, value: bytes) -> None:
    """Store the named blob ``key`` (in the caller's transaction, or on its own)."""
    conn.execute(
        "INSERT INTO state(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, bytes(value)),
    )


def delete_state_value(conn: sqlite3.Connection, key: str) -> bool:
    """Remove the named blob ``key``; whether it was there (of two takers, one gets True)."""
    return conn.execute("DELETE FROM state WHERE key = ?", (key,)).rowcount == 1


def latest_time(conn: sqlite3.Connection) -> float | None:
    """The latest simulated time recorded: a read or failed fetch, a discovery, a refusal."""
    pages = conn.execute("SELECT max(last_access), max(discovered_at) FROM pages").fetchone()
    (refused,) = conn.execute("SELECT max(at) FROM rejected").fetchone()
    return max((float(t) for t in (*pages, refused) if t is not None), default=None)


def type_counts(conn: sqlite3.Connection) -> dict[PageType, int]:
    """How many pages of each type (every type present, zeros included)."""
    counts = dict(conn.execute("SELECT type, count(*) FROM pages GROUP BY type").fetchall())
    return {page_type: counts.get(page_type.value, 0) for page_type in PageType}


def check_readable(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file that is not our database, or whose schema this version cannot read
    without migrating it (a reader never writes)."""
    try:
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError:  # no such table (a file that is not SQLite raises on)
        rows = {}
    if rows.get("application") != APPLICATION:
        raise NotARepository(path, "a database, but not xyleme's metadata")
    found = int(rows["schema_version"])
    if found > latest_version():
        raise SchemaTooNew(path, found, latest_version())
    if found < latest_version():
        raise NotARepository(
            path,
            f"schema version {found} needs migrating to {latest_version()}: "
            "open it once read-write",
        )


class Glance:
    """One connection and the reads ``xyleme status`` needs, plus, when opened writable, the
    named state's writes its command to the daemon needs (the same method names as
    :class:`metadata.Metadata`, so a reader, or :mod:`xyleme.commands`, takes either)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    @classmethod
    def open(cls, path: str | Path, *, writable: bool = False) -> Glance:
        """The repository database at ``path``, read-only unless ``writable`` (each write
        then commits on its own); raises :class:`NotARepository` or :class:`SchemaTooNew` as
        :meth:`metadata.Metadata.open` would."""
        path = Path(path)
        if not path.is_file():
            from metadata.engines import configured_url  # only a file-less repository pays

            url = configured_url(path.parent)
            if url and not url.startswith("sqlite:"):
                return cls._postgres(url, writable=writable)
            raise NotARepository(path, "no such database file (create one with `xyleme init`)")
        uri = f"file:{quote(str(path.resolve()))}?mode={'rw' if writable else 'ro'}"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout = 5000")  # a writer's checkpoint may hold it
            check_readable(conn, path)
        except sqlite3.DatabaseError as error:
            conn.close()
            raise NotARepository(path, f"not an SQLite database, or corrupt ({error})") from None
        except BaseException:
            conn.close()
            raise
        return cls(conn)

    @classmethod
    def _postgres(cls, url: str, *, writable: bool) -> Glance:
        """A glance at the PostgreSQL store a repository's ``xyleme.toml`` names."""
        import psycopg

        from metadata.dialect import PgConnection
        from metadata.engines import CONNECT_TIMEOUT_S, target_of
        from metadata.errors import StoreError, translated

        name = target_of(url).name
        try:
            with translated(name):
                raw = psycopg.connect(
                    url,
                    autocommit=True,
                    connect_timeout=CONNECT_TIMEOUT_S,
                    options="" if writable else "-c default_transaction_read_only=on",
                )
        except StoreError as error:
            raise NotARepository(name, f"cannot connect ({error.why})") from None
        conn = PgConnection(raw)
        try:
            with translated(name):
                check_readable(conn, name)  # type: ignore[arg-type]
        except StoreError as error:
            conn.close()
            raise NotARepository(name, f"unreadable database ({error.why})") from None
        except BaseException:
            conn.close()
            raise
        return cls(conn)  # type: ignore[arg-type]

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def get_state(self, key: str) -> bytes | None:
        return state_value(self._conn, key)

    def put_state(self, key: str, value: bytes) -> None:
        put_state_value(self._conn, key, value)

    def delete_state(self, key: str) -> bool:
        return delete_state_value(self._conn, key)

    def latest_time(self) -> float | None:
        return latest_time(self._conn)

    def count_by_type(self) -> dict[PageType, int]:
        return type_counts(self._conn)

    def workers(self, *, now: float | None = None) -> list[dict]:
        """The crawl workers' and coordinators' rows (:mod:`metadata.heartbeats`)."""
        import time

        from metadata.heartbeats import worker_rows

        return worker_rows(self._conn, time.time() if now is None else now)
