"""Where a repository's metadata lives, and the connections to it: an SQLite file or a
PostgreSQL database.

A store is named by a URL: ``sqlite:///path/metadata.db`` (or the bare path: SQLite is the
default and needs nothing installed), or ``postgresql://user@host:port/dbname`` (the
``[postgres]`` extra: psycopg and its pool). A repository folder whose ``metadata.db`` is
absent names its store in ``xyleme.toml`` (``[store] url``), so every command that opens
``repository/metadata.db`` finds a PostgreSQL store without being told.

:class:`Engine` hands out the connections a :class:`~metadata.store.Store` needs: its one
long-lived writer, and readers for scans and snapshots (a second SQLite connection; on
PostgreSQL, connections of one pool).
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from metadata.dialect import POSTGRESQL, SQLITE, Connection, Dialect, PgConnection
from metadata.errors import NotARepository
from metadata.settings import MetadataSettings

DATABASE = "metadata.db"
CONFIG = "xyleme.toml"
POSTGRES_SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 10
ASYNCHRONOUS = ("OFF", "NORMAL")
"""The ``synchronous`` settings whose commits survive a killed process but not a power cut
(SQLite's WAL with ``synchronous=NORMAL``): on PostgreSQL the store's sessions then commit
with ``synchronous_commit=off``, which gives the same (a commit returns before its WAL is
flushed; the server flushes it within ``3 × wal_writer_delay``; a crash of the server's
machine may lose those last commits, never a part of one). FULL waits for the flush."""
_PASSWORD = re.compile(r"(//[^/:@]*):[^/@]*@")


@dataclass(frozen=True)
class Target:
    """One store: its engine, the SQLite file or the PostgreSQL URL, and the name errors
    give it (a URL's password left out)."""

    dialect: Dialect
    path: Path | None
    url: str
    place: Path | None = None
    """the repository's ``metadata.db`` that named a PostgreSQL store in ``xyleme.toml``"""

    @property
    def name(self) -> str:
        return str(self.path) if self.path is not None else _PASSWORD.sub(r"\1:***@", self.url)


def target_of(where: str | Path) -> Target:
    """The store ``where`` names: a path, an ``sqlite:///`` URL, a ``postgresql://`` URL, or
    a repository's ``metadata.db`` that is absent while its ``xyleme.toml`` names a store.

    >>> target_of("sqlite:///tmp/r/metadata.db").path
    PosixPath('/tmp/r/metadata.db')
    >>> target_of("postgresql://crawler:secret@db.test/warehouse").name
    'postgresql://crawler:***@db.test/warehouse'
    """
    text = str(where)
    scheme = urlsplit(text).scheme if "://" in text else ""
    if scheme in POSTGRES_SCHEMES:
        return Target(POSTGRESQL, None, text)
    if scheme == "sqlite":
        return Target(SQLITE, Path(unquote(urlsplit(text).path)), text)
    if scheme:
        raise NotARepository(
            text, f"unknown store URL scheme {scheme!r}: use sqlite:/// or postgresql://"
        )
    path = Path(where)
    if path.name == DATABASE and not path.exists():
        configured = configured_url(path.parent)
        if configured:
            return dataclasses.replace(target_of(configured), place=path)
    return Target(SQLITE, path, f"sqlite:///{quote(str(path.resolve()))}")


def configured_url(repository: Path) -> str | None:
    """``[store] url`` of the repository's ``xyleme.toml`` (None when it sets none)."""
    return configured_store(repository).get("url") or None


def configured_store(repository: Path) -> dict[str, Any]:
    """The ``[store]`` table of the repository's ``xyleme.toml`` (empty when it has none):
    the store opens from a path alone, whoever opens it (a command, the loader)."""
    try:
        with (repository / CONFIG).open("rb") as file:
            table = tomllib.load(file).get("store", {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # the configuration's own loader reports a broken file
    return table if isinstance(table, dict) else {}


class Engine:
    """The connections of one store."""

    def __init__(
        self,
        target: Target,
        *,
        readonly: bool,
        settings: MetadataSettings,
        namespace: str | None = None,
    ) -> None:
        """``namespace``: a PostgreSQL schema of its own for the tables (the version store
        shares the metadata's database, and each has a ``meta`` table)."""
        self.target = target
        self.dialect = target.dialect
        self.readonly = readonly
        self.settings = settings
        self._pool: Any = None
        if target.path is None:
            options = [f"-c search_path={namespace}"] if namespace else []
            if readonly:  # the server refuses writes too, not only the store's calls
                options.append("-c default_transaction_read_only=on")
            elif settings.synchronous in ASYNCHRONOUS:
                options.append("-c synchronous_commit=off")
            self._pool = _postgres_pool(target, settings, " ".join(options))

    def connect(self, *, reader: bool = False) -> Connection:
        """A new connection (hand it back with :meth:`release`): the writer, or a reader."""
        if self._pool is None:
            assert self.target.path is not None
            return connect_sqlite(
                self.target.path, readonly=reader or self.readonly, settings=self.settings
            )
        return PgConnection(self._pool.getconn())

    def release(self, conn: Connection) -> None:
        if isinstance(conn, PgConnection):
            self._pool.putconn(conn.raw)
        else:
            conn.close()  # type: ignore[attr-defined]

    def scan(self, conn: Connection, sql: str, params: tuple | list = ()) -> list[tuple]:
        """Every row of a long read (a server-side cursor on PostgreSQL)."""
        if not isinstance(conn, PgConnection):
            return conn.execute(sql, params).fetchall()
        if conn.in_transaction:  # a snapshot() block's transaction
            return conn.scan(sql, params)
        conn.execute(self.dialect.begin_snapshot)
        try:
            return conn.scan(sql, params)
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


def _postgres_pool(target: Target, settings: MetadataSettings, options: str) -> Any:
    """An open pool of autocommit connections (the store says BEGIN and COMMIT itself),
    after one probe connection that turns a refusal into one line naming why."""
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise NotARepository(
            target.name, "a PostgreSQL store needs psycopg: pip install 'xyleme[postgres]'"
        ) from None
    try:
        psycopg.connect(target.url, connect_timeout=CONNECT_TIMEOUT_S).close()
    except psycopg.Error as error:
        why = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        raise NotARepository(target.name, f"cannot connect ({why})") from None
    return ConnectionPool(
        target.url,
        min_size=1,
        max_size=settings.pool_size,
        kwargs={
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_S,
            **({"options": options} if options else {}),
        },
        timeout=max(settings.busy_timeout, CONNECT_TIMEOUT_S),
        open=True,
    )


def connect_sqlite(path: Path, *, readonly: bool, settings: MetadataSettings) -> sqlite3.Connection:
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
