"""Issue 18, fault 3: time never goes backwards for a page, across crashes too.

A simulated clock resumes from the latest time the repository committed (not from the last
checkpoint, which a kill -9 leaves behind); speed 1 is wall time; every stored timestamp,
``discovered_at`` and refusals included, is on the repository's clock."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType
from metadata.clock import AcceleratedClock, ManualClock, SystemClock, resume_clock
from xyleme.cli import cli
from xyleme.config import Config
from xyleme.daemon import Daemon
from xyleme.status import repository_now, restore_clock, save_clock

FUTURE = 2_200_000_000.0  # 2039: simulated time an accelerated daemon reached
SPEED = 86_400.0


def read(url_id: int, at: float) -> FetchResult:
    return FetchResult(url_id, at, PageType.HTML, status=200, md5=f"{at}", children=[])


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    """An accelerated repository whose daemon read pages after its last checkpoint, then
    was killed: the checkpoint says FUTURE, the pages were read up to FUTURE + 3 days."""
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    with Metadata.open(tmp_path / "metadata.db", clock=ManualClock(FUTURE)) as md:
        clock = AcceleratedClock(epoch=FUTURE, speed=SPEED)
        clock.freeze()
        save_clock(md, clock)
        ids = md.ids_for([f"http://site.test/{n}" for n in range(3)])
        md.record_fetches([read(url_id, FUTURE + url_id * SPEED) for url_id in ids])
    return tmp_path


def test_a_simulated_clock_resumes_from_the_latest_committed_read(crashed):
    with Metadata.open(crashed / "metadata.db") as md:
        assert md.latest_time() == FUTURE + 3 * SPEED
        clock = restore_clock(md, SPEED, time.time())
        assert clock.now() >= FUTURE + 3 * SPEED
        assert repository_now(md) >= FUTURE + 3 * SPEED


def test_after_a_crash_no_page_is_read_before_its_last_read(crashed):
    config = Config()
    config = dataclasses.replace(config, clock=dataclasses.replace(config.clock, speed=SPEED))
    daemon = Daemon(crashed, config)
    daemon.open()
    try:
        now = daemon.clock.now()
        view = daemon.md.refresh_view()
        assert now >= view["last_access"].max()
    finally:
        daemon.close()


def test_speed_one_is_wall_time_after_downtime(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        md.put_state("clock", b'{"now": %f, "speed": 1.0}' % (time.time() - 3_600))
        assert abs(restore_clock(md, 1.0, time.time()).now() - time.time()) < 5


def test_speed_one_never_goes_below_a_recorded_time(tmp_path):
    with Metadata.create(tmp_path / "metadata.db", clock=ManualClock(FUTURE)) as md:
        md.ids_for(["http://site.test/"])
        assert restore_clock(md, 1.0, time.time()).now() >= FUTURE


def test_the_wall_clock_never_runs_backwards(monkeypatch):
    clock = SystemClock()
    readings = iter([1_000.0, 900.0, 1_100.0])
    monkeypatch.setattr(time, "time", lambda: next(readings))
    assert [clock.now(), clock.now(), clock.now()] == [1_000.0, 1_000.0, 1_100.0]


def test_resume_clock_rules():
    assert resume_clock(SPEED, None, start=50.0).now() >= 50.0
    assert isinstance(resume_clock(1.0, 10.0), SystemClock)
    frozen = resume_clock(SPEED, 70.0, running=False)
    assert frozen.now() == 70.0 and frozen.now() == 70.0


def test_a_seed_added_without_a_daemon_is_dated_on_the_repositorys_clock(crashed):
    result = CliRunner().invoke(cli, ["--repo", str(crashed), "seed", "add", "http://new.test/"])
    assert result.exit_code == 0, result.output
    with Metadata.open(crashed / "metadata.db", readonly=True) as md:
        seed = md.page_by_url("http://new.test/")
    assert seed.discovered_at >= FUTURE + 3 * SPEED  # simulated, not the wall clock's 2026


def test_status_shows_the_time_reached_after_the_checkpoint(crashed):
    result = CliRunner().invoke(cli, ["--repo", str(crashed), "status", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["clock"] == {"now": FUTURE + 3 * SPEED, "speed": SPEED}
