"""Issue 18, fault 7: `xyleme run --http` checks the repository lock before it announces its
dashboard, and `xyleme status` never shows a person the word None."""

from __future__ import annotations

from click.testing import CliRunner

from metadata import ManualClock, Metadata
from xyleme.cli import cli
from xyleme.lock import DaemonLock
from xyleme.status import save_clock, save_live_status


def test_run_http_on_a_held_repository_refuses_before_any_banner(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    with DaemonLock(tmp_path):
        result = CliRunner().invoke(cli, ["--repo", str(tmp_path), "run", "--http", "127.0.0.1:0"])
    assert result.exit_code == 1
    assert "held by a running daemon" in result.output
    assert "dashboard at" not in result.output


def test_status_before_any_refresh_pass_shows_no_none(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    live = {
        "at": 86_400.0,
        "fetch_rate": None,
        "queues": {"1": 0},
        "refreshes_last_unit": None,
        "last_refresh": None,
        "last_ranking": None,
        "policy": {"G": 100.0, "theta": 0.1, "S": None, "omega": None},
    }
    with Metadata.open(tmp_path / "metadata.db") as md:
        save_live_status(md, live)
        save_clock(md, ManualClock(86_400.0, speed=60.0))
    result = CliRunner().invoke(cli, ["--repo", str(tmp_path), "status"])
    assert result.exit_code == 0, result.output
    assert "None" not in result.output
    lines = result.output.splitlines()
    assert "refreshes     – (no refresh pass yet)" in lines
    assert "last refresh  never" in lines
    assert "policy        G 100  theta 0.1  S unknown  omega unknown" in lines
    assert "pages/s       unknown" in lines
