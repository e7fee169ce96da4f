"""`xyleme seed add|list|remove`: dated seeds, their scope, removal that keeps the pages."""

from __future__ import annotations

import json
import signal

import pytest
from click.testing import CliRunner

from metadata import ManualClock, Metadata
from tests.daemon_fixtures import RunningDaemon, make_repository
from xyleme import commands
from xyleme.cli import cli
from xyleme.config import Config
from xyleme.daemon import Daemon


def xyleme(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args], env={"COLUMNS": "150"})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def repo(tmp_path):
    return make_repository(tmp_path / "repo", "[daemon]\ncheckpoint_seconds = 0.2\n")


def listed(repo) -> list[dict]:
    code, out, _ = xyleme(repo, "seed", "list", "--json")
    assert code == 0
    return json.loads(out)


def test_seeds_are_listed_with_their_date_scope_and_page(repo):
    assert xyleme(repo, "seed", "add", "http://A.test/", "http://b.test/x")[0] == 0
    seeds = listed(repo)
    assert [seed["url"] for seed in seeds] == ["http://a.test/", "http://b.test/x"]
    assert all(seed["added"] > 1.7e9 and seed["in_scope"] for seed in seeds)
    assert seeds[0]["scope_reason"] is None and seeds[0]["type"] == "UNKNOWN"
    assert seeds[0]["last_access"] is None and seeds[0]["url_id"] == 1
    code, out, err = xyleme(repo, "seed", "list")
    assert code == 0 and err == ""
    assert "http://b.test/x" in out and "never read" in out and "yes" in out
    assert "None" not in out
    code, out, err = xyleme(repo, "seed", "list", "--limit", "1", "--csv")
    assert out.splitlines()[0].startswith("url,added,in_scope,scope_reason")
    assert len(out.splitlines()) == 2 and "1 of 2 seeds shown" in err


def test_a_seed_out_of_the_configured_scope_says_why(tmp_path):
    repo = make_repository(tmp_path / "repo", '[crawler]\nscope = ["a.test"]\n')
    with Metadata.open(repo / "metadata.db") as md:
        commands.RepositoryTarget(md).add_seeds(["http://www.a.test/", "http://other.test/"])
    inside, outside = listed(repo)
    assert inside["in_scope"] and not outside["in_scope"]
    assert outside["scope_reason"] == "out of scope: host other.test is not in the scope"
    assert "no: out of scope" in xyleme(repo, "seed", "list")[1]


def test_seeds_stored_before_dates_were_kept_are_listed_undated(repo):
    with Metadata.open(repo / "metadata.db") as md:
        md.put_state(commands.SEEDS_KEY, json.dumps(["http://old.test/"]).encode())
        commands.RepositoryTarget(md).add_seeds(["http://new.test/"])
    old, new = listed(repo)
    assert (old["url"], old["added"]) == ("http://old.test/", None)
    assert new["added"] is not None
    assert "unknown" in xyleme(repo, "seed", "list")[1]


def test_removing_a_seed_keeps_its_page_and_names_what_was_no_seed(repo):
    xyleme(repo, "seed", "add", "http://a.test/", "http://b.test/")
    code, out, _ = xyleme(repo, "seed", "remove", "http://A.test")
    assert code == 0
    assert out == "1 seed(s) removed; their pages and history stay in the repository\n"
    assert [seed["url"] for seed in listed(repo)] == ["http://b.test/"]
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.id_for("http://a.test/", create=False) == 1  # the page stays
    code, out, _ = xyleme(repo, "seed", "remove", "http://a.test/", "not a url", "--json")
    answer = json.loads(out)
    assert code == 1 and answer["removed"] == []
    assert answer["not_seeds"] == ["http://a.test/", "not a url"]
    assert "not a seed: http://a.test/, not a url" in answer["message"]
    code, _, err = xyleme(repo, "seed", "remove")
    assert code == 2 and "Missing argument" in err


async def test_the_daemon_narrows_its_scope_when_a_seed_is_removed(repo):
    with Metadata.open(repo / "metadata.db") as md:
        commands.RepositoryTarget(md).add_seeds(["http://a.test/", "http://b.test/"])
    daemon = Daemon(repo, Config(), clock=ManualClock(1_000.0))
    daemon.open()
    try:
        assert daemon.crawler.scope.refusal("http://b.test/page") is None
        with Metadata.open(repo / "metadata.db") as cli_side:
            command = commands.submit(cli_side, "seed remove", {"urls": ["http://b.test/"]})
            await daemon.control.poll()
            answer = commands.wait_for_answer(cli_side, command, 1)
        assert answer.ok and answer.data["removed"] == ["http://b.test/"]
        assert daemon.crawler.scope.refusal("http://b.test/page") is not None
        assert daemon.crawler.scope.refusal("http://a.test/page") is None
    finally:
        daemon.close()


def test_a_running_daemon_takes_the_removal(repo):
    daemon = RunningDaemon(repo)
    try:
        daemon.wait_for("daemon started")
        assert xyleme(repo, "seed", "add", "http://a.test/")[0] == 0
        code, out, _ = xyleme(repo, "seed", "remove", "http://a.test/")
        assert code == 0 and out.startswith("1 seed(s) removed")
        daemon.wait_for("command seed remove: 1 seed(s) removed")
        assert listed(repo) == []  # a reader, while the daemon runs
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.kill()
