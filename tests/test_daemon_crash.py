"""SIGTERM and kill -9 in the middle of a crawl of the simulated web: resume, lose nothing."""

import json
import signal

import pytest
from click.testing import CliRunner

from tests.daemon_fixtures import (
    FAST_CRAWL,
    RunningDaemon,
    make_repository,
    read_pages,
    wait_until,
)
from xyleme.cli import cli
from xyleme.simweb import SimWebProcess, SimWebSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def web():
    with SimWebProcess(SimWebSettings(hosts=4, pages=1500), speed=3600.0) as process:
        yield process


@pytest.fixture
def repo(tmp_path, web):
    folder = make_repository(tmp_path / "repo", FAST_CRAWL)
    result = CliRunner().invoke(cli, ["--repo", str(folder), "seed", "add", *web.seed_urls])
    assert result.exit_code == 0, result.output
    return folder


def test_kill_9_mid_crawl_loses_nothing_committed_and_resumes(repo, web):
    first = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) >= 100)
    finally:
        first.kill()  # SIGKILL: no checkpoint, no clean shutdown
    before = read_pages(repo)
    second = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        second.wait_for("daemon started")
        second.wait_for("unread pages")  # the pages known but not read are queued again
        wait_until(lambda: len(read_pages(repo)) >= len(before) + 100)
        assert second.stop(signal.SIGTERM) == 0
    finally:
        second.kill()
    after = read_pages(repo)
    lost = {url_id for url_id, at in before.items() if after.get(url_id) != at}
    assert not lost, f"{len(lost)} committed reads lost or rewritten after kill -9"


def test_sigterm_mid_crawl_exits_0_with_a_checkpoint_and_a_restart_goes_on(repo, web):
    daemon = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) >= 50)
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.kill()
    daemon.wait_for("SIGTERM received")
    daemon.wait_for("daemon stopped")
    status = json.loads(CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"]).output)
    assert status["daemon"]["pid"] is None
    assert status["live"]["fetched"] > 0
    stopped_at = status["clock"]["now"]
    before = read_pages(repo)
    again = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) > len(before))
        assert again.stop(signal.SIGTERM) == 0
    finally:
        again.kill()
    status = json.loads(CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"]).output)
    assert status["clock"]["now"] > stopped_at  # simulated time went on, not back
