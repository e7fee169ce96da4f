"""The metadata manager (paper §4): the one object that reads and writes ``metadata.db``.

Other modules deal only in URL-Ids, records and numpy arrays; every SQL statement of xyleme
lives in this package, split by subject: URL-Ids (:mod:`metadata.page_ids`), fetch records
and observations (:mod:`metadata.fetches`), links (:mod:`metadata.links`), loading status
(:mod:`metadata.status`), named state and the clock (:mod:`metadata.state`) and scores
(:mod:`metadata.ranks`), each a mixin over the connection core of :mod:`metadata.store`.
This module composes them into :class:`Metadata` and opens or creates the database.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from metadata import schema
from metadata.cash_transfers import CashTransfers
from metadata.claim_work import ClaimWork
from metadata.claims import Claims
from metadata.clock import Clock, SystemClock
from metadata.dialect import POSTGRESQL, SQLITE, Connection
from metadata.engines import Engine, Target, target_of
from metadata.errors import NotARepository, RepositoryExists, SchemaTooNew, StoreError, translated
from metadata.fetches import Fetches
from metadata.links import Links
from metadata.ranks import Ranks
from metadata.settings import MetadataSettings
from metadata.state import NamedState
from metadata.status import LoadStatuses
from metadata.store import check_application, rollback
from metadata.worker_board import WorkerBoard


class Metadata(
    Fetches, Links, LoadStatuses, NamedState, Ranks, Claims, ClaimWork, WorkerBoard, CashTransfers
):
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

    @classmethod
    def create(
        cls,
        where: str | Path,
        *,
        clock: Clock | None = None,
        settings: MetadataSettings | None = None,
    ) -> Metadata:
        """A new, empty store at ``where`` (a path or a store URL, :func:`target_of`);
        :class:`RepositoryExists` if one is there.

        SQLite: the schema is built in a scratch file linked into place at the end.
        PostgreSQL: it is built in one transaction (its DDL is transactional), in a
        database that holds no table yet. Either way a crash leaves a whole store or none.
        """
        target = target_of(where)
        if target.path is None:
            _create_in_postgres(target, settings or MetadataSettings())
        else:
            _create_sqlite(target.path)
        return cls.open(target.place or target.url, clock=clock, settings=settings)

    @classmethod
    def open(
        cls,
        where: str | Path,
        *,
        readonly: bool = False,
        clock: Clock | None = None,
        settings: MetadataSettings | None = None,
    ) -> Metadata:
        """The existing store at ``where`` (a path or a store URL), migrated to the current
        schema if older.

        Raises :class:`NotARepository` naming the store when it is missing, unreachable,
        corrupt or not ours, and :class:`SchemaTooNew` when a newer xyleme wrote it.
        ``readonly`` opens it for queries only (the CLI): it never writes, so it cannot
        migrate either.
        """
        target = target_of(where)
        settings = settings or MetadataSettings()
        if target.path is not None and not target.path.is_file():
            raise NotARepository(
                target.path, "no such database file (create one with `xyleme init`)"
            )
        engine = Engine(target, readonly=readonly, settings=settings)
        try:
            conn = engine.connect()
            try:
                with translated(target.name):
                    prepare(conn, engine, readonly=readonly)
            finally:
                engine.release(conn)
        except StoreError as error:
            engine.close()
            raise NotARepository(target.name, f"unreadable database ({error.why})") from None
        except BaseException:
            engine.close()
            raise
        md = cls(engine, readonly=readonly, clock=clock or SystemClock(), settings=settings)
        if clock is None and not readonly:  # a writer dates what it stores on one rule
            md.clock = md.repository_clock(running=False)
        return md


def migrate_store(where: str | Path, settings: MetadataSettings | None = None) -> tuple[int, int]:
    """Bring the store at ``where`` to this code's schema (``xyleme migrate``); returns the
    versions ``(before, after)``. Raises :class:`SchemaTooNew` for a newer store, and what
    :meth:`Metadata.open` raises for one that is missing or not ours."""
    target = target_of(where)
    if target.path is not None and not target.path.is_file():
        raise NotARepository(target.path, "no such database file (create one with `xyleme init`)")
    engine = Engine(target, readonly=False, settings=settings or MetadataSettings())
    try:
        conn = engine.connect()
        try:
            with translated(target.name):
                return prepare(conn, engine, readonly=False)
        finally:
            engine.release(conn)
    finally:
        engine.close()


def prepare(conn: Connection, engine: Engine, *, readonly: bool) -> tuple[int, int]:
    """Check the store is ours and bring its schema to this code's version (a read-only
    opening only checks it is current); ``(found, now)`` versions."""
    name = engine.target.name
    check_application(conn, name)
    found, latest = schema.schema_version(conn), schema.latest_version()
    if found > latest:
        raise SchemaTooNew(name, found, latest)
    if readonly:
        if found < latest:
            raise NotARepository(
                name, f"schema version {found} needs migrating to {latest}: open it once read-write"
            )
        return found, found
    conn.execute(engine.dialect.begin_write)
    try:
        schema.migrate(conn, Path(name))
    except BaseException:
        rollback(conn)
        raise
    conn.execute("COMMIT")
    return found, latest


def _create_sqlite(path: Path) -> None:
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
        schema.create_schema(conn, SQLITE)
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


def _create_in_postgres(target: Target, settings: MetadataSettings) -> None:
    """The schema in an empty PostgreSQL database, in one transaction."""
    engine = Engine(target, readonly=False, settings=settings)
    try:
        conn = engine.connect()
        try:
            with translated(target.name):
                conn.execute("BEGIN")
                try:
                    tables = conn.execute(
                        "SELECT table_name FROM information_schema.tables "
                        "WHERE table_schema = current_schema()"
                    ).fetchall()
                    if any(row[0] == "meta" for row in tables):
                        raise RepositoryExists(target.name)
                    if tables:
                        raise NotARepository(
                            target.name, "the database holds other tables: give xyleme its own"
                        )
                    schema.create_schema(conn, POSTGRESQL)
                    schema.migrate(conn, Path(target.name))
                except BaseException:
                    rollback(conn)
                    raise
                conn.execute("COMMIT")
        finally:
            engine.release(conn)
    finally:
        engine.close()


__all__ = ["Metadata", "migrate_store"]
