"""The crawl workers and coordinators as ``xyleme status`` and the dashboard show them: one
line each from the store's ``workers`` table (:mod:`metadata.heartbeats`), a stale heartbeat
said as such (the process is dead, stuck or cut off from the store).

>>> row = {"role": "worker", "part": 1, "parts": 2, "host": "box", "pid": 7,
...        "hosts_owned": 3, "pages_read": 120, "pages_per_s": 9.5, "age": 1.2,
...        "state": "running", "stale": False}
>>> worker_line(row)
'part 1/2  box pid 7  hosts 3  read 120  9.5 pages/s  heartbeat 1.2 s ago'
>>> worker_line({**row, "age": 40.0, "stale": True})
'part 1/2  box pid 7  hosts 3  read 120  9.5 pages/s  STALE: no heartbeat for 40 s'
"""

from __future__ import annotations

from typing import Any


def heartbeat_text(row: dict[str, Any]) -> str:
    """How lately the process beat: "heartbeat 1.2 s ago", or STALE with how long."""
    age = float(row["age"])
    if row["stale"]:
        return f"STALE: no heartbeat for {age:.0f} s"
    if row["state"] == "stopped":
        return f"stopped {age:.0f} s ago"
    paused = "paused, " if row["state"] == "paused" else ""
    return f"{paused}heartbeat {age:.1f} s ago"


def worker_line(row: dict[str, Any]) -> str:
    """One process on one line: a worker's part, machine, hosts, pages and rate; a
    coordinator's lead; then its heartbeat."""
    where = f"{row['host']} pid {row['pid']}"
    if row["role"] == "coordinator":
        state = {"running": "leading", "waiting": "waiting for the lead"}.get(row["state"], "")
        return "  ".join(part for part in (where, state, heartbeat_text(row)) if part)
    return (
        f"part {row['part']}/{row['parts']}  {where}  hosts {row['hosts_owned']}  "
        f"read {row['pages_read']}  {float(row['pages_per_s']):.1f} pages/s  "
        f"{heartbeat_text(row)}"
    )


def worker_lines(rows: list[dict[str, Any]], width: int = 13) -> list[str]:
    """``xyleme status``'s lines for the coordinators and the workers (none when no
    process ever shared the store)."""
    lines = []
    for role, label in (("coordinator", "coordinator"), ("worker", "workers")):
        shown = [row for row in rows if row["role"] == role]
        for n, row in enumerate(shown):
            lines.append(f"{label if n == 0 else '':<{width}} {worker_line(row)}")
    return lines
