"""``xyleme dashboard``: options are checked, and the server answers and stops cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from metadata import Metadata
from tests.deadlines import readline_within
from tests.paths import ROOT
from xyleme.cli import cli


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    return tmp_path


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--http", "localhost"], "is not HOST:PORT"),
        (["--http", "example.com:80"], "is not an IP address"),
        (["--http", "127.0.0.1:70000"], "is not HOST:PORT"),
        (["--http-admin"], "--http-admin needs --token"),
        (["--token", "abcdefghij"], "only used with --http-admin"),
    ],
)
def test_bad_options_are_usage_errors(repo, arguments, message):
    result = CliRunner().invoke(cli, ["--repo", str(repo), "dashboard", *arguments])
    assert result.exit_code == 2
    assert message in result.output


def test_a_folder_that_is_not_a_repository_is_one_line_of_error(tmp_path):
    result = CliRunner().invoke(cli, ["--repo", str(tmp_path), "dashboard"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ") and "Traceback" not in result.output


def test_a_short_token_is_refused(repo):
    result = CliRunner().invoke(
        cli, ["--repo", str(repo), "dashboard", "--http-admin", "--token", "short"]
    )
    assert result.exit_code == 1
    assert "at least 8 characters" in result.output


def serve(repo: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xyleme",
            "--repo",
            str(repo),
            "dashboard",
            "--http",
            "127.0.0.1:0",
            *extra,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    banner = readline_within(process)
    assert " at http://127.0.0.1:" in banner, banner + process.stderr.read()
    return process, banner.split(" at ", 1)[1].split(" ", 1)[0]


def test_serves_read_only_and_stops_on_sigterm(repo):
    process, url = serve(repo)
    try:
        with urllib.request.urlopen(url + "api/status", timeout=20) as response:
            assert json.load(response)["pages_total"] == 0
        request = urllib.request.Request(url + "api/admin/pause", method="POST", data=b"")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=20)
        assert refused.value.code == 403
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


def test_admin_mode_runs_actions_on_the_repository_with_the_token(repo):
    process, url = serve(repo, "--http-admin", "--token", "0123456789abcdef")
    try:
        request = urllib.request.Request(
            url + "api/admin/pause",
            method="POST",
            data=b"",
            headers={"Authorization": "Bearer 0123456789abcdef"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.load(response) == {"ok": True, "message": "fetching paused"}
        seeds = urllib.request.Request(
            url + "api/admin/seeds",
            method="POST",
            data=json.dumps({"urls": ["http://a.test/"]}).encode(),
            headers={
                "Content-Type": "application/json",
                "Authorization": "Bearer 0123456789abcdef",
            },
        )
        with urllib.request.urlopen(seeds, timeout=30) as response:
            assert json.load(response)["message"].startswith("1 seed(s) added")
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    status = CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"])
    assert status.exit_code == 0, status.output
    assert json.loads(status.output)["paused"] is True
    assert json.loads(status.output)["seeds"] == 1
