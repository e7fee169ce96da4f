"""Named state: small blobs stored by key (checkpoints, commands), and the repository's clock.

The clock is resumed from what the repository recorded last, so it lives beside the blobs
that hold its own checkpoint.
"""

from __future__ import annotations

from metadata.clock import CLOCK_STATE, Clock, decode_clock, resume_clock
from metadata.errors import translated
from metadata.glance import delete_state_value, latest_time, put_state_value, state_value
from metadata.store import Store


class NamedState(Store):
    """Blobs by key, and the clock resumed from the repository."""

    def put_state(self, key: str, value: bytes) -> None:
        """Store a small named blob (a checkpoint, the clock's epoch and speed)."""
        with self._write() as conn:
            put_state_value(conn, key, value)

    def get_state(self, key: str) -> bytes | None:
        """A blob stored with :meth:`put_state`, or None."""
        with self._lock, translated(self.name):
            return state_value(self._conn, key)

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
            return delete_state_value(conn, key)

    def latest_time(self) -> float | None:
        """The latest simulated time the repository recorded (a read or failed fetch, a
        discovery, a refusal), None when empty: a clock resumes from it after a crash, since
        the clock's own checkpoint may be older than what was committed after it."""
        with self._scan_lock, translated(self.name):
            return latest_time(self._scan_connection())

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
