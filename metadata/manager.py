"""The metadata manager (paper §4): the one object that reads and writes ``metadata.db``.

Other modules deal only in URL-Ids, records and numpy arrays; every SQL statement of xyleme
lives in this package. Writes run in explicit ``BEGIN IMMEDIATE`` transactions, one per API
call (a fetch result's page record, links and observation commit together or not at all);
the database is in WAL mode so readers — the CLI, a second process — work while the daemon
writes. Hot paths (id assignment, fetch results, link replacement) are ``executemany`` on the
sqlite-utils connection.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import repeat
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

import numpy as np
import sqlite_utils

from metadata import schema
from metadata.clock import CLOCK_STATE, Clock, SystemClock, decode_clock, resume_clock
from metadata.encoding import (
    OBSERVATION_BYTES,
    decode_ids,
    decode_observations,
    encode_ids,
    encode_observation,
    history_arrays,
)
from metadata.errors import (
    InvalidURL,
    MetadataError,
    NotARepository,
    RepositoryExists,
    SchemaTooNew,
    UnknownPage,
)
from metadata.link_matrix import LinkMatrix, link_steps, rechunk
from metadata.settings import MetadataSettings
from metadata.types import (
    PAGE_TYPE_CODE,
    SCORE_COLUMNS,
    FetchResult,
    LoadStatus,
    Observation,
    PageRecord,
    PageType,
    RejectedLink,
)
from metadata.urls import MAX_URL_LENGTH, canonicalize_url

_LOOKUP_CHUNK = 900  # URLs per "WHERE url IN (...)" probe
_REJECTED_URL_CHARS = 4 * MAX_URL_LENGTH  # a rejected URL is kept up to this length
_TYPE_CODES = {page_type.value: code for page_type, code in PAGE_TYPE_CODE.items()}
_FAILED_TYPES = frozenset({PageType.ERROR, PageType.DEAD})

# PageRecord's fields and the pages columns that hold them (the same name but for two).
_RECORD_FIELDS = [name for name in PageRecord.__slots__ if name != "observations"]
_RECORD_COLUMNS = ", ".join(
    {"url_id": "id", "page_type": "type"}.get(name, name) for name in _RECORD_FIELDS
)

# ?1 type, ?2 status, ?3 at, ?4 last_change, ?5 md5, ?6 etag, ?7 last_modified,
# ?8 content_type, ?9 size, ?10 refreshed (0/1), ?11 unchanged (0/1), ?12 redirect_to, ?13 id,
# ?14 robots, ?15 canonical_to.
# A 200 (md5 given) states the validators afresh; a 304 keeps the old ones unless resent,
# and keeps the robots directives and canonical target (it has no body to state them).
_UPDATE_READ = """
UPDATE pages SET type = ?1, status = ?2, reason = NULL, failures = 0,
  first_access = coalesce(first_access, ?3), last_access = ?3,
  last_change = coalesce(?4, last_change),
  md5 = coalesce(?5, md5),
  etag = CASE WHEN ?5 IS NULL THEN coalesce(?6, etag) ELSE ?6 END,
  last_modified = CASE WHEN ?5 IS NULL THEN coalesce(?7, last_modified) ELSE ?7 END,
  content_type = coalesce(?8, content_type), size = coalesce(?9, size),
  refreshes = refreshes + ?10, unchanged_accesses = unchanged_accesses + ?11,
  redirect_to = ?12,
  robots = CASE WHEN ?2 = 304 THEN robots ELSE ?14 END,
  canonical_to = CASE WHEN ?2 = 304 THEN canonical_to ELSE ?15 END
WHERE id = ?13
"""
# ?1 type, ?2 status, ?3 reason, ?4 at, ?5 id.
_UPDATE_FAILED = """
UPDATE pages SET type = ?1, status = ?2, reason = ?3, failures = failures + 1,
  first_access = coalesce(first_access, ?4), last_access = ?4
WHERE id = ?5
"""
_UPSERT_CHILDREN = """
INSERT INTO links(id, children, extra) VALUES (?, ?, ?)
ON CONFLICT(id) DO UPDATE SET children = excluded.children, extra = excluded.extra
"""
_UPSERT_CHILDREN_AND_DEPENDENCIES = """
INSERT INTO links(id, children, extra, dependencies) VALUES (?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET children = excluded.children, extra = excluded.extra,
  dependencies = excluded.dependencies
"""
_UPSERT_STATUS = """
INSERT INTO load_status(id, status, detail) VALUES (?, ?, ?)
ON CONFLICT(id) DO UPDATE SET status = excluded.status, detail = excluded.detail
"""
# "||" joins blobs as text, byte for byte; the CAST makes substr count bytes again.
_APPEND_OBSERVATION = """
INSERT INTO observations(id, history) VALUES (?1, ?2)
ON CONFLICT(id) DO UPDATE SET
  history = substr(CAST(history || excluded.history AS BLOB), -?3)
"""


_VIEW_COLUMNS = [
    *("id", "type", "refreshes", "unchanged_accesses", "failures"),
    *("discovered_at", "first_access", "last_access", "last_change", "last_modified"),
    *("change_rate", "importance", "interest", "opic_cash", "opic_importance", "next_refresh"),
]


class Metadata:
    """Map-, Refresh-, Link- and Status-Data of one repository (paper §4).

    Open it with :meth:`create` or :meth:`open`, never with the constructor; use it as a
    context manager or call :meth:`close`. One object may be shared by threads: calls are
    serialised by a lock.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
    >>> with Metadata.create(path) as md:
    ...     md.ids_for(["http://example.com/", "mailto:someone@example.com"])
    [1, None]
    """

    def __init__(
        self,
        db: sqlite_utils.Database,
        path: Path,
        *,
        readonly: bool,
        clock: Clock,
        settings: MetadataSettings,
    ) -> None:
        self._db = db
        self._conn = db.conn  # the hot paths run executemany on sqlite-utils' connection
        self.path = path
        self.readonly = readonly
        self.clock = clock
        self.settings = settings
        self._lock = threading.RLock()
        self._open_transactions = 0  # > 0 inside transaction(): writes join the outer one
        self._scanner: sqlite3.Connection | None = None  # opened by the first _scan
        self._scan_lock = threading.RLock()  # held for a whole snapshot() by its thread

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    def create(
        cls,
        path: str | Path,
        *,
        clock: Clock | None = None,
        settings: MetadataSettings | None = None,
    ) -> Metadata:
        """A new, empty database at ``path``; :class:`RepositoryExists` if a file is there.

        The schema is built in a scratch file linked into place at the end, so a crash
        leaves either a whole database or none.
        """
        path = Path(path)
        if path.exists():
            raise RepositoryExists(path)
        if not path.parent.is_dir():
            raise NotARepository(path, "its folder does not exist")
        scratch = path.with_name(f".{path.name}.{os.getpid()}.creating")
        scratch.unlink(missing_ok=True)
        conn = sqlite3.connect(scratch, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            schema.create_schema(conn)
            schema.migrate(conn, path)
            conn.execute("COMMIT")
        finally:
            conn.close()  # the last connection checkpoints and removes the WAL
        try:
            os.link(scratch, path)  # unlike rename, refuses to replace a file made meanwhile
        except FileExistsError:
            raise RepositoryExists(path) from None
        finally:
            scratch.unlink()
        return cls.open(path, clock=clock, settings=settings)

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        readonly: bool = False,
        clock: Clock | None = None,
        settings: MetadataSettings | None = None,
    ) -> Metadata:
        """The existing database at ``path``, migrated to the current schema if older.

        Raises :class:`NotARepository` naming the file when it is missing, corrupt or not
        ours, and :class:`SchemaTooNew` when a newer xyleme wrote it. ``readonly`` opens it
        for queries only (the CLI): it never writes, so it cannot migrate either.
        """
        path = Path(path)
        settings = settings or MetadataSettings()
        if not path.is_file():
            raise NotARepository(path, "no such database file (create one with `xyleme init`)")
        conn = _connect(path, readonly=readonly, settings=settings)
        try:
            db = sqlite_utils.Database(conn)
            _check_application(db, path)
            if readonly:
                found = schema.schema_version(conn)
                if found > schema.latest_version():
                    raise SchemaTooNew(path, found, schema.latest_version())
                if found < schema.latest_version():
                    raise NotARepository(
                        path,
                        f"schema version {found} needs migrating to "
                        f"{schema.latest_version()}: open it once read-write",
                    )
            else:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    schema.migrate(conn, path)
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise NotARepository(path, f"unreadable database ({error})") from None
        except BaseException:
            conn.close()
            raise
        md = cls(db, path, readonly=readonly, clock=clock or SystemClock(), settings=settings)
        if clock is None and not readonly:  # a writer dates what it stores on one rule
            md.clock = md.repository_clock(running=False)
        return md

    def close(self) -> None:
        """Close the connections (committed data is already safe)."""
        with self._lock:
            self._conn.close()
        with self._scan_lock:
            if self._scanner is not None:
                self._scanner.close()
                self._scanner = None

    def __enter__(self) -> Metadata:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of the block commits, or none of it.

        Inside :meth:`transaction` the block joins the outer transaction instead.
        """
        if self.readonly:
            raise MetadataError(f"{self.path}: opened read-only, cannot write")
        with self._lock:
            if self._open_transactions:
                yield self._conn
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._open_transactions += 1
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            finally:
                self._open_transactions -= 1
            self._conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several write calls into one transaction (a loader's batch of documents).

        Every write made in the block commits at its end, or none does if it raises. The
        calling thread holds the manager for the whole block: keep it short (collect the
        writes first, then make them here).

        >>> import tempfile, pathlib
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
        with self._lock:
            return self._conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Every row of a one-statement query."""
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _scan(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Every row of a long read of the whole table, on a read-only connection of its own.

        A scan of every page takes long on a big repository; on the shared connection it
        would hold the writers (the crawler's, on the daemon's event loop) for all that time.
        In WAL mode the scan reads the last committed snapshot while they go on.
        """
        with self._scan_lock:
            return self._scan_connection().execute(sql, params).fetchall()

    def _scan_connection(self) -> sqlite3.Connection:
        """The scans' own read-only connection, opened on first use (hold ``_scan_lock``)."""
        if self._scanner is None:
            self._scanner = _connect(self.path, readonly=True, settings=self.settings)
        return self._scanner

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Make the whole-table reads of the block see one committed state of the database.

        :meth:`refresh_view` and :meth:`observation_history` are two scans: a crawler that
        commits between them would give pages whose history the view lacks. Inside the block
        both read the snapshot taken by the first of them (one read transaction on the scan
        connection; WAL writers go on meanwhile). Other threads' scans wait for the block to
        end; blocks nest.

        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
        >>> with Metadata.create(path) as md, md.snapshot():
        ...     len(md.refresh_view()["id"]), len(md.observation_history()["id"])
        (0, 0)
        """
        with self._scan_lock:
            scanner = self._scan_connection()
            if scanner.in_transaction:  # an outer snapshot() of this thread
                yield
                return
            scanner.execute("BEGIN")
            try:
                yield
            finally:
                scanner.execute("COMMIT")  # a read transaction: ends the snapshot

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for a read that takes several statements."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                yield self._conn
            finally:
                self._conn.execute("COMMIT")

    def latest_time(self) -> float | None:
        """The latest simulated time the repository recorded (a read or failed fetch, a
        discovery, a refusal), None when empty: a clock resumes from it after a crash, since
        the clock's own checkpoint may be older than what was committed after it."""
        with self._scan_lock:
            conn = self._scan_connection()
            pages = conn.execute("SELECT max(last_access), max(discovered_at) FROM pages")
            (refused,) = conn.execute("SELECT max(at) FROM rejected").fetchone()
            times = [*pages.fetchone(), refused]
        return max((float(t) for t in times if t is not None), default=None)

    def repository_clock(
        self, speed: float | None = None, *, start: float | None = None, running: bool = True
    ) -> Clock:
        """This repository's clock at ``speed`` (default the stored one, else 1: wall time),
        resumed from the latest time recorded: :meth:`latest_time` or the stored clock's
        checkpoint, or from ``start`` (default now) when it recorded none
        (:func:`~metadata.clock.resume_clock`; ``running=False`` holds a simulated clock
        still, for a command run while no daemon runs)."""
        stored = decode_clock(self.get_state(CLOCK_STATE))
        times = [self.latest_time(), stored[0] if stored else None]
        latest = max((t for t in times if t is not None), default=None)
        speed = speed if speed is not None else stored[1] if stored else 1.0
        return resume_clock(speed, latest, start=start, running=running)

    # ------------------------------------------------------------------ Map-Data

    def ids_for(
        self,
        urls: Iterable[str],
        *,
        referrer: int | None = None,
        create: bool = True,
        canonical: bool = False,
    ) -> list[int | None]:
        """The URL-Id of each URL, in order, creating the missing ones in one transaction.

        Invalid URLs get None and, when ``create``, a row in the rejected-links table naming
        ``referrer``. ``create=False`` only looks up (None for unknown URLs).
        ``canonical=True`` promises the URLs already come from :func:`canonicalize_url`
        (a crawler that canonicalised them while extracting links) and skips that step.
        """
        keys: list[str | None] = []
        refused: list[tuple[str, str]] = []
        if canonical:
            keys = list(urls)
        else:
            for url in urls:
                try:
                    keys.append(canonicalize_url(url))
                except InvalidURL as error:
                    keys.append(None)
                    refused.append((url, error.reason))
        wanted = list(dict.fromkeys(key for key in keys if key is not None))
        if not create:
            with self._read() as conn:
                known = _lookup_ids(conn, wanted)
            return [None if key is None else known.get(key) for key in keys]
        with self._write() as conn:
            known = _lookup_ids(conn, wanted)
            missing = [key for key in wanted if key not in known]
            if missing:
                start = _max_id(conn) + 1
                new_ids = range(start, start + len(missing))
                conn.executemany(
                    "INSERT INTO pages(id, url, discovered_at) VALUES (?, ?, ?)",
                    zip(new_ids, missing, repeat(self.clock.now())),
                )
                known.update(zip(missing, new_ids, strict=True))
            if refused:
                self._insert_rejected(conn, refused, referrer)
        return [None if key is None else known[key] for key in keys]

    def id_for(self, url: str, create: bool = True) -> int | None:
        """The URL-Id of one URL (None if invalid, or unknown and not ``create``)."""
        return self.ids_for([url], create=create)[0]

    def url_of(self, url_id: int) -> str:
        """The canonical URL of a URL-Id; :class:`UnknownPage` if there is none."""
        return self.urls_of([url_id])[0]

    def urls_of(self, ids: Iterable[int]) -> list[str]:
        """The canonical URLs of many URL-Ids, in order; :class:`UnknownPage` on the first
        unknown one."""
        wanted = [int(url_id) for url_id in ids]
        with self._read() as conn:
            found = dict(_lookup_pages(conn, wanted, "id, url"))
        try:
            return [found[url_id] for url_id in wanted]
        except KeyError as error:
            raise UnknownPage(error.args[0]) from None

    def reject(self, urls: str | Iterable[str], reason: str, referrer: int | None = None) -> None:
        """Keep URLs refused for a reason of the caller's (out of scope, spider trap…).

        ``urls`` is one URL or many, recorded in one transaction.
        """
        batch = [urls] if isinstance(urls, str) else list(urls)
        with self._write() as conn:
            self._insert_rejected(conn, [(url, reason) for url in batch], referrer)

    def rejected(self, limit: int = 100) -> list[RejectedLink]:
        """The most recent refusals, newest first."""
        rows = self._all(
            "SELECT url, reason, referrer, at FROM rejected ORDER BY seq DESC LIMIT ?", (limit,)
        )
        return [RejectedLink(*row) for row in rows]

    def _insert_rejected(
        self, conn: sqlite3.Connection, refused: list[tuple[str, str]], referrer: int | None
    ) -> None:
        now = self.clock.now()
        conn.executemany(
            "INSERT INTO rejected(url, reason, referrer, at) VALUES (?, ?, ?, ?)",
            [(url[:_REJECTED_URL_CHARS], reason, referrer, now) for url, reason in refused],
        )
        conn.execute(
            "DELETE FROM rejected WHERE seq <= (SELECT max(seq) FROM rejected) - ?",
            (self.settings.rejected_limit,),
        )

    # ------------------------------------------------------------------ Refresh-Data

    def record_fetch(self, result: FetchResult) -> bool | None:
        """Record one fetch in its own transaction; returns whether the page changed."""
        return self.record_fetches([result])[0]

    def record_fetches(self, results: Sequence[FetchResult]) -> list[bool | None]:
        """Record fetch results in one transaction: page records, children, observations.

        A successful read (any type but ERROR/DEAD) updates the dates, validators and
        counters and appends an observation; ``changed`` is decided here from the stored MD5
        unless the result states it: None on the first read, False for a 304 (no MD5) or an
        equal MD5, True otherwise. ``refreshes`` counts the reads that could be compared
        with a previous one (the N access intervals of §6.1.1), ``unchanged_accesses`` the
        no-change ones. A failed fetch (ERROR/DEAD) records its status and reason and
        counts a failure; it is no observation. Children are replaced when the result has a
        list. Returns the ``changed`` of each result, for the crawler's events.
        Raises :class:`UnknownPage` (and writes nothing) if a URL-Id is unknown.
        """
        if not results:
            return []
        # Runs of reads and of failures, in the batch's order: a page fetched twice in one
        # batch ends as its last fetch left it.
        page_updates: list[tuple[str, list[tuple]]] = []
        histories: list[tuple[int, bytes, int]] = []
        children: list[tuple[int, bytes, int]] = []
        verdicts: list[bool | None] = []
        history_bytes = self.settings.observation_limit * OBSERVATION_BYTES
        with self._write() as conn:
            previous_md5 = _previous_md5(conn, [result.url_id for result in results])
            for result in results:
                if result.page_type in _FAILED_TYPES:
                    _append_run(
                        page_updates,
                        _UPDATE_FAILED,
                        (
                            result.page_type.value,
                            result.status,
                            result.reason,
                            result.fetched_at,
                            result.url_id,
                        ),
                    )
                    verdicts.append(None)
                else:
                    changed = _decide_changed(result, previous_md5[result.url_id])
                    if result.md5 is not None:
                        previous_md5[result.url_id] = result.md5
                    _append_run(
                        page_updates,
                        _UPDATE_READ,
                        (
                            result.page_type.value,
                            result.status,
                            result.fetched_at,
                            result.fetched_at if changed else None,
                            result.md5,
                            result.etag,
                            result.last_modified,
                            result.content_type,
                            result.size,
                            changed is not None,
                            changed is False,
                            result.redirect_to,
                            result.url_id,
                            result.robots,
                            result.canonical_to,
                        ),
                    )
                    observation = encode_observation(
                        result.fetched_at, changed, result.last_modified
                    )
                    histories.append((result.url_id, observation, history_bytes))
                    verdicts.append(changed)
                if result.children is not None:
                    children.append((result.url_id, *encode_ids(result.children)))
            for statement, rows in page_updates:
                conn.executemany(statement, rows)
            if histories:
                conn.executemany(_APPEND_OBSERVATION, histories)
            if children:
                conn.executemany(_UPSERT_CHILDREN, children)
        return verdicts

    def page(self, url_id: int) -> PageRecord:
        """The whole Refresh-Data record of a page, with its observation history."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM pages WHERE id = ?", (url_id,)
            ).fetchone()
            if row is None:
                raise UnknownPage(url_id)
            history = conn.execute(
                "SELECT history FROM observations WHERE id = ?", (url_id,)
            ).fetchone()
        fields = dict(zip(_RECORD_FIELDS, row, strict=True))
        fields["page_type"] = PageType(fields["page_type"])
        return PageRecord(
            **fields, observations=decode_observations(history[0] if history else None)
        )

    def page_by_url(self, url: str) -> PageRecord:
        """The record of a URL (canonicalised first); :class:`UnknownPage` if never seen."""
        url_id = self.id_for(url, create=False)
        if url_id is None:
            raise UnknownPage(canonicalize_url(url))
        return self.page(url_id)

    def observations(self, url_id: int) -> list[Observation]:
        """The bounded access history of a page, oldest first."""
        row = self._one("SELECT history FROM observations WHERE id = ?", (url_id,))
        return decode_observations(row[0] if row else None)

    def observation_history(self) -> dict[str, np.ndarray]:
        """Every page's history as arrays, for vectorised change-rate estimation (§6.1).

        Returns ``id`` (pages with at least one observation, ascending), ``offsets``
        (page k's rows are ``offsets[k]:offsets[k + 1]``) and the row columns ``at``,
        ``changed`` (1.0, 0.0, or NaN for a first access) and ``last_modified`` (NaN when
        the server sent none).
        """
        ids, blobs = _columns(self._scan("SELECT id, history FROM observations ORDER BY id"), 2)
        offsets, table = history_arrays(blobs)
        return {
            "id": np.asarray(ids, dtype=np.int64),
            "offsets": offsets,
            "at": table[:, 0].copy(),
            "changed": table[:, 1].copy(),
            "last_modified": table[:, 2].copy(),
        }

    def set_type(self, url_id: int, page_type: PageType, reason: str | None = None) -> None:
        """Change a page's type (e.g. the loader found an 'XML' page is not well formed)."""
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE pages SET type = ?, reason = ? WHERE id = ?",
                (PageType(page_type).value, reason, url_id),
            )
            if cursor.rowcount == 0:
                raise UnknownPage(url_id)

    def set_type_many(self, rows: Iterable[tuple[int, PageType, str | None]]) -> None:
        """:meth:`set_type` for many ``(url_id, page_type, reason)`` in one transaction.

        An id without a page raises :class:`UnknownPage` and nothing is written.
        """
        values = [(PageType(t).value, reason, int(url_id)) for url_id, t, reason in rows]
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany("UPDATE pages SET type = ?, reason = ? WHERE id = ?", values)
            if conn.total_changes - before != len(values):
                _require_pages(conn, [url_id for _, _, url_id in values])

    # ------------------------------------------------------------------ Link-Data

    def set_children(
        self,
        url_id: int,
        child_ids: Iterable[int] | np.ndarray,
        *,
        dependencies: Iterable[int] | np.ndarray = (),
    ) -> None:
        """Replace a page's children and dependencies atomically (the loader's results).

        Children are kept distinct, in first-seen order, at most 65,534 (§4); the rest are
        counted. Dependencies are the DTDs and schemas a document needs: not links.
        """
        blob, extra = encode_ids(child_ids)
        dependency_blob, _ = encode_ids(dependencies)
        with self._write() as conn:
            _require_page(conn, url_id)
            conn.execute(_UPSERT_CHILDREN_AND_DEPENDENCIES, (url_id, blob, extra, dependency_blob))

    def set_children_many(self, rows: Iterable[tuple[int, Iterable[int], Iterable[int]]]) -> None:
        """:meth:`set_children` for many ``(url_id, child_ids, dependency_ids)`` at once.

        One transaction and one ``executemany``: a loader's batch of documents. A page
        given twice ends with its last row. An id without a page raises
        :class:`UnknownPage` and nothing is written.
        """
        values = []
        for url_id, child_ids, dependency_ids in rows:
            blob, extra = encode_ids(child_ids)
            values.append((int(url_id), blob, extra, encode_ids(dependency_ids)[0]))
        with self._write() as conn:
            _require_pages(conn, [row[0] for row in values])
            conn.executemany(_UPSERT_CHILDREN_AND_DEPENDENCIES, values)

    def children(self, url_id: int) -> np.ndarray:
        """A page's stored children (int32, empty if none are known)."""
        return decode_ids(self._link_column(url_id, "children"))

    def extra_children(self, url_id: int) -> int:
        """How many distinct children a page had beyond the 65,534 stored."""
        return int(self._link_column(url_id, "extra") or 0)

    def dependencies(self, url_id: int) -> np.ndarray:
        """The DTDs / schemas a document references (int32 URL-Ids)."""
        return decode_ids(self._link_column(url_id, "dependencies"))

    def _link_column(self, url_id: int, column: str) -> bytes | int | None:
        row = self._one(f"SELECT {column} FROM links WHERE id = ?", (url_id,))
        return row[0] if row else None

    def parents(self, url_id: int) -> np.ndarray:
        """The pages linking to ``url_id`` (int32, ascending). Scans the whole link matrix."""
        found = [src[dst == url_id] for src, dst in self.export_links()]
        return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int32)

    def export_links(self, chunk_edges: int = 1 << 20) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The whole stored Link-Data as ``(src, dst)`` int32 chunks of ``chunk_edges`` edges.

        Every stored child, whatever it is (the rankings read :meth:`link_matrix` instead).
        The last chunk may be shorter. Edges come in ascending ``src`` order, each page's
        children in their stored order. The export reads one snapshot on a connection of
        its own, so writers go on meanwhile. SQLite itself concatenates the children blobs
        of many pages per statement, so no Python object is made per edge, nor per page.
        """
        if chunk_edges < 1:
            raise ValueError("chunk_edges must be positive")
        conn = _connect(self.path, readonly=True, settings=self.settings)
        try:
            conn.execute("BEGIN")  # one snapshot across the steps
            yield from rechunk(link_steps(conn), chunk_edges)
        finally:
            conn.close()

    @contextmanager
    def link_matrix(
        self, chunk_edges: int = 1 << 20, *, in_scope: Callable[[str], bool] | None = None
    ) -> Iterator[LinkMatrix]:
        """The rankings' link matrix (§5) by the rule of :mod:`metadata.link_matrix`: its
        pages, their types and its edges, all from one snapshot read on a connection of its
        own (writers go on meanwhile). ``in_scope`` is the crawl scope (URL → bool): unread
        URLs outside it stay out. Read it inside the ``with`` block."""
        if chunk_edges < 1:
            raise ValueError("chunk_edges must be positive")
        conn = _connect(self.path, readonly=True, settings=self.settings)
        try:
            conn.execute("BEGIN")
            yield LinkMatrix.read(conn, chunk_edges, in_scope)
        finally:
            conn.close()

    def max_url_id(self) -> int:
        """The largest URL-Id given (0 for an empty repository): size of the rank vectors."""
        with self._lock:
            return _max_id(self._conn)

    def content_md5s(self, page_type: PageType) -> dict[int, str]:
        """URL-Id -> MD5 of the last content read, for every page of ``page_type``.

        The daemon compares it with the loader's stored versions at start: an XML page whose
        read was committed but whose load a crash cut off has an MD5 the loader lacks.
        """
        rows = self._scan(
            "SELECT id, md5 FROM pages WHERE type = ? AND md5 IS NOT NULL ORDER BY id",
            (PageType(page_type).value,),
        )
        return dict(rows)

    def count_by_type(self) -> dict[PageType, int]:
        """How many pages of each type (every type present, zeros included)."""
        counts = dict(self._all("SELECT type, count(*) FROM pages GROUP BY type"))
        return {page_type: counts.get(page_type.value, 0) for page_type in PageType}

    # ------------------------------------------------------------------ score arrays

    def set_scores(
        self,
        column: str,
        ids: Sequence[int] | np.ndarray,
        values: Sequence[float] | np.ndarray,
        *,
        method: str | None = None,
    ) -> None:
        """Write one score column for many pages in one transaction (NaN stores "unknown").

        An id without a page raises :class:`UnknownPage` and nothing is written.

        ``column`` is one of :data:`~metadata.types.SCORE_COLUMNS`. For ``change_rate``,
        ``method`` records which estimator produced the values (e.g. ``"eq9"``).
        """
        if column not in SCORE_COLUMNS:
            raise ValueError(f"unknown score column {column!r}; one of {SCORE_COLUMNS}")
        if method is not None and column != "change_rate":
            raise ValueError("method only describes change_rate values")
        id_list = np.asarray(ids, dtype=np.int64).tolist()
        value_list = np.asarray(values, dtype=np.float64).tolist()
        if len(id_list) != len(value_list):
            raise ValueError(f"{len(id_list)} ids but {len(value_list)} values")
        with self._write() as conn:
            before = conn.total_changes
            if method is None:
                conn.executemany(
                    f"UPDATE pages SET {column} = ? WHERE id = ?",
                    zip(value_list, id_list, strict=True),
                )
            else:
                conn.executemany(
                    "UPDATE pages SET change_rate = ?, change_rate_method = ? WHERE id = ?",
                    zip(value_list, repeat(method), id_list),
                )
            if conn.total_changes - before != len(id_list):  # some id has no page
                known = {row[0] for row in _lookup_pages(conn, id_list, "id")}
                raise UnknownPage(next(url_id for url_id in id_list if url_id not in known))

    def scores(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64, values float64)`` of the pages whose ``column`` is set."""
        if column not in SCORE_COLUMNS:
            raise ValueError(f"unknown score column {column!r}; one of {SCORE_COLUMNS}")
        rows = self._all(f"SELECT id, {column} FROM pages WHERE {column} IS NOT NULL ORDER BY id")
        ids, values = _columns(rows, 2)
        return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)

    def refresh_view(self) -> dict[str, np.ndarray]:
        """One numpy array per Refresh-Data column, one entry per page, by ascending id.

        ``id`` (int64), ``type`` (int8 codes of :data:`~metadata.types.PAGE_TYPE_CODE`),
        the counters ``refreshes``, ``unchanged_accesses``, ``failures`` (int64), and as
        float64 with NaN for "unknown": ``discovered_at``, ``first_access``,
        ``last_access``, ``last_change``, ``last_modified``, ``change_rate``,
        ``importance``, ``interest``, ``opic_cash``, ``opic_importance``, ``next_refresh``.
        """
        names = _VIEW_COLUMNS
        rows = self._scan(f"SELECT {', '.join(names)} FROM pages ORDER BY id")
        columns = _columns(rows, len(names))
        view: dict[str, np.ndarray] = {}
        for name, values in zip(names, columns, strict=True):
            if name == "type":
                codes = map(_TYPE_CODES.__getitem__, values)
                view[name] = np.fromiter(codes, np.int8, len(values))
            elif name in ("id", "refreshes", "unchanged_accesses", "failures"):
                view[name] = np.asarray(values, dtype=np.int64)
            else:
                view[name] = np.asarray(values, dtype=np.float64)
        return view

    # ------------------------------------------------------------------ Status-Data

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
            _require_page(conn, url_id)
            conn.execute(_UPSERT_STATUS, (url_id, LoadStatus(status).value, detail))
            conn.execute("DELETE FROM waiting WHERE page = ?", (url_id,))
            conn.executemany(
                "INSERT INTO waiting(dependency, page) VALUES (?, ?)",
                zip(waiting, repeat(url_id)),
            )

    def set_status_many(self, rows: Iterable[tuple[int, LoadStatus, str | None]]) -> None:
        """:meth:`set_status` for many ``(url_id, status, detail)`` in one transaction; the
        pages then wait for nothing (a loaded or failed document). An id without a page
        raises :class:`UnknownPage` and nothing is written."""
        values = [
            (int(url_id), LoadStatus(status).value, detail) for url_id, status, detail in rows
        ]
        with self._write() as conn:
            _require_pages(conn, [row[0] for row in values])
            conn.executemany(_UPSERT_STATUS, values)
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
        with self._read() as conn:
            for chunk in _chunks(wanted, _LOOKUP_CHUNK):
                rows = conn.execute(
                    "SELECT id, status, detail FROM load_status "
                    f"WHERE id IN ({_marks(len(chunk))})",
                    chunk,
                )
                found.update((url_id, (LoadStatus(s), d)) for url_id, s, d in rows)
        return found

    def awaited(self, dependency_ids: Iterable[int]) -> set[int]:
        """Those of ``dependency_ids`` that some document waits on (a loader's batch: one query)."""
        wanted = list(dict.fromkeys(int(url_id) for url_id in dependency_ids))
        awaited: set[int] = set()
        with self._read() as conn:
            for chunk in _chunks(wanted, _LOOKUP_CHUNK):
                rows = conn.execute(
                    f"SELECT DISTINCT dependency FROM waiting WHERE dependency IN "
                    f"({_marks(len(chunk))})",
                    chunk,
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

    # ------------------------------------------------------------------ named state

    def put_state(self, key: str, value: bytes) -> None:
        """Store a small named blob (a checkpoint, the clock's epoch and speed)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, bytes(value)),
            )

    def get_state(self, key: str) -> bytes | None:
        """A blob stored with :meth:`put_state`, or None."""
        row = self._one("SELECT value FROM state WHERE key = ?", (key,))
        return None if row is None else bytes(row[0])

    def state_keys(self, prefix: str = "") -> list[str]:
        """The keys of stored blobs that start with ``prefix``, in key order (a command table)."""
        rows = self._all(
            "SELECT key FROM state WHERE substr(key, 1, ?) = ? ORDER BY key",
            (len(prefix), prefix),
        )
        return [row[0] for row in rows]

    def delete_state(self, key: str) -> bool:
        """Remove a stored blob; whether it was there (two takers: only one gets True)."""
        with self._write() as conn:
            return conn.execute("DELETE FROM state WHERE key = ?", (key,)).rowcount == 1


# ---------------------------------------------------------------------- helpers


def _connect(path: Path, *, readonly: bool, settings: MetadataSettings) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves) with our pragmas."""
    if readonly:
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(settings.busy_timeout * 1000)}")
        conn.execute(f"PRAGMA cache_size = {-1024 * settings.cache_mb}")
        conn.execute(f"PRAGMA synchronous = {settings.synchronous.upper()}")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as error:
        conn.close()
        raise NotARepository(path, f"not an SQLite database, or corrupt ({error})") from None
    return conn


def _check_application(db: sqlite_utils.Database, path: Path) -> None:
    """Refuse any SQLite file that is not a xyleme metadata database."""
    if "meta" in db.table_names():
        row = db.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        if row is not None and row[0] == schema.APPLICATION:
            return
    raise NotARepository(path, "an SQLite database, but not xyleme's")


def _lookup_ids(conn: sqlite3.Connection, urls: list[str]) -> dict[str, int]:
    """The URL-Ids of those of ``urls`` that have one."""
    known: dict[str, int] = {}
    for chunk in _chunks(urls, _LOOKUP_CHUNK):
        known.update(
            conn.execute(f"SELECT url, id FROM pages WHERE url IN ({_marks(len(chunk))})", chunk)
        )
    return known


def _lookup_pages(conn: sqlite3.Connection, ids: list[int], columns: str) -> list[tuple]:
    """``SELECT columns`` of the pages among ``ids`` that exist (chunked ``IN`` probes)."""
    rows: list[tuple] = []
    for chunk in _chunks(list(dict.fromkeys(ids)), _LOOKUP_CHUNK):
        rows += conn.execute(
            f"SELECT {columns} FROM pages WHERE id IN ({_marks(len(chunk))})", chunk
        ).fetchall()
    return rows


def _previous_md5(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str | None]:
    """The stored MD5 of each page; :class:`UnknownPage` on the first unknown id."""
    found = dict(_lookup_pages(conn, ids, "id, md5"))
    if len(found) != len(set(ids)):
        raise UnknownPage(next(url_id for url_id in ids if url_id not in found))
    return found


def _append_run(runs: list[tuple[str, list[tuple]]], statement: str, row: tuple) -> None:
    """Add ``row`` to the last run if it has the same statement, else start a new run."""
    if runs and runs[-1][0] is statement:
        runs[-1][1].append(row)
    else:
        runs.append((statement, [row]))


def _decide_changed(result: FetchResult, previous_md5: str | None) -> bool | None:
    """Whether this read saw a change (None: nothing to compare with yet)."""
    if previous_md5 is None:
        return None
    if result.changed is not None:
        return result.changed
    if result.md5 is None:
        return False  # a 304 Not Modified is never a change
    return result.md5 != previous_md5


def _require_page(conn: sqlite3.Connection, url_id: int) -> None:
    if conn.execute("SELECT 1 FROM pages WHERE id = ?", (url_id,)).fetchone() is None:
        raise UnknownPage(url_id)


def _require_pages(conn: sqlite3.Connection, url_ids: list[int]) -> None:
    """Raise :class:`UnknownPage` for the first of ``url_ids`` that has no page."""
    wanted = list(dict.fromkeys(url_ids))
    known = {row[0] for row in _lookup_pages(conn, wanted, "id")}
    for url_id in wanted:
        if url_id not in known:
            raise UnknownPage(url_id)


def _max_id(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM pages").fetchone()[0]


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _columns(rows: list[tuple], width: int) -> list[tuple]:
    """Rows turned into columns (``width`` empty tuples when there are no rows)."""
    return list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]


__all__ = ["Metadata"]
