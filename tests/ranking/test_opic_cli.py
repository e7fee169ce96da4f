"""``xyleme opic``: top pages and discovery order from the last OPIC checkpoint."""

import json

import pytest
from click.testing import CliRunner

from metadata import Metadata
from ranking.opic import OPIC, OPICSettings
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


def test_opic_parts_lists_each_parts_cash_and_the_total(repository):
    """Crawl workers keep OPIC by part (§4.1): --parts shows each part's books, the cash in
    flight between them and the total, conserved."""
    from xyleme.jobs import PartOPIC

    with Metadata.open(repository / "metadata.db") as md:
        ids = md.ids_for([f"http://h{n}.test/p" for n in range(8)])
        parts = [PartOPIC.restore(md, part, 2, OPICSettings(window="full")) for part in (0, 1)]
        for part in parts:
            own = [url_id for url_id in ids if part.opic.owns([url_id])[0]]
            part.on_fetch(own[0], [url_id for url_id in ids if url_id != own[0]])
        parts[0].flush(md)  # part 0's transfers to part 1 are in flight until part 1 flushes
    runner = CliRunner()
    shown = runner.invoke(cli, ["--repo", str(repository), "opic", "--parts", "--json"])
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)
    assert [(row["part"], row["parts"], row["flushes"]) for row in rows] == [(0, 2, 1), (1, 2, 0)]
    text = runner.invoke(cli, ["--repo", str(repository), "opic", "--parts"])
    assert text.exit_code == 0, text.output
    total = text.output.splitlines()[-1]
    assert "in flight" in total and "= total 1.000000000000" in total, total
    result = runner.invoke(cli, ["--repo", str(repository), "opic"])
    assert result.exit_code == 1 and "xyleme opic --parts" in result.output


def test_opic_parts_without_workers_says_why(repository):
    result = CliRunner().invoke(cli, ["--repo", str(repository), "opic", "--parts"])
    assert result.exit_code == 1
    assert "no OPIC parts" in result.output and "Traceback" not in result.output
