"""The ``workers`` table: who crawls a store shared by several processes, and how lately
they said so (issue 20, docs/scaleout.md).

Each crawl worker and each coordinator writes its row every few seconds (its heartbeat): its
role, its part of the hosts, its process and machine, the hosts it holds, the pages it read
and its rate. A process killed with ``kill -9`` leaves a row whose heartbeat grows old: the
readers (``xyleme status``, the dashboard) show it as stale, and the next worker started for
the same part replaces it. The functions take a bare connection (the light
:class:`metadata.glance.Glance` of ``xyleme status`` runs them without the manager's numpy);
:class:`metadata.worker_board.WorkerBoard` is the manager's face.

>>> import tempfile, pathlib
>>> from metadata import Metadata
>>> with Metadata.create(pathlib.Path(tempfile.mkdtemp()) / "metadata.db") as md:
...     md.heartbeat(Heartbeat("w1", "worker", 0, 2, 41, "box", 3, 120, 9.5, 1.0), now=10.0)
...     [(row["name"], row["part"], row["age"]) for row in md.workers(now=12.5)]
[('w1', 0, 2.5)]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

RUNNING, STOPPED = "running", "stopped"
"""A row's ``state``: a working process (a leading coordinator too), one that stopped
cleanly; also ``waiting`` (a coordinator waiting for the lead) and ``paused`` (a worker
paused by ``xyleme pause``)."""

STALE_AFTER = 15.0
"""Real seconds without a heartbeat after which a running process is shown as stale
(workers beat every 2 s by default: a stale row is a dead, stuck or cut-off process)."""

COLUMNS = (
    "name",
    "role",
    "part",
    "parts",
    "pid",
    "host",
    "hosts_owned",
    "pages_read",
    "pages_per_s",
    "started",
    "heartbeat",
    "state",
)


class Cursor(Protocol):
    def fetchall(self) -> list[tuple]: ...


class Connection(Protocol):
    """sqlite3's or the PostgreSQL adapter's (``metadata.dialect``): ``?`` placeholders."""

    def execute(self, sql: str, params: Any = ()) -> Cursor: ...


@dataclass(frozen=True)
class Heartbeat:
    """What one process says of itself: its ``name`` (unique in the store), ``role``
    (``worker`` or ``coordinator``), ``part`` of ``parts`` (None for a coordinator), its pid
    and machine, the hosts it holds, the pages it read since it started and its rate over
    the last beat, and when it started (wall clock)."""

    name: str
    role: str
    part: int | None
    parts: int | None
    pid: int
    host: str
    hosts_owned: int
    pages_read: int
    pages_per_s: float
    started: float
    state: str = RUNNING


def beat(conn: Connection, heartbeat: Heartbeat, now: float) -> None:
    """Write ``heartbeat`` as of wall-clock ``now`` (insert or replace the process's row)."""
    row = {**asdict(heartbeat), "heartbeat": now}
    names = ", ".join(COLUMNS)
    updates = ", ".join(f"{column} = excluded.{column}" for column in COLUMNS[1:])
    conn.execute(
        f"INSERT INTO workers ({names}) VALUES ({', '.join('?' * len(COLUMNS))}) "
        f"ON CONFLICT(name) DO UPDATE SET {updates}",
        tuple(row[column] for column in COLUMNS),
    )


def worker_rows(conn: Connection, now: float, stale_after: float = STALE_AFTER) -> list[dict]:
    """Every process's row (coordinators first, then workers by part), each with ``age``,
    the real seconds since its heartbeat, and ``stale``: running but silent for longer
    than ``stale_after``."""
    rows = conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM workers ORDER BY role, parts, part, started, name"
    ).fetchall()
    out = []
    for values in rows:
        row = dict(zip(COLUMNS, values, strict=True))
        row["age"] = max(0.0, now - float(row["heartbeat"]))
        row["stale"] = row["state"] != STOPPED and row["age"] > stale_after
        out.append(row)
    return out
