"""The ``workers`` table through the manager (:mod:`metadata.heartbeats` holds its SQL):
a process's heartbeat written, every row read, a dead process's row removed."""

from __future__ import annotations

import time

from metadata.heartbeats import Heartbeat, beat, worker_rows
from metadata.store import Store


class WorkerBoard(Store):
    """The ``workers`` table through the manager."""

    def heartbeat(self, heartbeat: Heartbeat, *, now: float) -> None:
        """Write a process's heartbeat (one transaction)."""
        with self._write() as conn:
            beat(conn, heartbeat, now)

    def workers(self, *, now: float | None = None) -> list[dict]:
        """Every process's row with its age (:func:`worker_rows`; ``now`` wall clock)."""
        with self._read() as conn:
            return worker_rows(conn, time.time() if now is None else now)

    def forget_worker(self, name: str) -> bool:
        """Remove one process's row; whether it was there."""
        with self._write() as conn:
            return conn.execute("DELETE FROM workers WHERE name = ?", (name,)).rowcount == 1
