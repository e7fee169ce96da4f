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

import sqlite_utils

from metadata import schema
from metadata.clock import Clock, SystemClock
from metadata.errors import NotARepository, RepositoryExists, SchemaTooNew
from metadata.fetches import Fetches
from metadata.links import Links
from metadata.ranks import Ranks
from metadata.settings import MetadataSettings
from metadata.state import NamedState
from metadata.status import LoadStatuses
from metadata.store import check_application, connect, rollback


class Metadata(Fetches, Links, LoadStatuses, NamedState, Ranks):
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
        conn = connect(path, readonly=readonly, settings=settings)
        try:
            db = sqlite_utils.Database(conn)
            check_application(db, path)
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
                    rollback(conn)
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


__all__ = ["Metadata"]
