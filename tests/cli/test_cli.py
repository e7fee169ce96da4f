"""The CLI skeleton: help and version answer without a repository."""

import subprocess
import sys

from click.testing import CliRunner

from xyleme import __version__
from xyleme.cli import cli


def test_help_lists_the_global_repo_option():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "--repo" in result.output


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "xyleme", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert __version__ in out.stdout
