"""Issue 17: every command starts fast. ``xyleme --help`` imports no command module, and
``xyleme status`` none of the heavy libraries, not even numpy; the lazy group's table of commands
(:data:`xyleme.cli.COMMANDS`) says what the modules define.

The import sets are read from ``python -X importtime`` in a fresh interpreter, the way a
user starts the command, so any import (a module's, a package ``__init__``'s) counts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.daemon_fixtures import RunningDaemon, make_repository
from xyleme.cli import COMMANDS, load_all

HEAVY = {"numpy", "scipy", "lxml", "aiohttp", "jinja2", "numba", "warcio", "xyleme.daemon"}
"""Libraries (and the daemon) a command that does not compute or serve must not load."""


def imported(*args: str, cwd: Path | None = None) -> set[str]:
    """The modules ``python -m xyleme ARGS`` imports, from ``-X importtime``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "xyleme", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}  # the first: the header


def tops(modules: set[str]) -> set[str]:
    """Each module and its top-level package (``numpy._core`` counts as ``numpy``)."""
    return modules | {name.split(".")[0] for name in modules}


def test_help_lists_every_command_and_imports_no_command_module():
    modules = imported("--help")
    assert not tops(modules) & HEAVY
    loaded = {name for name in modules if name.startswith("xyleme.cli.")}
    assert not loaded, f"--help imported {sorted(loaded)}"
    assert not {"metadata", "pydantic", "rich", "xyleme.config"} & modules


def test_status_imports_no_heavy_library(tmp_path):
    """Not even the metadata manager: the status reads with sqlite3 (metadata.glance)."""
    repository = make_repository(tmp_path / "repo")
    modules = tops(imported("--repo", str(repository), "status"))
    assert not modules & HEAVY, sorted(modules & HEAVY)
    assert not {"metadata.manager", "sqlite_utils", "pydantic", "rich", "xyleme.config"} & modules
    assert not {"refresh", "ranking", "loader"} & modules


def test_status_asks_a_running_daemon_without_a_heavy_library(tmp_path):
    """The question and the answer go through the light glance, opened writable."""
    repository = make_repository(tmp_path / "repo")
    daemon = RunningDaemon(repository)
    try:
        daemon.wait_for("daemon started")
        modules = tops(imported("--repo", str(repository), "status"))
        shown = subprocess.run(
            [sys.executable, "-m", "xyleme", "--repo", str(repository), "status"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        daemon.kill()
    assert "live from the daemon" in shown.stdout, shown.stdout + shown.stderr
    assert not modules & HEAVY, sorted(modules & HEAVY)
    assert not {"metadata.manager", "sqlite_utils", "pydantic"} & modules


def test_the_table_names_every_command_and_its_module():
    group = load_all()
    assert set(COMMANDS) == set(group.commands), "add the command to xyleme.cli.COMMANDS"
    for name, command in group.commands.items():
        module, summary = COMMANDS[name]
        defined_in = command.callback.__module__ if command.callback else ""
        assert defined_in == f"xyleme.cli.{module}", name
        text = " ".join((command.help or "").split())
        assert text.startswith(summary.rstrip(".")), f"{name}: {summary!r} does not start its help"
