"""Every loader command is documented in docs/loader.md and has help text."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from xyleme.cli import cli

DOC = ROOT / "docs" / "loader.md"
DOCS = DOC.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["load", "doc", "diff", "changes", "query"])
def test_command_is_documented_with_help(command):
    assert f"xyleme {command} " in DOCS
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert len(cli.commands[command].help or "") > 20
