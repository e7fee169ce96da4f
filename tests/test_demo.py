"""xyleme demo: unattended (no terminal, stdin closed), bounded, leaves a repository."""

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from xyleme.cli import cli
from xyleme.demo import MAX_REAL_SECONDS, READ_DAYS, REFRESH_SHARE, choose_plan


def test_the_plan_reads_the_web_in_the_first_days_and_refreshes_within_capacity():
    plan = choose_plan(pages=20_000, hosts=50, days=30, capacity=1_000.0, speed=None)
    per_day = plan.capacity * 86_400 / plan.speed
    assert plan.pages / per_day == pytest.approx(READ_DAYS)  # read once in READ_DAYS days
    assert 0 < plan.G < per_day  # refreshes leave room for discovery
    assert plan.config().clock.speed == plan.speed and plan.config().bandwidth.G == plan.G


def test_a_slow_crawler_gets_a_faster_clock_to_end_in_time():
    plan = choose_plan(pages=20_000, hosts=50, days=30, capacity=100.0, speed=None)
    assert plan.days * 86_400 / plan.speed == pytest.approx(MAX_REAL_SECONDS)
    assert "the web read in ~20.0 days" in plan.describe()


def test_a_given_speed_is_kept_and_g_follows_the_capacity():
    plan = choose_plan(pages=1_000, hosts=3, days=5, capacity=100.0, speed=86_400.0)
    assert plan.speed == 86_400.0
    assert plan.G == REFRESH_SHARE * 100.0  # a share of the 100 pages a simulated day allows


@pytest.mark.slow
def test_the_demo_runs_unattended_and_leaves_a_repository(tmp_path):
    repository = tmp_path / "demo"
    options = ["--days", "1", "--pages", "300", "--speed", "43200", "--dir", str(repository)]
    done = subprocess.run(
        [sys.executable, "-m", "xyleme", "demo", *options],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("xyleme demo: a simulated web of 300 pages")
    assert "clock speed x43200" in out and "G = " in out and "θ = 0.1" in out
    # plain progress lines, not the live view (the first one's day depends on the start's speed)
    assert re.search(r"^day \d+\.\d/1  known \d+", out, re.MULTILINE)
    assert "Summary" in out and "freshness:" in out
    assert f"xyleme --repo {repository} status" in out
    status = CliRunner().invoke(cli, ["--repo", str(repository), "status", "--json"])
    facts = json.loads(status.output)
    assert facts["daemon"]["pid"] is None
    assert facts["pages"].get("HTML", 0) > 0  # how many depends on the machine's speed
    config = CliRunner().invoke(cli, ["--repo", str(repository), "config", "show", "--json"])
    assert json.loads(config.output)["clock"]["speed"] == 43200.0


def test_the_demo_refuses_an_existing_repository(tmp_path):
    CliRunner().invoke(cli, ["init", str(tmp_path / "r")])
    result = CliRunner().invoke(cli, ["demo", "--dir", str(tmp_path / "r")])
    assert result.exit_code == 1 and "already holds a xyleme repository" in result.output
