"""``xyleme status``: the repository's counts, and the daemon's figures with their age.

The counts (seeds, pages by type) are read from the database, as of the command. The
daemon's figures (rates, queues, passes, policy) live in its memory: while a daemon holds
the repository the command asks it for them through the command table
(:mod:`xyleme.commands`, ``status``), so they are live; when none runs, or it does not answer
within :data:`ASK_TIMEOUT`, they come from its last checkpoint, with how old that is.

This module imports what the status needs only: ``xyleme status`` starts fast.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from xyleme import commands
from xyleme.cli import cli, repo_path
from xyleme.cli.listing import ago, when
from xyleme.cli.reading import glance, json_option
from xyleme.lock import holder_pid
from xyleme.status import read_status
from xyleme.worker_status import worker_lines

ASK_TIMEOUT = 3.0
"""Real seconds a running daemon has to answer with its live figures (it looks at the
command table every ``[daemon] command_poll``, 0.05 s by default)."""

STATUS_LABELS = {
    "fetch_rate": "pages/s",
    "queues": "queues",
    "refreshes_last_unit": "refreshes",
    "last_refresh": "last refresh",
    "last_ranking": "last ranking",
    "policy": "policy",
    "recheck": "re-check",
}
"""The daemon's figures ``xyleme status`` shows, and their labels."""


@cli.command("status")
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Counts by page type, the daemon's rates and queues, and the last periodic passes;
    live while a daemon runs, else from its last checkpoint, each part saying how old it is.

    The crawl workers and coordinators sharing the store (``xyleme run --workers``) follow,
    one line each, a silent one marked STALE.

    ``--json`` adds ``live_source`` (``daemon``, ``checkpoint`` or null) and ``live_age``
    (real seconds since the figures were taken; null when unknown)."""
    repository = repo_path(ctx)
    pid = holder_pid(repository)
    with glance(repository) as reader:
        facts = read_status(reader, pid)
    facts["live_source"] = "checkpoint" if facts["live"] else None
    if pid is not None:
        asked = ask_daemon(repository)
        if asked is not None:
            facts.update(live=asked["live"], live_written=asked["written"], live_source="daemon")
            facts["clock"]["now"] = asked["live"].get("at", facts["clock"]["now"])
    written = facts["live_written"]
    facts["live_age"] = None if written is None else max(0.0, time.time() - written)
    if as_json:
        click.echo(json.dumps(facts, indent=2))
    else:
        click.echo(status_text(facts))


def ask_daemon(repository: Path) -> dict[str, Any] | None:
    """The running daemon's figures of this instant, or None (with a note on stderr) when it
    does not answer in time: the caller falls back on the checkpoint."""
    with glance(repository, writable=True) as desk:  # the command table, without numpy
        command_id = commands.submit(desk, "status", {})
        try:
            answer = commands.wait_for_answer(desk, command_id, ASK_TIMEOUT, poll=0.02)
        except commands.CommandFailed as error:
            click.echo(f"{error}: the daemon's figures are from its last checkpoint", err=True)
            return None
    if not answer.ok or "live" not in answer.data:  # a daemon older than the command
        return None
    return answer.data


def status_text(facts: dict[str, Any]) -> str:
    """The status as aligned lines: the database's counts, then the daemon's figures under a
    line that says where they come from and how old they are."""
    daemon, clock = facts["daemon"], facts["clock"]
    running = "not running" if daemon["pid"] is None else f"running (pid {daemon['pid']})"
    lines = [
        f"daemon        {running}{', paused' if facts['paused'] else ''}",
        f"simulated now {when(clock['now'], 'unknown')}"
        + (f"  (clock speed x{clock['speed']:g})" if clock["speed"] else ""),
        f"seeds         {facts['seeds']}",
        "pages         "
        + "".join(f"{kind} {count}  " for kind, count in facts["pages"].items())
        + f"(total {facts['pages_total']}; the database, now)",
    ]
    live = facts["live"]
    if not live:
        lines.append("figures       – (no daemon has run on this repository yet)")
    else:
        lines.append(f"figures       {_source(facts)}")
        for name, label in STATUS_LABELS.items():
            if name in live:
                lines.append(f"{label:<13} {_shown(name, live[name])}")
    return "\n".join([*lines, *worker_lines(facts.get("workers", []))])


def _source(facts: dict[str, Any]) -> str:
    """Where the daemon's figures come from, and how old they are."""
    taken = f"simulated {when(facts['live'].get('at'), 'unknown')}"
    age = "age unknown" if facts["live_age"] is None else f"{ago(facts['live_age'])} ago"
    if facts["live_source"] == "daemon":
        return f"live from the daemon ({taken}, {age})"
    return f"the daemon's last checkpoint ({taken}, written {age})"


def _shown(name: str, value: Any) -> str:
    """One figure for a person: a missing one is "never" or "unknown", never None."""
    if name.startswith("last_"):
        return when(value, "never")
    if value is None:
        return "– (no refresh pass yet)" if name == "refreshes_last_unit" else "unknown"
    if name == "queues":
        from xyleme.progress import queues_text  # rich: paid only when a daemon reported

        return queues_text(value)
    if name == "recheck":
        return f"{value['state']}: {value['line']}"
    if name == "refreshes_last_unit":
        return f"{value} in the last time unit"
    if isinstance(value, dict):
        return "  ".join(f"{key} {_number(item)}" for key, item in value.items())
    return _number(value)


def _number(value: Any) -> str:
    if value is None:
        return "unknown"
    return f"{value:.6g}" if isinstance(value, float) else str(value)
