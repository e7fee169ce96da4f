"""The dashboard mounted on a real in-process daemon (manual clock): live figures and admin
actions come from the daemon itself, through DaemonFigures."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request

import aiohttp
import pytest
from click.testing import CliRunner

from metadata import ManualClock
from tests.daemon_fixtures import RunningDaemon
from xyleme.cli import cli
from xyleme.config import Config
from xyleme.daemon import Daemon
from xyleme.dashboard import DaemonFigures, create_app, serving

TOKEN = "daemon-token-123"


@pytest.fixture
def daemon(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    running = Daemon(tmp_path, Config(), clock=ManualClock(1_000.0))
    running.open()
    yield running
    running.close()


async def test_live_figures_and_actions_come_from_the_daemon(aiohttp_client, daemon):
    app = create_app(daemon.repository, admin_token=TOKEN, live=DaemonFigures(daemon))
    client = await aiohttp_client(app)
    status = await (await client.get("/api/status")).json()
    live = status["live"]
    assert live["now"] == 1_000.0 and live["paused"] is False
    assert set(live["queues"]) == {"0", "1", "2", "3", "4"}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    answer = await client.post("/api/admin/pause", headers=headers)
    assert answer.status == 200 and daemon.paused
    answer = await client.post(
        "/api/admin/seeds", headers=headers, json={"urls": ["http://site0.simweb.test/"]}
    )
    assert answer.status == 200, await answer.text()
    assert "1 seed(s) added" in (await answer.json())["message"]


async def test_serving_binds_a_free_port_and_releases_it(daemon):
    app = create_app(daemon.repository, live=DaemonFigures(daemon))
    async with serving(app, "127.0.0.1", 0) as url:
        assert url.startswith("http://127.0.0.1:")
        async with aiohttp.ClientSession() as session, session.get(url + "api/status") as reply:
            assert reply.status == 200
            assert (await reply.json())["live"]["now"] == 1_000.0


def test_xyleme_run_http_serves_the_daemons_dashboard(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    daemon = RunningDaemon(tmp_path, "--http", "127.0.0.1:0")
    try:
        url = daemon.wait_for("dashboard at ").split("dashboard at ", 1)[1].strip()
        daemon.wait_for("daemon started")
        live: dict = {}
        for _ in range(50):  # the first sample may predate the daemon's start (2 s period)
            with urllib.request.urlopen(url + "api/status", timeout=20) as response:
                live = json.load(response)["live"]
            if "queues" in live:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"no live figures from the daemon after 50 polls: {live}")
        assert set(live["queues"]) == {"0", "1", "2", "3", "4"} and live["now"] > 0
    finally:
        assert daemon.stop(signal.SIGTERM) == 0


def test_the_demo_prints_its_dashboards_address(tmp_path):
    options = ["--days", "0.5", "--pages", "200", "--speed", "43200", "--dir", str(tmp_path / "r")]
    done = subprocess.run(
        [sys.executable, "-m", "xyleme", "demo", *options, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^dashboard at http://127\.0\.0\.1:\d+/$", done.stdout, re.MULTILINE)


async def test_standalone_dashboard_reads_while_a_daemon_holds_the_repository(
    aiohttp_client, tmp_path
):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    daemon = RunningDaemon(tmp_path)
    try:
        daemon.wait_for("daemon started")
        client = await aiohttp_client(create_app(tmp_path))
        status = await (await client.get("/api/status")).json()
        assert status["daemon"]["pid"] == daemon.process.pid
        assert (await client.get("/")).status == 200
        assert (await client.get("/schedule")).status == 200
    finally:
        assert daemon.stop(signal.SIGTERM) == 0
