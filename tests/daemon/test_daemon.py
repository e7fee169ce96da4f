"""The daemon's life cycle: lock, clean stop on signals, commands handed over, clock kept."""

import json
import signal

import pytest
from click.testing import CliRunner

from metadata import FetchResult, ManualClock, Metadata, PageType, StoreFull
from tests.daemon_fixtures import RunningDaemon, make_repository
from xyleme import commands
from xyleme.cli import cli
from xyleme.config import Config
from xyleme.daemon import Daemon
from xyleme.lock import DaemonLock, RepositoryLocked


def xyleme(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args])
    return result.exit_code, result.output


@pytest.fixture
def repo(tmp_path):
    return make_repository(tmp_path / "repo", "[daemon]\ncheckpoint_seconds = 0.2\n")


@pytest.fixture
def daemon(repo):
    running = RunningDaemon(repo)
    running.wait_for("daemon started")
    yield running
    running.kill()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_daemon_cleanly_with_a_checkpoint(repo, daemon, signum):
    assert daemon.stop(signum) == 0
    daemon.wait_for("daemon stopped")
    _, output = xyleme(repo, "status", "--json")
    status = json.loads(output)
    assert status["daemon"]["pid"] is None
    assert status["clock"]["now"] is not None and status["live"]["at"] is not None


def test_a_second_daemon_is_refused_while_the_first_runs(repo, daemon):
    second = RunningDaemon(repo)
    assert second.process.wait(30) == 1
    second.wait_for(f"held by a running daemon (process {daemon.process.pid}")


def test_state_commands_are_answered_by_the_running_daemon(repo, daemon):
    code, output = xyleme(repo, "seed", "add", "http://a.test/", "--json")
    assert code == 0 and json.loads(output)["added"] == ["http://a.test/"]
    daemon.wait_for("command seed add: 1 seed(s) added")
    assert xyleme(repo, "pause") == (0, "fetching paused\n")
    daemon.wait_for("command pause: fetching paused")
    code, output = xyleme(repo, "status")
    assert output.splitlines()[0] == f"daemon        running (pid {daemon.process.pid}), paused"
    assert daemon.stop(signal.SIGTERM) == 0
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert commands.stored_seeds(md) == ["http://a.test/"]
        assert commands.is_paused(md)
        assert md.state_keys("command/") == [] and md.state_keys("answer/") == []


def test_run_refuses_a_wrong_configuration_naming_the_key(tmp_path):
    repo = make_repository(tmp_path / "repo", "[clock]\nsped = 2\n")
    code, output = xyleme(repo, "run")
    assert code == 2 and "unknown key 'sped' in [clock]" in output


def test_run_refuses_a_folder_that_is_not_a_repository(tmp_path):
    code, output = xyleme(tmp_path, "run")
    assert code == 1 and "no such database file" in output
    assert not (tmp_path / "daemon.lock").exists()


def test_simulated_time_continues_across_restarts(repo):
    config = Config().replace("clock", speed=1000.0)
    first = Daemon(repo, config)
    first.open()
    reached = first.clock.now()
    first.close()
    second = Daemon(repo, config)
    second.open()
    assert second.clock.now() >= reached
    assert second.clock.speed == 1000.0
    second.close()


def test_large_bodies_spool_in_the_repository_and_a_crash_s_leftovers_are_removed(repo):
    spool = repo / "spool"
    spool.mkdir()
    left = spool / "xyro-left-by-a-kill.body"  # a body whose fetch was never committed
    left.write_bytes(b"<catalog/>")
    unrelated = spool / "notes.txt"
    unrelated.write_text("not a spooled body")
    daemon = Daemon(repo, Config(), clock=ManualClock(0.0))
    daemon.open()
    try:
        assert daemon.crawler.settings.spool_dir == str(spool)
        assert not left.exists() and unrelated.exists()
    finally:
        daemon.close()


async def test_the_in_process_daemon_answers_the_command_table_on_a_manual_clock(repo):
    daemon = Daemon(repo, Config(), clock=ManualClock(1_000.0))
    daemon.open()
    try:
        with pytest.raises(RepositoryLocked):
            Daemon(repo, Config()).open()
        with Metadata.open(repo / "metadata.db") as cli_side:
            first = commands.submit(cli_side, "pause", {})
            second = commands.submit(cli_side, "no such thing", {})
            await daemon.control.poll()
            assert commands.wait_for_answer(cli_side, first, 1).message == "fetching paused"
            refused = commands.wait_for_answer(cli_side, second, 1)
            assert not refused.ok and "unknown command" in refused.message
        assert daemon.paused
        daemon.clock.advance(500.0)
        daemon.checkpoints.write()
    finally:
        daemon.close()
    _, output = xyleme(repo, "status", "--json")
    assert json.loads(output)["clock"] == {"now": 1_500.0, "speed": 1.0}


def test_an_unanswered_command_is_withdrawn(repo):
    with Metadata.open(repo / "metadata.db") as md:
        command_id = commands.submit(md, "pause", {})
        with pytest.raises(commands.CommandFailed, match="did not take the command"):
            commands.wait_for_answer(md, command_id, timeout=0.2, poll=0.05)
        assert md.state_keys("command/") == []


async def test_a_full_disk_stops_the_daemon_with_a_clear_message(repo, monkeypatch):
    daemon = Daemon(repo, Config(), clock=ManualClock(1_000.0))
    daemon.open()
    full = StoreFull(daemon.md.path, "disk full (database or disk is full)")

    def no_space(*_args):
        raise full  # what the store raises for SQLite's SQLITE_FULL

    monkeypatch.setattr(daemon.md, "put_state", no_space)
    await daemon.periodic.run(daemon.checkpoints.periodic)
    assert daemon.failure == f"cannot write to the repository: {full}"
    assert "metadata.db: disk full (database or disk is full)" in daemon.failure
    daemon.close()  # its last checkpoint fails the same way: no exception, the lock is free
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.get_state("clock") is not None  # the checkpoint of the start is intact
    with DaemonLock(repo):  # released: a new daemon may start
        pass


async def test_a_failing_job_is_logged_and_the_daemon_goes_on(repo, caplog):
    daemon = Daemon(repo, Config(), clock=ManualClock(1_000.0))
    daemon.open()

    async def broken() -> None:
        raise RuntimeError("a bug")

    await daemon.periodic.run(broken)
    assert daemon.failure is None and "periodic job broken failed" in caplog.text
    daemon.close()


def test_rank_compute_and_recheck_are_handed_to_the_running_daemon(repo, daemon):
    code, output = xyleme(repo, "rank", "compute")
    assert code == 1 and "nothing to rank (no score was written)" in output
    with Metadata.open(repo / "metadata.db") as md:  # a page read, linking to another
        home, other = md.ids_for(["http://a.test/", "http://b.test/"])
        md.record_fetch(FetchResult(home, 1.0, PageType.HTML, 200, md5="0" * 32, children=[other]))
    code, output = xyleme(repo, "rank", "compute")
    assert code == 0, output
    assert "ranked 2 pages (0 XML) over 1 links by the daemon" in output
    daemon.wait_for("s: 2 pages (0 XML), 1 links")
    assert xyleme(repo, "pause") == (0, "fetching paused\n")
    code, output = xyleme(repo, "recheck", "--json")  # handed over: it needs fetching
    assert code == 1 and json.loads(output)["message"].startswith("fetching is paused")
    daemon.wait_for("command recheck: fetching is paused")


def test_json_logs_are_one_object_per_line(repo):
    running = RunningDaemon(repo, "--log-format", "json")
    try:
        line = running.wait_for("daemon started")
        assert running.stop(signal.SIGTERM) == 0
    finally:
        running.kill()
    entry = json.loads(line)
    assert entry["level"] == "INFO" and entry["logger"] == "xyleme.daemon"
    assert entry["message"].startswith("daemon started on ")
    assert all(json.loads(line) for line in running.lines)
