"""Issue 17: `xyleme status` is live while a daemon runs, and says how old its figures are."""

from __future__ import annotations

import json
import signal

import pytest
from click.testing import CliRunner

from metadata import Metadata
from tests.daemon_fixtures import RunningDaemon, make_repository
from xyleme.cli import cli
from xyleme.lock import DaemonLock
from xyleme.status import save_live_status


def xyleme(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path):
    # a checkpoint an hour apart: figures fresher than the start's come from the daemon
    return make_repository(
        tmp_path / "repo", "[daemon]\ncheckpoint_seconds = 3600\ncommand_poll = 0.05\n"
    )


def test_status_asks_the_running_daemon_for_its_figures(repo):
    daemon = RunningDaemon(repo)
    try:
        daemon.wait_for("daemon started")
        code, out, err = xyleme(repo, "status", "--json")
        assert code == 0, err
        facts = json.loads(out)
        assert facts["live_source"] == "daemon" and facts["daemon"]["pid"] is not None
        assert 0 <= facts["live_age"] < 30 and "fetched" in facts["live"]
        code, out, _ = xyleme(repo, "status")
        assert code == 0 and "figures       live from the daemon (simulated " in out
        assert "None" not in out
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.kill()


def test_a_daemon_that_does_not_answer_leaves_the_checkpoint_with_its_age(repo, monkeypatch):
    monkeypatch.setattr("xyleme.cli.status.ASK_TIMEOUT", 0.2)
    with Metadata.open(repo / "metadata.db") as md:
        save_live_status(md, {"at": 86_400.0, "fetch_rate": 1.5})
    with DaemonLock(repo):  # held, but nobody reads the command table
        code, out, err = xyleme(repo, "status")
    assert code == 0
    assert "the daemon did not take the command within 0.2 s" in err
    assert "figures       the daemon's last checkpoint (simulated 1970-01-02 00:00:00Z" in out
    assert "pages/s       1.5" in out
