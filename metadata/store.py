"""The metadata store's core: its connections, its transactions and its locks.

Every subject of the store (:mod:`metadata.page_ids`, :mod:`metadata.fetches`,
:mod:`metadata.links`, :mod:`metadata.status`, :mod:`metadata.state`, :mod:`metadata.ranks`,
:mod:`metadata.claims`, :mod:`metadata.cash_transfers`) is a mixin over :class:`Store`, and
:class:`metadata.manager.Metadata` composes them. Writes run in explicit transactions, one
per API call (a fetch result's page record, links and observation commit together or not at
all), begun as the engine's
:class:`~metadata.dialect.Dialect` says (SQLite's ``BEGIN IMMEDIATE``); readers — the CLI,
a second process — work while the daemon writes (SQLite's WAL, PostgreSQL's MVCC). Hot
paths (id assignment, fetch results, link replacement) are batched: ``executemany``, or
``COPY`` on PostgreSQL.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from metadata import schema
from metadata.clock import Clock
from metadata.dialect import Connection, dialect_of
from metadata.engines import Engine
from metadata.errors import MetadataError, NotARepository, StoreError, UnknownPage, translated
from metadata.settings import MetadataSettings

LOOKUP_CHUNK = 900  # URLs per "WHERE url IN (...)" probe


class Store:
    """One repository's connections and transactions, shared by every subject's mixin.

    One object may be shared by threads: calls are serialised by a lock.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        readonly: bool,
        clock: Clock,
        settings: MetadataSettings,
    ) -> None:
        self._engine = engine
        self.dialect = engine.dialect
        target = engine.target
        self.name = target.name  # what errors call the store (a URL without its password)
        self.path: Path | str = target.path or target.place or target.name
        """the SQLite file, or where one would be (``REPO/metadata.db``: caches such as the
        crawler's seen-URL table go beside it), or a PostgreSQL store named by URL alone"""
        self.readonly = readonly
        self.clock = clock
        self.settings = settings
        self._lock = threading.RLock()
        with translated(self.name):
            self._conn = engine.connect()  # the writer: every call but the scans
        self._open_transactions = 0  # > 0 inside transaction(): writes join the outer one
        self._scanner: Connection | None = None  # opened by the first _scan
        self._scan_lock = threading.RLock()  # held for a whole snapshot() by its thread
        self._committed: list[Callable[[], None]] = []  # run after the transaction commits

    def close(self) -> None:
        """Close the connections (committed data is already safe)."""
        with self._lock:
            self._engine.release(self._conn)
        with self._scan_lock:
            if self._scanner is not None:
                self._engine.release(self._scanner)
                self._scanner = None
        self._engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One write transaction: all of the block commits, or none of it.

        Inside :meth:`transaction` the block joins the outer transaction instead. The
        callbacks given to :meth:`_after_commit` in the block run once the outermost
        transaction has committed. Database errors leave as :class:`StoreError`.
        """
        if self.readonly:
            raise MetadataError(f"{self.name}: opened read-only, cannot write")
        with self._lock, translated(self.name):
            if self._open_transactions:
                yield self._conn
                return
            self._conn.execute(self.dialect.begin_write)
            self._open_transactions += 1
            self._committed = []
            try:
                yield self._conn
            except BaseException:
                rollback(self._conn)
                raise
            finally:
                self._open_transactions -= 1
            self._conn.execute("COMMIT")
            for callback in self._committed:
                callback()

    def _after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the write transaction in progress commits (never if it
        rolls back): what must follow a commit, such as removing a file no row names now."""
        self._committed.append(callback)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several write calls into one transaction (a loader's batch of documents).

        Every write made in the block commits at its end, or none does if it raises. The
        calling thread holds the manager for the whole block: keep it short (collect the
        writes first, then make them here).

        >>> import tempfile, pathlib
        >>> from metadata import Metadata
        >>> from metadata.types import LoadStatus
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
        >>> with Metadata.create(path) as md:
        ...     a, b = md.ids_for(["http://a.test/", "http://b.test/"])
        ...     with md.transaction():
        ...         md.set_children_many([(a, [b], [])])
        ...         md.set_status_many([(a, LoadStatus.LOADED, "version 1")])
        ...     md.children(a).tolist(), md.status(a)
        ([2], (<LoadStatus.LOADED: 'LOADED'>, 'version 1'))
        """
        with self._write():
            yield

    def _one(self, sql: str, params: Sequence[object] = ()) -> tuple | None:
        """The first row of a one-statement query, or None."""
        with self._lock, translated(self.name):
            return self._conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Every row of a one-statement query."""
        with self._lock, translated(self.name):
            return self._conn.execute(sql, params).fetchall()

    def _scan(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Every row of a long read of the whole table, on a read-only connection of its own.

        A scan of every page takes long on a big repository; on the shared connection it
        would hold the writers (the crawler's, on the daemon's event loop) for all that time.
        In WAL mode the scan reads the last committed snapshot while they go on.
        """
        with self._scan_lock, translated(self.name):
            return self._engine.scan(self._scan_connection(), sql, params)

    def _scan_connection(self) -> Connection:
        """The scans' own read-only connection, opened on first use (hold ``_scan_lock``)."""
        if self._scanner is None:
            self._scanner = self._engine.connect(reader=True)
        return self._scanner

    @contextmanager
    def _reader(self) -> Iterator[Connection]:
        """A connection of its own in one read transaction (a long export's snapshot)."""
        with translated(self.name):
            conn = self._engine.connect(reader=True)
            try:
                conn.execute(self.dialect.begin_snapshot)
                yield conn
                conn.execute("COMMIT")
            finally:
                rollback(conn)
                self._engine.release(conn)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Make the whole-table reads of the block see one committed state of the database.

        :meth:`refresh_view` and :meth:`observation_history` are two scans: a crawler that
        commits between them would give pages whose history the view lacks. Inside the block
        both read the snapshot taken by the first of them (one read transaction on the scan
        connection; WAL writers go on meanwhile). Other threads' scans wait for the block to
        end; blocks nest.

        >>> import tempfile, pathlib
        >>> from metadata import Metadata
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
        >>> with Metadata.create(path) as md, md.snapshot():
        ...     len(md.refresh_view()["id"]), len(md.observation_history()["id"])
        (0, 0)
        """
        with self._scan_lock, translated(self.name):
            scanner = self._scan_connection()
            if scanner.in_transaction:  # an outer snapshot() of this thread
                yield
                return
            scanner.execute(self.dialect.begin_snapshot)
            try:
                yield
            finally:
                scanner.execute("COMMIT")  # a read transaction: ends the snapshot

    @contextmanager
    def _read(self, several: bool = True) -> Iterator[Connection]:
        """A consistent snapshot for a read that takes several statements; for one
        (``several`` False: a batch that fits one chunk) the statement is its own snapshot,
        and the BEGIN and COMMIT two round trips saved on PostgreSQL."""
        with self._lock, translated(self.name):
            if not several:
                yield self._conn
                return
            self._conn.execute(self.dialect.begin_snapshot)
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")


def rollback(conn: Connection) -> None:
    """End a failed transaction, unless SQLite already rolled it back (it does on a full
    disk or an I/O error: a second ROLLBACK would hide that error behind its own)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def check_application(conn: Connection, name: str | Path) -> None:
    """Refuse any database that is not a xyleme metadata database."""
    try:
        with translated(name):
            row = conn.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
    except StoreError:  # no meta table, in either engine's words: not ours
        rollback(conn)
        row = None
    if row is None or row[0] != schema.APPLICATION:
        raise NotARepository(name, "a database, but not xyleme's metadata")


def lookup_pages(conn: Connection, ids: list[int], columns: str) -> list[tuple]:
    """``SELECT columns`` of the pages among ``ids`` that exist (chunked ``IN`` probes)."""
    rows: list[tuple] = []
    for chunk in chunked(list(dict.fromkeys(ids)), LOOKUP_CHUNK):
        where, values = dialect_of(conn).among("id", chunk)
        rows += conn.execute(f"SELECT {columns} FROM pages WHERE {where}", values).fetchall()
    return rows


def require_page(conn: Connection, url_id: int) -> None:
    if conn.execute("SELECT 1 FROM pages WHERE id = ?", (url_id,)).fetchone() is None:
        raise UnknownPage(url_id)


def require_pages(conn: Connection, url_ids: list[int]) -> None:
    """Raise :class:`UnknownPage` for the first of ``url_ids`` that has no page."""
    wanted = list(dict.fromkeys(url_ids))
    known = {row[0] for row in lookup_pages(conn, wanted, "id")}
    for url_id in wanted:
        if url_id not in known:
            raise UnknownPage(url_id)


def max_id(conn: Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM pages").fetchone()[0]


def chunked(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def as_columns(rows: list[tuple], width: int) -> list[tuple]:
    """Rows turned into columns (``width`` empty tuples when there are no rows)."""
    return list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
