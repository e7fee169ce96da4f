"""The coordinator's election: one PostgreSQL advisory lock (issue 20).

Every coordinator of a store holds one connection of its own and asks
``pg_try_advisory_lock`` for a fixed key: the first one gets it and leads; the others ask
again every few seconds. The lock is the connection's: when the leader dies (``kill -9``,
its machine lost), PostgreSQL ends its session and frees the lock, and the next ask of a
waiting coordinator takes the lead. A leader checks its connection at each beat
(:meth:`CoordinatorLock.still_held`): a connection lost is a lead lost (another may have it
by now), and the leader stops leading (:class:`LeadLost`).

SQLite has no such lock, and no second machine: several workers need a PostgreSQL store
(docs/scaleout.md), so a lock on an SQLite store is refused.
"""

from __future__ import annotations

from typing import Any

from metadata.engines import CONNECT_TIMEOUT_S, target_of
from metadata.errors import MetadataError, StoreError, translated

LOCK_KEY = 7865130830
"""The advisory lock's key (any fixed bigint; the URL-Id lock uses 7865130829)."""


class LeadLost(MetadataError):
    """The coordinator's connection to the store broke: its lock may be another's now."""


class CoordinatorLock:
    """The advisory lock of the store at ``where`` (a PostgreSQL URL, or a repository's
    ``metadata.db`` whose ``xyleme.toml`` names one), on a connection of its own."""

    def __init__(self, where: Any) -> None:
        self.target = target_of(where)
        if self.target.path is not None:
            raise MetadataError(
                f"{self.target.name}: a coordinator needs a PostgreSQL store "
                "(several workers share one; `xyleme init --db postgresql://…`)"
            )
        self.held = False
        self._conn: Any = None

    def try_acquire(self) -> bool:
        """Take the lock if no other session holds it; whether this one holds it now. A
        store that cannot be reached raises :class:`metadata.StoreError`."""
        import psycopg  # only a PostgreSQL store pays for it

        with translated(self.target.name):
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(
                    self.target.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
                )
            row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()
        self.held = bool(row[0])
        return self.held

    def still_held(self) -> None:
        """Check the lock's connection is alive; :class:`LeadLost` when it is not."""
        if not self.held:
            raise LeadLost(f"{self.target.name}: the coordinator's lock is not held")
        try:
            with translated(self.target.name):
                self._conn.execute("SELECT 1").fetchone()
        except StoreError as error:
            self.held = False
            self.close()
            raise LeadLost(
                f"{self.target.name}: lost the connection that holds the coordinator's lock "
                f"({error.why})"
            ) from None

    def close(self) -> None:
        """Let go of the lock (closing its session frees it)."""
        self.held = False
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
