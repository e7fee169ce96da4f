"""xyleme demo: unattended (no terminal, stdin closed), bounded, from any folder, leaves a
repository and plots; a folder an earlier demo left is refused or started over."""

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.deadlines import readline_within
from xyleme.children import ROOT, child_environment, python_command
from xyleme.cli import cli
from xyleme.dashboard.queries import QueryPool
from xyleme.demo import (
    CYCLE_DAYS,
    DEMO_MARKER,
    MAX_DAY_SECONDS,
    REFRESH_SHARE,
    DemoFolderError,
    choose_plan,
    mark_done,
    prepare_folder,
    web_settings,
)
from xyleme.simweb import SimWebProcess

FAKE_PACKAGE = "raise ImportError('imported the xyleme of the working directory')\n"


def _xyleme_command() -> list[str]:
    """The console script a user runs (its folder, not the working one, is on its path)."""
    script = Path(sys.executable).with_name("xyleme")
    return [str(script)] if script.exists() else [sys.executable, "-P", "-m", "xyleme"]


def _run_demo(cwd: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_xyleme_command(), "demo", *options],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _fake_xyleme(folder: Path) -> Path:
    """A folder holding a ``xyleme`` package that breaks whoever imports it."""
    (folder / "xyleme").mkdir(parents=True)
    (folder / "xyleme" / "__init__.py").write_text(FAKE_PACKAGE)
    return folder


# ---------------------------------------------------------------------- the plan


def test_g_refreshes_the_web_every_cycle_and_the_speed_leaves_headroom():
    plan = choose_plan(pages=2_000, hosts=5, days=20, capacity=400.0, speed=None)
    per_day = plan.capacity * 86_400 / plan.speed
    assert plan.G == 2_000 / CYCLE_DAYS  # every page read about every CYCLE_DAYS on average
    assert pytest.approx(REFRESH_SHARE * per_day, rel=1e-3) == plan.G  # with headroom
    assert plan.pages / per_day == pytest.approx(REFRESH_SHARE * CYCLE_DAYS)  # first read
    config = plan.config()
    assert config.clock.speed == plan.speed and config.bandwidth.G == plan.G


def test_a_longer_run_is_the_same_run_longer_never_less():
    short, long = (
        choose_plan(pages=2_000, hosts=5, days=days, capacity=400.0, speed=None) for days in (6, 60)
    )
    assert (short.speed, short.G) == (long.speed, long.G)  # same pace, same refresh cycles
    assert long.days / long.rank_every >= short.days / short.rank_every  # ranking passes
    assert short.days / short.rank_every >= 3  # a short run ranks too


def test_a_slow_crawler_keeps_the_pace_with_a_smaller_g():
    plan = choose_plan(pages=2_000, hosts=5, days=18, capacity=100.0, speed=None)
    assert 86_400 / plan.speed == pytest.approx(MAX_DAY_SECONDS)  # about two minutes
    per_day = plan.capacity * 86_400 / plan.speed
    assert pytest.approx(REFRESH_SHARE * per_day, abs=1) == plan.G  # what it sustains
    assert plan.G < 2_000 / CYCLE_DAYS  # so longer refresh cycles


def test_a_given_speed_is_kept_and_g_follows_the_capacity():
    plan = choose_plan(pages=1_000, hosts=3, days=5, capacity=100.0, speed=86_400.0)
    assert plan.speed == 86_400.0
    assert plan.G == REFRESH_SHARE * 100.0  # a share of the 100 pages a simulated day allows


def test_the_demo_web_is_sized_for_memory():
    settings = web_settings(2_000)
    assert settings.cache_bytes <= 16 << 20
    assert (
        settings.faults.oversize_bytes
        > choose_plan(2_000, 5, 1, 100.0, None).config().crawler.max_body_bytes
    )


# ---------------------------------------------------------------------- children


def test_children_run_on_the_safe_path_with_this_xyleme_first():
    assert python_command("xyleme.simweb.child", "--port", "0")[1:3] == ["-P", "-m"]
    environment = child_environment()
    assert environment["PYTHONSAFEPATH"] == "1"
    assert environment["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)


def test_the_simulated_web_starts_from_a_folder_holding_a_fake_xyleme(tmp_path, monkeypatch):
    monkeypatch.chdir(_fake_xyleme(tmp_path))
    with SimWebProcess(web_settings(100), frozen=True) as web:
        assert web.port > 0 and web.seed_urls


def test_a_dashboard_query_worker_runs_from_a_folder_holding_a_fake_xyleme(tmp_path, monkeypatch):
    (tmp_path / "documents").mkdir()
    monkeypatch.chdir(_fake_xyleme(tmp_path / "cwd"))
    pool = QueryPool(workers=1, queue=0, time_limit=30.0, memory_mb=512)
    rows, *_ = asyncio.run(pool.run(tmp_path / "documents", "count(//i)", 0, 10))
    assert rows == []  # an answer: the worker imported this xyleme, not the fake one


# ---------------------------------------------------------------------- the folder


def test_a_new_or_empty_folder_is_marked_as_the_demos(tmp_path):
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new" / "repo", tmp_path / "empty"):
        assert prepare_folder(folder, fresh=False) == folder
        assert json.loads((folder / DEMO_MARKER).read_text())["state"] == "starting"


def test_an_interrupted_demo_is_refused_then_started_over_with_fresh(tmp_path):
    folder = prepare_folder(tmp_path / "repo", fresh=False)
    (folder / "metadata.db").write_bytes(b"half written")
    mark_done(folder, "interrupted")
    with pytest.raises(DemoFolderError, match=r"interrupted or failed demo.*--fresh"):
        prepare_folder(folder, fresh=False)
    assert (folder / "metadata.db").exists()  # refusing loses nothing
    assert prepare_folder(folder, fresh=True) == folder
    assert sorted(path.name for path in folder.iterdir()) == [DEMO_MARKER]


def test_a_folder_no_demo_made_is_never_emptied(tmp_path):
    CliRunner().invoke(cli, ["init", str(tmp_path / "r")])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    for folder, what in (
        (tmp_path / "r", "holds a xyleme repository"),
        (tmp_path / "mine", "is not empty"),
    ):
        with pytest.raises(DemoFolderError, match=what):
            prepare_folder(folder, fresh=True)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    assert (tmp_path / "r" / "xyleme.toml").exists()


def test_the_cli_refuses_a_half_built_dir_as_bad_input(tmp_path):
    folder = prepare_folder(tmp_path / "repo", fresh=False)  # a run that died at once
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder)])
    assert result.exit_code == 2
    assert "--dir" in result.output and "--fresh" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------- whole runs


def _check_run(done: subprocess.CompletedProcess, repository: Path) -> str:
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.startswith("xyleme demo: a simulated web of 300 pages")
    assert "clock speed x43200" in out and "G = " in out and "θ = 0.1" in out
    # plain progress lines, not the live view (the first one's day depends on the start's speed)
    assert re.search(r"^day \d+\.\d/\d+  known \d+", out, re.MULTILINE)
    for part in ("crawl:", "load:", "freshness:", "ranking:", "OPIC:", "LiveRank re-check"):
        assert part in out, part
    assert f"xyleme --repo {repository} status" in out
    for name in ("index.html", "crawl.svg", "obsolescence.svg", "refreshes.svg", "ranks.svg"):
        assert (repository / "plots" / name).read_text().count("<svg") >= 1, name
    assert json.loads((repository / DEMO_MARKER).read_text())["state"] == "done"
    status = CliRunner().invoke(cli, ["--repo", str(repository), "status", "--json"])
    facts = json.loads(status.output)
    assert facts["daemon"]["pid"] is None
    assert facts["pages"].get("HTML", 0) > 0  # how many depends on the machine's speed
    return out


SHORT = ["--days", "3", "--pages", "300", "--speed", "43200"]


@pytest.mark.slow
def test_the_demo_runs_from_the_folder_that_holds_the_clone(tmp_path):
    parent = tmp_path / "home"
    parent.mkdir()
    (parent / "xyleme").symlink_to(ROOT, target_is_directory=True)  # ~/xyleme, the clone
    repository = tmp_path / "demo"
    out = _check_run(_run_demo(parent, *SHORT, "--dir", str(repository)), repository)
    assert "refresh:" in out


@pytest.mark.slow
def test_the_demo_starts_over_fresh_from_a_folder_with_a_fake_xyleme(tmp_path):
    cwd = _fake_xyleme(tmp_path / "cwd")
    repository = prepare_folder(tmp_path / "demo", fresh=False)  # a run killed at its start
    (repository / "metadata.db").write_bytes(b"half written")
    refused = _run_demo(cwd, *SHORT, "--dir", str(repository))
    assert refused.returncode == 2 and "--fresh" in refused.stderr
    _check_run(_run_demo(cwd, *SHORT, "--dir", str(repository), "--fresh"), repository)


@pytest.mark.slow
def test_ctrl_c_ends_with_a_summary_and_the_next_run_refuses_the_folder(tmp_path):
    repository = tmp_path / "demo"
    options = ["--days", "30", "--pages", "300", "--speed", "43200", "--dir", str(repository)]
    demo = subprocess.Popen(
        [*_xyleme_command(), "demo", *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        for _ in range(200):  # the first progress line past day 1, within the deadlines
            if readline_within(demo, timeout=120).startswith("day 1."):
                break
        else:
            pytest.fail("no progress line past day 1")
        demo.send_signal(signal.SIGINT)
        out, _ = demo.communicate(timeout=120)
    finally:
        demo.kill()
    assert demo.returncode == 0 and "Summary" in out
    assert json.loads((repository / DEMO_MARKER).read_text())["state"] == "interrupted"
    refused = _run_demo(tmp_path, *options)
    assert refused.returncode == 2 and "interrupted" in refused.stderr
