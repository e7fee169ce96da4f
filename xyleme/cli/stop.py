"""``xyleme stop``: ask the repository's daemon to stop cleanly, and wait until it has (or
``xyleme run --workers``: its supervisor stops its workers and coordinator as on SIGTERM).

The request goes through the command table (:func:`xyleme.commands.stop_daemon`), so it
works whoever started the daemon and wherever its pid file is; the daemon then stops as on
SIGTERM (in-flight work finished or abandoned after ``[crawler] shutdown_deadline``, a last
checkpoint, the archive closed) and lets go of the repository's lock, which is what the
command waits for.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import NoReturn

import click

from xyleme.cli import cli, repo_path

DEFAULT_TIMEOUT = 60.0
"""Seconds ``xyleme stop`` waits: the 10 s shutdown deadline, a checkpoint and the archive's
close, with room to spare on a loaded machine."""


@cli.command("stop")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.0, max=86_400.0),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="S",
    help="Seconds to wait for the daemon to finish before giving up (exit 1).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def stop(ctx: click.Context, timeout: float, as_json: bool) -> None:
    """Stop the daemon running on the repository, as SIGTERM would, and wait until it has.

    Exit status: 0 stopped, 1 still running after --timeout seconds, 2 no daemon runs.
    Example: `xyleme --repo crawl stop --timeout 120`.
    """
    from xyleme import commands
    from xyleme.cli.reading import DATABASE, open_metadata
    from xyleme.lock import SUPERVISOR_LOCK_FILE, holder_pid

    repository = repo_path(ctx)
    if not (repository / DATABASE).exists():
        with open_metadata(repository, readonly=True):
            pass  # raises the repository's own "not a repository" message
    pid, who = holder_pid(repository), "daemon"
    if pid is None:  # `xyleme run --workers`: its supervisor takes the stop request
        pid, who = holder_pid(repository, SUPERVISOR_LOCK_FILE), "workers' supervisor"
    if pid is None:
        _say(as_json, 2, f"no daemon runs on {repository}: nothing to stop", pid, False, 0.0)
    who = f"{who} (pid {pid})" if pid else who
    with open_metadata(repository, readonly=False) as md:
        outcome = commands.stop_daemon(md, partial(_running, repository), timeout)
    if outcome.stopped:
        _say(as_json, 0, f"{who} stopped in {outcome.seconds:.1f} s", pid, True, outcome.seconds)
    if outcome.taken:
        message = (
            f"{who} took the stop request but is still finishing after {timeout:g} s "
            "(in-flight work gets [crawler] shutdown_deadline seconds); "
            "run `xyleme stop` again to wait longer"
        )
    else:
        message = (
            f"{who} did not take the stop request within {timeout:g} s (withdrawn); "
            "it is still running" + (f": `kill {pid}` sends it SIGTERM" if pid else "")
        )
    _say(as_json, 1, message, pid, False, outcome.seconds)


def _running(repository: Path) -> bool:
    """Whether a daemon or the workers' supervisor still holds the repository (each lets go
    once it and its processes have stopped)."""
    from xyleme.lock import LOCK_FILE, SUPERVISOR_LOCK_FILE, holder_pid

    held = (holder_pid(repository, file) for file in (LOCK_FILE, SUPERVISOR_LOCK_FILE))
    return any(pid is not None for pid in held)


def _say(
    as_json: bool, code: int, message: str, pid: int | None, stopped: bool, seconds: float
) -> NoReturn:
    """Print the outcome (people: success on stdout, the rest on stderr) and exit."""
    if as_json:
        fields = {"ok": code == 0, "message": message, "stopped": stopped, "pid": pid or None}
        click.echo(json.dumps({**fields, "seconds": round(seconds, 3)}))
    else:
        click.echo(message, err=code != 0)
    raise SystemExit(code)
