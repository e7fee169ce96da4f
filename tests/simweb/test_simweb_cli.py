"""``xyleme simweb serve|truth``: the truth as JSON, serving from another process, clean stops."""

import asyncio
import json
import signal
import socket
import subprocess
import sys
from email.utils import parsedate_to_datetime

import aiohttp
import pytest
from click.testing import CliRunner

from tests.deadlines import readline_within
from xyleme.cli import cli
from xyleme.simweb import (
    DAY,
    GroundTruth,
    SimWeb,
    SimWebProcess,
    SimWebProcessError,
    SimWebSettings,
)


def test_truth_json_is_the_ground_truth():
    result = CliRunner().invoke(
        cli,
        [
            "simweb",
            "truth",
            "--hosts",
            "3",
            "--pages",
            "40",
            "--seed",
            "2",
            "--days",
            "3",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    dumped = json.loads(result.output)
    settings = SimWebSettings(hosts=3, pages=40, seed=2)
    truth = GroundTruth(SimWeb(settings))
    at = settings.epoch + 3 * DAY
    assert dumped["at"] == at and len(dumped["pages"]) == 40 and len(dumped["hosts"]) == 3
    for page in (0, 17, 39):
        assert dumped["pages"][page] == truth.page(page, at).to_dict()
    assert dumped["seed_urls"] == truth.web.seed_urls()


def test_truth_summary_and_output_file(tmp_path):
    target = tmp_path / "truth.txt"
    result = CliRunner().invoke(
        cli, ["simweb", "truth", "--hosts", "4", "--pages", "200", "--no-faults", "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    summary = target.read_text()
    assert "hosts 4, pages 200" in summary and "faults: none" in summary


def test_bad_settings_are_a_clear_error_not_a_traceback():
    result = CliRunner().invoke(cli, ["simweb", "truth", "--hosts", "0"])
    assert result.exit_code == 2
    assert "hosts = 0: must be an integer in [1, 100000]" in result.output
    assert "Traceback" not in result.output


def test_commands_have_help():
    for command in (["simweb"], ["simweb", "serve"], ["simweb", "truth"]):
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0 and "Usage" in result.output


def test_serve_in_another_process_answers_and_stops_on_sigint():
    settings = SimWebSettings(hosts=3, pages=60, seed=6)

    async def fetch(served):
        connector = aiohttp.TCPConnector(resolver=served.resolver())
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.get(served.seed_urls[1]) as response,
        ):
            return response.status, response.headers, await response.read()

    with SimWebProcess(settings, frozen=True, start_days=2) as served:
        status, headers, body = asyncio.run(fetch(served))
        assert status == 200 and b"</html>" in body
        frozen_at = settings.epoch + 2 * DAY
        assert served.clock().now() == frozen_at
        assert parsedate_to_datetime(headers["Date"]).timestamp() == frozen_at
        process = served.process
    assert process.returncode == 0


def test_another_process_shares_the_servers_running_clock():
    settings = SimWebSettings(hosts=2, pages=20, seed=6)

    async def fetch(served):
        connector = aiohttp.TCPConnector(resolver=served.resolver())
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.get(served.seed_urls[0]) as response,
        ):
            return response.headers["Date"]

    with SimWebProcess(settings, speed=1.0, start_days=3) as served:
        clock = served.clock()
        served_at = parsedate_to_datetime(asyncio.run(fetch(served))).timestamp()
        # Same simulated time in both processes, up to the HTTP date's one-second resolution
        # and the time the request took (at speed 1, real seconds).
        assert abs(served_at - clock.now()) < 3.0
        assert served_at >= settings.epoch + 3 * DAY


def test_serve_prints_its_port_and_seeds_and_stops_on_sigterm():
    command = [sys.executable, "-m", "xyleme", "simweb", "serve", "--hosts", "2", "--pages", "20"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [readline_within(process) for _ in range(5)]
        assert lines[0].startswith("simweb: 2 hosts, 20 pages")
        assert lines[1].startswith("port ") and int(lines[1].split()[1].rstrip(";")) > 0
        assert [line.strip() for line in lines[3:5]] == [
            "http://site0.simweb.test/",
            "http://site1.simweb.test/",
        ]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert "stopped" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()


def test_a_server_process_that_cannot_start_says_why():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = pytest.raises(SimWebProcessError, match="address already in use")
        with refused, SimWebProcess(SimWebSettings(hosts=2, pages=20), port=port):
            pass
