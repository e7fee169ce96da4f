"""`xyleme stop`: the running daemon stops cleanly through the command table; exit 0 when it
stopped, 1 when it did not in time (the request withdrawn), 2 when no daemon runs."""

import json

import pytest
from click.testing import CliRunner

from metadata import Metadata
from tests.daemon_fixtures import RunningDaemon, make_repository
from xyleme.cli import cli
from xyleme.lock import DaemonLock, holder_pid


def xyleme(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path):
    return make_repository(tmp_path / "repo", "[daemon]\ncommand_poll = 0.1\n")


def test_stop_asks_the_daemon_and_waits_until_it_has_stopped(repo):
    daemon = RunningDaemon(repo)
    try:
        daemon.wait_for("daemon started")
        code, out, err = xyleme(repo, "stop", "--timeout", "60")
        assert (code, err) == (0, "")
        assert out.startswith(f"daemon (pid {daemon.process.pid}) stopped in ")
        assert holder_pid(repo) is None  # the lock is free when the command returns
        assert daemon.process.wait(30) == 0  # a clean stop: status 0, as after SIGTERM
        daemon.wait_for("command stop: daemon")
        daemon.wait_for("daemon stopped")
    finally:
        daemon.kill()
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.state_keys("command/") == [] and md.state_keys("answer/") == []
    code, out, err = xyleme(repo, "stop")
    assert code == 2 and out == "" and err == f"no daemon runs on {repo}: nothing to stop\n"


def test_stop_json_says_what_it_did(repo):
    daemon = RunningDaemon(repo)
    try:
        daemon.wait_for("daemon started")
        code, out, _ = xyleme(repo, "stop", "--json")
        reply = json.loads(out)
        assert code == 0 and reply["ok"] and reply["stopped"]
        assert reply["pid"] == daemon.process.pid and 0 < reply["seconds"] < 60
    finally:
        daemon.kill()
    code, out, _ = xyleme(repo, "stop", "--json")
    assert code == 2 and json.loads(out) == {
        "ok": False,
        "message": f"no daemon runs on {repo}: nothing to stop",
        "stopped": False,
        "pid": None,
        "seconds": 0.0,
    }


def test_a_daemon_that_does_not_answer_in_time_is_reported_and_the_request_withdrawn(repo):
    with DaemonLock(repo):  # holds the repository like a daemon, but never reads commands
        code, out, err = xyleme(repo, "stop", "--timeout", "0.3")
        assert code == 1 and out == ""
        assert "did not take the stop request within 0.3 s (withdrawn)" in err
        assert "`kill " in err  # the lock names this process: the way out is given
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.state_keys("command/") == []  # a later daemon is not stopped by it


def test_stop_refuses_a_folder_that_is_not_a_repository(tmp_path):
    code, _, err = xyleme(tmp_path, "stop")
    assert code == 1 and "xyleme init" in err and "Traceback" not in err


def test_a_negative_timeout_is_a_usage_error(repo):
    code, _, err = xyleme(repo, "stop", "--timeout", "-1")
    assert code == 2 and "--timeout" in err


def test_the_supervisor_takes_only_the_stop_requests(repo):
    """`run --workers` reads the command table for `stop` only: a daemon's commands stay."""
    from xyleme import commands

    with Metadata.open(repo / "metadata.db") as md:
        pause = commands.submit(md, "pause", {})
        stop = commands.submit(md, "stop", {})
        assert [taken[:2] for taken in commands.take_pending(md, only="stop")] == [(stop, "stop")]
        assert commands.take_pending(md, only="stop") == []
        assert [taken[:2] for taken in commands.take_pending(md)] == [(pause, "pause")]
