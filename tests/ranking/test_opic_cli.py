"""``xyleme opic``: top pages and discovery order from the last OPIC checkpoint."""

import json

import pytest
from click.testing import CliRunner

from metadata import Metadata
from ranking.opic import OPIC
from xyleme.cli import cli


@pytest.fixture
def repository(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    return tmp_path


def _checkpoint(repository):
    with Metadata.open(repository / "metadata.db") as md:
        ids = md.ids_for([f"http://a.test/{name}" for name in ("a", "b", "c", "d")])
        opic = OPIC()
        opic.add_pages(ids[:1])
        opic.on_fetch(ids[0], ids[1:3])
        opic.on_fetch(ids[1], [ids[2], ids[3]])
        opic.checkpoint(md)
    return ids, opic


def test_opic_lists_top_pages_by_estimate(repository):
    ids, opic = _checkpoint(repository)
    result = CliRunner().invoke(cli, ["--repo", str(repository), "opic", "--json", "--limit", "2"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert "2 of 4 pages shown" in result.stderr
    estimates = opic.estimates()
    assert [row["url_id"] for row in shown] == sorted(ids, key=lambda i: -estimates[i])[:2]
    assert shown[0]["url"].startswith("http://a.test/")
    assert shown[0]["opic_importance"] == estimates[shown[0]["url_id"]]


def test_opic_unread_lists_discovery_order(repository):
    _, opic = _checkpoint(repository)
    result = CliRunner().invoke(cli, ["--repo", str(repository), "opic", "--unread"])
    assert result.exit_code == 0, result.output
    assert "2 read" in result.output
    lines = result.output.splitlines()[3:]
    assert [int(line.split()[1]) for line in lines] == opic.unread_by_cash(10).tolist()


def test_opic_without_checkpoint_or_repository_says_why(repository, tmp_path):
    result = CliRunner().invoke(cli, ["--repo", str(repository), "opic"])
    assert result.exit_code == 1
    assert "no OPIC checkpoint" in result.output
    result = CliRunner().invoke(cli, ["--repo", str(tmp_path / "nowhere"), "opic"])
    assert result.exit_code == 1
    assert "Error" in result.output and "Traceback" not in result.output


def test_opic_with_a_corrupt_checkpoint_says_so(repository):
    with Metadata.open(repository / "metadata.db") as md:
        md.put_state("opic", b"garbage")
    result = CliRunner().invoke(cli, ["--repo", str(repository), "opic"])
    assert result.exit_code == 1
    assert "not an OPIC snapshot" in result.output
