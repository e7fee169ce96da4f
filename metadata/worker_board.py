"""The ``workers`` table through the manager (:mod:`metadata.heartbeats` holds its SQL):
a process's heartbeat written, every row read, a restarted part's old rows replaced."""

from __future__ import annotations

import time

from metadata.heartbeats import RUNNING, Heartbeat, beat, worker_rows
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

    def replace_part(self, name: str, part: int, parts: int) -> list[dict]:
        """Drop the rows of earlier workers of ``part`` of ``parts`` (a restart replaces
        them), returning those still beating (younger than :data:`STALE_AFTER`): another
        live worker of the same part, which the caller refuses to run beside."""
        now = time.time()
        with self._write() as conn:
            rows = [
                row
                for row in worker_rows(conn, now)
                if row["role"] == "worker"
                and (row["part"], row["parts"]) == (part, parts)
                and row["name"] != name
            ]
            alive = [row for row in rows if row["state"] == RUNNING and not row["stale"]]
            if not alive:
                for row in rows:
                    conn.execute("DELETE FROM workers WHERE name = ?", (row["name"],))
        return alive

    def forget_worker(self, name: str) -> bool:
        """Remove one process's row; whether it was there."""
        with self._write() as conn:
            return conn.execute("DELETE FROM workers WHERE name = ?", (name,)).rowcount == 1
