"""Every CLI command has help text and is documented in the README or docs/ (sqlite-utils' rule)."""

import click
import pytest

from tests.paths import ROOT
from xyleme.cli import load_all


def _commands(group: click.Group, prefix: str = "xyleme") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        found.append((path, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, path))
    return found


cli = load_all()  # the lazy group imports every command module for the walk
COMMANDS = _commands(cli)
DOCS = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))]
)


def test_the_cli_has_commands():
    assert len(COMMANDS) >= 5


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[path for path, _ in COMMANDS])
def test_command_has_help(path, command):
    assert (command.help or "").strip(), f"{path} has no help text"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[path for path, _ in COMMANDS])
def test_command_is_documented(path, command):
    assert path in DOCS, f"`{path}` is not mentioned in README.md or docs/*.md"
