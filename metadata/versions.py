"""The version store: every stored version of every XML document, content-addressed by MD5.

The store's XML-versions subject (beside :mod:`metadata.page_ids`, :mod:`metadata.fetches`,
:mod:`metadata.links`, :mod:`metadata.status`, :mod:`metadata.state`, :mod:`metadata.ranks`;
its contract is :class:`metadata.api.VersionsAPI`). Versions are packed in one SQLite
database, ``DIR/documents/versions.db`` (WAL mode; its schema and migrations are in
:mod:`metadata.schema`, why a file of its own too)::

    documents(url_id, url)                               one row per stored document
    versions(url_id, version, md5, fetched_at, size, validity)   newest has the top number
    bodies(url_id, md5, codec, body)                     one row per distinct content
    changes(seq, url_id, version, md5, at)               one row per stored version
    needs(dependency, url_id)                            the DTDs, entities, schemas used

When the repository's metadata is in PostgreSQL (``[store] url``) the same tables live in
that database's ``xyleme_versions`` schema, and ``[store] bodies = "files"`` keeps every
body in a file (under ``[store] bodies_path``, a folder every worker mounts) rather than in
a row.

A body is kept once per document and content (``(url_id, md5)``): an unchanged refresh
stores nothing, and a document that goes back to an earlier content shares that body.
Small bodies are compressed with zstd in their row; a body over ``file_threshold_bytes``
(a streamed document) is copied in chunks to ``bodies/<url_id // 1000>/<url_id>.<md5>.xml``
so that neither storing nor reading it holds it in memory. Storing a version is a few rows,
not two file creations (~1 ms of kernel CPU each on the VM's disk), and
:meth:`VersionStore.store_many` stores a whole batch in one transaction. Reading the
latest or a given version is one indexed lookup and one row read. URL-Ids come from the
pages of the metadata database. Database errors leave as :class:`~metadata.errors.StoreError`
(:class:`~metadata.errors.RepositoryCorrupt`, or :class:`~metadata.errors.StoreFull`).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from metadata import schema
from metadata.dialect import SQLITE, Connection
from metadata.engines import Engine, configured_store, target_of
from metadata.errors import (
    DocumentNotFound,
    NotARepository,
    RepositoryCorrupt,
    StoreFull,
    VersionNotFound,
    translated,
)
from metadata.settings import MetadataSettings
from metadata.store import chunked, rollback
from metadata.version_records import Change, NewVersion, StoredDocument, Validity, VersionInfo

try:  # Python 3.14 has zstd in the standard library; before, its backport
    from compression import zstd
except ImportError:  # pragma: no cover - depends on the Python version
    from backports import zstd

_VERSION_COLUMNS = "version, md5, fetched_at, size, validity"
_ZSTD_LEVEL = 1  # ~20 us for a 5 KB document, about half its size
_COPY_CHUNK = 1 << 20
_IN_CHUNK = 500  # ids per "WHERE url_id IN (...)" probe
DOCUMENTS_PAGE = 500
"""Documents :meth:`VersionStore.documents` lists per query (a keyset page)."""
_NAMESPACE = "xyleme_versions"  # the version store's PostgreSQL schema


def _version_info(row: tuple) -> VersionInfo:
    version, md5, fetched_at, size, validity = row
    return VersionInfo(version, md5, fetched_at, size, _validity_of(validity))


@functools.lru_cache(maxsize=256)
def _validity_of(text: str) -> Validity:
    """A validity read from its JSON (most documents share a few: memoised)."""
    return Validity.from_dict(json.loads(text))


@functools.lru_cache(maxsize=256)
def _validity_text(validity: Validity) -> str:
    """A validity as the JSON kept in its version row (memoised, as :func:`_validity_of`)."""
    return json.dumps(validity.as_dict())


class VersionStore:
    """Versions of XML documents in one SQLite file (see the module docstring).

    Parameters
    ----------
    folder
        The repository's ``documents/`` folder.
    versions_kept
        How many versions of a document are kept; the oldest are pruned.
    file_threshold_bytes
        Bodies larger than this are kept in files of their own, copied in chunks.
    compress
        Compress the bodies kept in the database (zstd).
    store_url
        A PostgreSQL store to keep the versions in (its ``xyleme_versions`` schema); by
        default the repository's ``[store] url`` when it names one, else ``versions.db``.
        The repository's ``[store] bodies = "files"`` puts every body in a file, under
        ``[store] bodies_path`` when set (a folder every worker mounts).
    """

    def __init__(
        self,
        folder: Path,
        versions_kept: int = 10,
        *,
        file_threshold_bytes: int = 8 << 20,
        compress: bool = True,
        store_url: str | None = None,
    ) -> None:
        if versions_kept < 1:
            raise ValueError("a repository keeps at least one version per document")
        self.folder = Path(folder)
        self.versions_kept = versions_kept
        self.file_threshold_bytes = file_threshold_bytes
        self.compress = compress
        self.folder.mkdir(parents=True, exist_ok=True)
        configured = configured_store(self.folder.parent)
        store_url = store_url or configured.get("url") or None
        self.bodies_folder = Path(configured.get("bodies_path") or self.folder / "bodies")
        if configured.get("bodies") == "files":  # every body in a file of its own
            self.file_threshold_bytes = -1
        self._target = target_of(store_url) if store_url else None
        if self._target is not None and self._target.path is not None:
            self._target = None  # an SQLite metadata store: the versions stay in their file
        self._dialect = SQLITE if self._target is None else self._target.dialect
        self.path: Path | str = (
            self.folder / "versions.db" if self._target is None else self._target.name
        )
        self._lock = threading.RLock()  # loader worker threads share the connection
        self._engine: Engine | None = None
        self._conn: Connection | None = None
        # one compressor, used under the lock: a new zstd context per body costs ~10 us
        self._compressor = zstd.ZstdCompressor(_ZSTD_LEVEL)

    # -- the database ---------------------------------------------------------------------

    @contextmanager
    def _database(self) -> Iterator[Connection]:
        """The connection (opened on first use), with database damage as a named error."""
        with self._lock, translated(self.path):
            try:
                if self._conn is None:
                    self._conn = self._connect()
                yield self._conn
            except sqlite3.Error as error:
                if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                    raise StoreFull(self.path, f"disk full ({error})") from error
                raise RepositoryCorrupt(self.path, f"unreadable version store ({error})") from None

    def _connect(self) -> Connection:
        """Open the store, creating or migrating its schema (:mod:`metadata.schema`)."""
        conn = self._open()
        try:
            conn.execute(self._dialect.begin_write)
            try:
                schema.prepare_versions(conn, self.path, self._dialect)
                marker = conn.execute("SELECT value FROM meta WHERE key = 'application'")
                if marker.fetchone() != (schema.VERSIONS_APPLICATION,):
                    raise NotARepository(self.path, "an SQLite database, but not a version store")
                schema.migrate(conn, self.path, schema.VERSIONS_MIGRATIONS)
            except BaseException:
                rollback(conn)
                raise
            conn.execute("COMMIT")
        except BaseException:
            self._release(conn)
            raise
        return conn

    def _open(self) -> Connection:
        """A connection to the versions file, or to the PostgreSQL store's ``xyleme_versions``
        schema (the metadata's database: one server for a crawl, its own ``meta``)."""
        if self._target is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash loses no commit order
            return conn
        self._engine = Engine(
            self._target, readonly=False, settings=MetadataSettings(), namespace=_NAMESPACE
        )
        conn = self._engine.connect()
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {_NAMESPACE}")
        return conn

    def _release(self, conn: Connection) -> None:
        if self._engine is None:
            conn.close()  # type: ignore[attr-defined]
            return
        self._engine.release(conn)
        self._engine.close()
        self._engine = None

    def close(self) -> None:
        """Close the database (reopened on the next use)."""
        with self._lock:
            if self._conn is not None:
                self._release(self._conn)
                self._conn = None

    def _body_file(self, url_id: int, md5: str) -> Path:
        return self.bodies_folder / f"{url_id // 1000:06d}" / f"{url_id}.{md5}.xml"

    # -- reading ------------------------------------------------------------------------

    def document(self, url_id: int) -> StoredDocument:
        """The document's entry; raises :class:`DocumentNotFound` if nothing is stored."""
        with self._database() as conn:
            found = conn.execute("SELECT url FROM documents WHERE url_id = ?", (url_id,))
            row = found.fetchone()
            rows = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM versions WHERE url_id = ? ORDER BY version",
                (url_id,),
            ).fetchall()
        if row is None or not rows:
            raise DocumentNotFound(f"no stored document with URL-Id {url_id}")
        return StoredDocument(url_id, row[0], tuple(map(_version_info, rows)))

    def latest(self, url_id: int) -> VersionInfo | None:
        """The newest stored version, or None when the document was never stored."""
        with self._database() as conn:
            row = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM versions WHERE url_id = ? "
                "ORDER BY version DESC LIMIT 1",
                (url_id,),
            ).fetchone()
        return None if row is None else _version_info(row)

    def latest_many(self, url_ids: Sequence[int]) -> dict[int, VersionInfo]:
        """:meth:`latest` of many documents in one query per 500 (a loader's batch); the
        documents never stored are left out."""
        found: dict[int, VersionInfo] = {}
        wanted = list(dict.fromkeys(url_ids))
        with self._database() as conn:
            for chunk in chunked(wanted, _IN_CHUNK):
                where, values = self._dialect.among("url_id", chunk)
                rows = conn.execute(
                    f"SELECT v.url_id, v.{_VERSION_COLUMNS.replace(', ', ', v.')} "
                    "FROM versions v JOIN (SELECT url_id, max(version) AS top FROM versions "
                    f"WHERE {where} GROUP BY url_id) AS t "
                    "ON v.url_id = t.url_id AND v.version = t.top",
                    values,
                )
                found.update((row[0], _version_info(row[1:])) for row in rows)
        return found

    def version(self, url_id: int, version: int | None = None) -> VersionInfo:
        """A given version (the latest when ``version`` is None)."""
        document = self.document(url_id)
        if version is None:
            return document.latest
        for info in document.versions:
            if info.version == version:
                return info
        kept = ", ".join(str(v.version) for v in document.versions)
        raise VersionNotFound(f"document {url_id} has no version {version} (versions kept: {kept})")

    def read(self, url_id: int, version: int | None = None) -> bytes:
        """A version's body (the latest when ``version`` is None)."""
        md5 = self.version(url_id, version).md5
        with self._database() as conn:
            row = conn.execute(
                "SELECT codec, body FROM bodies WHERE url_id = ? AND md5 = ?", (url_id, md5)
            ).fetchone()
        if row is None:
            raise RepositoryCorrupt(self.path, f"the body of document {url_id} ({md5}) is gone")
        codec, body = row
        if codec == "zstd":
            return zstd.decompress(body)
        if codec == "raw":
            return bytes(body)
        try:
            return self._body_file(url_id, md5).read_bytes()
        except FileNotFoundError:
            raise RepositoryCorrupt(
                self._body_file(url_id, md5), f"the body file of document {url_id} is gone"
            ) from None

    def dependants(self, dependency_id: int) -> list[int]:
        """The documents whose stored versions used a DTD, entity or schema (by URL-Id)."""
        with self._database() as conn:
            rows = conn.execute(
                "SELECT url_id FROM needs WHERE dependency = ? ORDER BY url_id", (dependency_id,)
            ).fetchall()
        return [url_id for (url_id,) in rows]

    def set_validity(self, url_id: int, version: int, validity: Validity) -> None:
        """Record a stored version's new validity (its DTD or schema changed)."""
        with self._database() as conn:
            conn.execute(
                "UPDATE versions SET validity = ? WHERE url_id = ? AND version = ?",
                (_validity_text(validity), url_id, version),
            )

    def stored_bodies(self, url_id: int) -> list[str]:
        """The MD5s of the distinct bodies kept for a document (shared by its versions)."""
        with self._database() as conn:
            rows = conn.execute(
                "SELECT md5 FROM bodies WHERE url_id = ? ORDER BY md5", (url_id,)
            ).fetchall()
        return [md5 for (md5,) in rows]

    def documents(self, url_prefix: str = "") -> Iterator[StoredDocument]:
        """Every stored document (whose URL starts with ``url_prefix``), by URL-Id.

        Read in keyset pages of :data:`DOCUMENTS_PAGE` documents (``url_id`` above the last
        one seen), so a listing's memory stays flat however many documents the store holds,
        and no read holds the connection while the caller works. A document pruned meanwhile
        is skipped.
        """
        after, page = -(2**63), DOCUMENTS_PAGE
        while True:
            with self._database() as conn:
                rows = conn.execute(
                    "SELECT url_id FROM documents WHERE url_id > ? AND substr(url, 1, ?) = ? "
                    "ORDER BY url_id LIMIT ?",
                    (after, len(url_prefix), url_prefix, page),
                ).fetchall()
            for (url_id,) in rows:
                try:
                    yield self.document(url_id)
                except DocumentNotFound:
                    continue
            if len(rows) < page:
                return
            after = rows[-1][0]

    def changes(self, since: float = float("-inf")) -> Iterator[Change]:
        """Versions stored with a fetch time at or after ``since``, in the order stored."""
        with self._database() as conn:
            rows = conn.execute(
                "SELECT c.url_id, d.url, c.version, c.md5, c.at FROM changes c "
                "JOIN documents d USING (url_id) WHERE c.at >= ? ORDER BY c.seq",
                (since,),
            ).fetchall()
        for row in rows:
            yield Change(*row)

    # -- writing ------------------------------------------------------------------------

    def store(
        self,
        url_id: int,
        url: str,
        body: bytes | Path,
        md5: str,
        fetched_at: float,
        validity: Validity,
    ) -> VersionInfo:
        """Add a version (see :meth:`store_many`)."""
        return self.store_many([NewVersion(url_id, url, body, md5, fetched_at, validity)])[0]

    def store_many(self, new_versions: Sequence[NewVersion]) -> list[VersionInfo]:
        """Add versions in one transaction: all are stored, or none.

        A body is written only if no kept version of its document has that MD5; the
        versions past ``versions_kept`` are pruned with the bodies no kept version shares.
        The rows of the batch go in with one statement per table (``executemany``).
        """
        infos: list[VersionInfo] = []
        dropped_files: list[tuple[int, str]] = []
        with self._database() as conn:
            conn.execute(self._dialect.begin_write)
            try:
                infos = self._add_all(conn, new_versions, dropped_files)
            except BaseException:
                rollback(conn)
                raise
            conn.execute("COMMIT")
            for url_id, md5 in dropped_files:  # unless a later version of the batch took it back
                if not conn.execute(
                    "SELECT 1 FROM bodies WHERE url_id = ? AND md5 = ?", (url_id, md5)
                ).fetchone():
                    self._body_file(url_id, md5).unlink(missing_ok=True)
        return infos

    def _add_all(
        self,
        conn: Connection,
        new_versions: Sequence[NewVersion],
        dropped: list[tuple[int, str]],
    ) -> list[VersionInfo]:
        kept_before = self._kept_versions(conn, [new.url_id for new in new_versions])
        bodies, versions, documents, changes, needs, infos = [], [], [], [], [], []
        for new in new_versions:
            url_id, md5 = new.url_id, new.md5
            previous = kept_before.setdefault(url_id, [])
            number = previous[-1][0] + 1 if previous else 1
            size = len(new.body) if isinstance(new.body, bytes) else new.body.stat().st_size
            if all(md5 != old_md5 for _, old_md5 in previous):
                bodies.append((url_id, md5, *self._encode(url_id, md5, new.body, size)))
            validity = _validity_text(new.validity)
            versions.append((url_id, number, md5, new.fetched_at, size, validity))
            documents.append((url_id, new.url))
            changes.append((url_id, number, md5, new.fetched_at))
            needs += [(dependency, url_id) for dependency in new.dependencies]
            infos.append(VersionInfo(number, md5, new.fetched_at, size, new.validity))
            previous.append((number, md5))
        conn.executemany(
            "INSERT INTO bodies(url_id, md5, codec, body) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(url_id, md5) DO UPDATE SET codec = excluded.codec, body = excluded.body",
            bodies,
        )
        conn.executemany(
            f"INSERT INTO versions(url_id, {_VERSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            versions,
        )
        conn.executemany(
            "INSERT INTO documents(url_id, url) VALUES (?, ?) "
            "ON CONFLICT(url_id) DO UPDATE SET url = excluded.url",
            documents,
        )
        conn.executemany(
            "INSERT INTO changes(url_id, version, md5, at) VALUES (?, ?, ?, ?)", changes
        )
        # kept when a later version no longer uses it: a refresh of it then checks the
        # document again for nothing, rather than every store deleting rows
        conn.executemany(
            "INSERT INTO needs(dependency, url_id) VALUES (?, ?) ON CONFLICT DO NOTHING", needs
        )
        for url_id, kept in kept_before.items():
            if len(kept) > self.versions_kept:
                self._prune(conn, url_id, kept, dropped)
        return infos

    def _kept_versions(
        self, conn: Connection, url_ids: list[int]
    ) -> dict[int, list[tuple[int, str]]]:
        """The ``(version, md5)`` kept of each document, oldest first (one query per 500)."""
        kept: dict[int, list[tuple[int, str]]] = {}
        wanted = list(dict.fromkeys(url_ids))
        for chunk in chunked(wanted, _IN_CHUNK):
            where, values = self._dialect.among("url_id", chunk)
            rows = conn.execute(
                f"SELECT url_id, version, md5 FROM versions WHERE {where} ORDER BY url_id, version",
                values,
            )
            for url_id, version, md5 in rows:
                kept.setdefault(url_id, []).append((version, md5))
        return kept

    def _prune(
        self,
        conn: Connection,
        url_id: int,
        versions: list[tuple[int, str]],
        dropped: list[tuple[int, str]],
    ) -> None:
        """Delete the versions of a document past ``versions_kept``, and their bodies."""
        kept = versions[-self.versions_kept :]
        conn.execute("DELETE FROM versions WHERE url_id = ? AND version < ?", (url_id, kept[0][0]))
        kept_md5s = {md5 for _, md5 in kept}
        for old_md5 in {md5 for _, md5 in versions} - kept_md5s:
            conn.execute("DELETE FROM bodies WHERE url_id = ? AND md5 = ?", (url_id, old_md5))
            dropped.append((url_id, old_md5))

    def _encode(
        self, url_id: int, md5: str, body: bytes | Path, size: int
    ) -> tuple[str, bytes | None]:
        """How a body is kept: in its row (zstd or raw), or in a file of its own when large."""
        if size <= self.file_threshold_bytes:
            data = body if isinstance(body, bytes) else body.read_bytes()
            if not self.compress:
                return "raw", data
            return "zstd", self._compressor.compress(data, zstd.ZstdCompressor.FLUSH_FRAME)
        target = self._body_file(url_id, md5)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # a crash leaves no half
        if isinstance(body, bytes):
            temporary.write_bytes(body)
        else:
            with open(body, "rb") as source, open(temporary, "wb") as copy:
                shutil.copyfileobj(source, copy, _COPY_CHUNK)
        temporary.replace(target)
        return "file", None
