"""``xyleme liverank``: the order printed from a repository, nothing fetched."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType
from xyleme.cli import cli
from xyleme.jobs import load_snapshot

URLS = [f"http://{page}/" for page in ("a.test/1", "a.test/2", "a.test/3", "b.test/1", "b.test/2")]
LINKS = {0: [1, 2, 5], 1: [2], 2: [3], 3: [4]}  # 5 is only discovered, never read
READ_AT, RECHECK_AT = 1_000_000_000.0, 2_000_000_000.0


def run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


@pytest.fixture
def repo(tmp_path):
    directory = tmp_path / "repo"
    assert run("init", directory).exit_code == 0
    with Metadata.open(directory / "metadata.db") as md:
        ids = md.ids_for([*URLS, "http://c.test/never-read"])
        for page, url_id in enumerate(ids[:5]):
            children = [ids[child] for child in LINKS.get(page, [])]
            md.record_fetch(FetchResult(url_id, READ_AT, PageType.HTML, 200, children=children))
    return directory


def recheck(repo, answers):
    """Record re-check answers: url → alive."""
    with Metadata.open(repo / "metadata.db") as md:
        for url, alive in answers.items():
            url_id = md.id_for(url, create=False)
            page_type, status = (PageType.HTML, 200) if alive else (PageType.DEAD, 404)
            md.record_fetch(FetchResult(url_id, RECHECK_AT, page_type, status, reason="gone"))


def printed_urls(output):
    """The URLs of the table's rows (after its header and rule)."""
    return [line.split()[-1] for line in output.strip().splitlines()[2:]]


def test_snapshot_holds_the_read_pages_and_their_links(repo):
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        snapshot = load_snapshot(md)
    assert snapshot.graph.n_pages == 5
    assert snapshot.graph.adjacency.nnz == 5  # the link to the unread page is left out
    assert snapshot.graph.hosts.tolist() == [0, 0, 0, 1, 1]
    assert (snapshot.answers == -1).all()


def test_indegree_order_as_text(repo):
    result = run("--repo", repo, "liverank", "--strategy", "i")
    assert result.exit_code == 0, result.output
    expected = [URLS[2], URLS[1], URLS[3], URLS[4], URLS[0]]
    assert printed_urls(result.stdout) == expected


def test_json_and_csv(repo):
    result = run("--repo", repo, "liverank", "--strategy", "p", "--json")
    order = json.loads(result.stdout)
    assert result.stderr == ""  # complete: no note
    assert [row["rank"] for row in order] == [1, 2, 3, 4, 5]
    result = run("--repo", repo, "liverank", "--strategy", "r", "--csv", "--limit", "2")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 2 and set(rows[0]) == {"rank", "url_id", "answer", "url"}
    assert "2 of 5 ordered pages shown" in result.stderr


def test_sample_based_order_waits_for_the_sample_answers(repo):
    args = ["--repo", repo, "liverank", "--strategy", "pa", "--sample", 2]
    args += ["--sample-kind", "indegree", "--json"]
    result = run(*args)
    assert "2 of 5 pages ordered; the rest depends on answers" in result.stderr
    assert [row["url"] for row in json.loads(result.stdout)] == [URLS[2], URLS[1]]

    recheck(repo, {URLS[2]: True, URLS[1]: False})
    result = run(*args, "--answers-since", "2033-05-18T03:33:20")
    assert "depends on answers" not in result.stderr
    order = json.loads(result.stdout)
    assert [row["answer"] for row in order[:2]] == ["alive", "dead"]
    # the live a.test/3 links to b.test/1, which its live PageRank puts next
    assert order[2]["url"] == URLS[3]


def test_errors_are_messages_not_tracebacks(tmp_path, repo):
    result = run("--repo", tmp_path / "nowhere", "liverank")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert run("init", tmp_path / "empty").exit_code == 0
    result = run("--repo", tmp_path / "empty", "liverank")
    assert result.exit_code != 0 and "nothing to order" in result.output
    result = run("--repo", repo, "liverank", "--answers-since", "yesterday")
    assert result.exit_code != 0 and "ISO date" in result.output
    result = run("--repo", repo, "liverank", "--limit", "-1")
    assert result.exit_code == 2
