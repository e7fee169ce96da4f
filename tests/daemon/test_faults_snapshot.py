"""Issue 18, fault 1: the refresh schedule reads ``refresh_view`` and ``observation_history``
from one snapshot. A writer that commits between the two reads (injected here, so the race
happens every time) used to give an IndexError in `xyleme schedule`, a 500 on /api/schedule
and a failed refresh pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metadata import FetchResult, ManualClock, Metadata, PageType
from xyleme.cli import cli
from xyleme.config import Config
from xyleme.daemon import Daemon
from xyleme.dashboard.figures import RepositoryFigures
from xyleme.dashboard.settings import DashboardSettings, refresh_settings

DAY = 86_400.0


def read(url_id: int, at: float, md5: str = "a") -> FetchResult:
    return FetchResult(url_id, at, PageType.HTML, status=200, md5=md5, children=[])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    with Metadata.open(tmp_path / "metadata.db", clock=ManualClock(DAY)) as md:
        ids = md.ids_for([f"http://site.test/{n}" for n in range(5)])
        md.record_fetches([read(url_id, DAY + url_id) for url_id in ids])
        md.record_fetches([read(url_id, 2 * DAY + url_id, "b") for url_id in ids])
    return tmp_path


@pytest.fixture
def writer_between_reads(repo: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """After each ``refresh_view``, another connection commits new read pages (a crawl)."""
    original = Metadata.refresh_view
    added: list[int] = []

    def view_then_write(md: Metadata) -> dict:
        view = original(md)
        with Metadata.open(repo / "metadata.db", clock=ManualClock(3 * DAY)) as other:
            (url_id,) = other.ids_for([f"http://site.test/new{len(added)}"])
            other.record_fetch(read(url_id, 3 * DAY))
        added.append(url_id)
        return view

    monkeypatch.setattr(Metadata, "refresh_view", view_then_write)
    return added


def test_one_snapshot_serves_both_reads(repo, writer_between_reads):
    with Metadata.open(repo / "metadata.db", readonly=True) as md, md.snapshot():
        view = md.refresh_view()
        history = md.observation_history()
    assert writer_between_reads, "the writer ran between the two reads"
    assert history["id"].tolist() == view["id"].tolist() == [1, 2, 3, 4, 5]


def test_snapshots_nest_and_later_reads_see_the_new_commits(repo, writer_between_reads):
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        with md.snapshot(), md.snapshot():
            md.refresh_view()
            assert len(md.observation_history()["id"]) == 5
        assert len(md.observation_history()["id"]) == 6


def test_xyleme_schedule_during_a_crawl(repo, writer_between_reads):
    result = CliRunner().invoke(cli, ["--repo", str(repo), "schedule", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)) == 5
    assert writer_between_reads


def test_dashboard_schedule_during_a_crawl(repo, writer_between_reads):
    figures = RepositoryFigures(repo, DashboardSettings(), refresh_settings(repo))
    try:
        report, urls = figures.report()
    finally:
        figures.close()
    assert len(report.ids) == len(urls) == 5 and writer_between_reads


async def test_daemon_refresh_pass_during_a_crawl(repo, writer_between_reads):
    daemon = Daemon(repo, Config(), clock=ManualClock(4 * DAY))
    daemon.open()
    try:
        await daemon.refresh.run()
        assert daemon.refresh.policy["pages"] >= 5 and writer_between_reads
    finally:
        daemon.close()
