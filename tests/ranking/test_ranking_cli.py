"""``xyleme rank compute|top|show`` on a small repository, checked against dense solves."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType
from tests.paths import ROOT
from tests.ranking_graphs import dense_inverse, dense_pagerank
from xyleme.cli import cli

BASE = "http://site.test/"
# page name -> (type, children)
PAGES = {
    "h1.html": (PageType.HTML, ["x1.xml", "h2.html"]),
    "h2.html": (PageType.HTML, ["h3.html", "new.html"]),
    "h3.html": (PageType.HTML, []),
    "x1.xml": (PageType.XML, ["x2.xml"]),
    "x2.xml": (PageType.XML, ["x1.xml", "h1.html"]),
    "x3.xml": (PageType.XML, []),
}


def run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def make_repo(directory, pages=PAGES):
    assert run("init", directory).exit_code == 0
    with Metadata.open(directory / "metadata.db") as md:
        names = [*pages, "new.html"]
        ids = dict(zip(names, md.ids_for([BASE + name for name in names]), strict=True))
        for name, (page_type, children) in pages.items():
            md.record_fetch(
                FetchResult(
                    ids[name],
                    1_700_000_000.0,
                    page_type,
                    200,
                    md5="0" * 32,
                    children=[ids[child] for child in children],
                )
            )
    return ids


@pytest.fixture
def repo(tmp_path):
    directory = tmp_path / "repo"
    ids = make_repo(directory)
    return directory, ids


def expected(ids):
    """Dense importance and interest over the pages in ascending id order."""
    order = sorted(ids.values())
    position = {url_id: k for k, url_id in enumerate(order)}
    name_of = {url_id: name for name, url_id in ids.items()}
    src, dst = [], []
    for name, (_, children) in PAGES.items():
        for child in children:
            src.append(position[ids[name]])
            dst.append(position[ids[child]])
    src, dst = np.array(src), np.array(dst)
    n = len(order)
    is_xml = np.array([name_of[url_id].endswith(".xml") for url_id in order])
    importance = dense_pagerank(src, dst, n)
    interest, _ = dense_inverse(src, dst, n, is_xml / is_xml.sum())
    return order, importance, interest


def test_compute_stores_importance_and_interest_of_every_page(repo):
    directory, ids = repo
    result = run("--repo", directory, "rank", "compute", "--tol", "1e-12")
    assert result.exit_code == 0, result.output
    assert "ranked 7 pages (3 XML) over 7 links" in result.output
    order, importance, interest = expected(ids)
    with Metadata.open(directory / "metadata.db", readonly=True) as md:
        got_ids, got_importance = md.scores("importance")
        _, got_interest = md.scores("interest")
    assert got_ids.tolist() == order
    assert np.abs(got_importance - importance).sum() < 1e-11
    assert np.abs(got_interest - interest).sum() < 1e-9
    made = json.loads((directory / "ranking" / "importance.json").read_text())
    assert made["damping"] == 0.85 and made["converged"] and made["pages"] == 7


def test_top_xml_lists_xml_pages_by_importance(repo):
    directory, ids = repo
    assert run("--repo", directory, "rank", "compute").exit_code == 0
    result = run("--repo", directory, "rank", "top", "--xml", "--limit", "2", "--json")
    rows = json.loads(result.stdout)
    assert "2 of 3 XML pages with an importance shown" in result.stderr
    order, importance, _ = expected(ids)
    xml = [u for u in order if u in {ids["x1.xml"], ids["x2.xml"], ids["x3.xml"]}]
    best = sorted(xml, key=lambda u: -importance[order.index(u)])[:2]
    assert [row["url_id"] for row in rows] == best
    assert [row["rank"] for row in rows] == [1, 2]
    name_of = {url_id: name for name, url_id in ids.items()}
    assert rows[0]["url"] == BASE + name_of[best[0]]


def test_top_html_as_csv(repo):
    directory, _ = repo
    run("--repo", directory, "rank", "compute")
    result = run("--repo", directory, "rank", "top", "--html", "--csv")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [row["url"] for row in rows][:1] == [BASE + "h1.html"]
    assert {row["url"] for row in rows} == {BASE + n for n in ("h1.html", "h2.html", "h3.html")}
    interests = [float(row["interest"]) for row in rows]
    assert interests == sorted(interests, reverse=True)


def test_top_table_is_the_default(repo):
    directory, _ = repo
    run("--repo", directory, "rank", "compute")
    result = run("--repo", directory, "rank", "top", "--xml")
    assert result.exit_code == 0 and "x1.xml" in result.output and "importance" in result.output


def test_top_takes_the_old_n_with_a_note(repo):
    directory, _ = repo
    run("--repo", directory, "rank", "compute")
    result = run("--repo", directory, "rank", "top", "--xml", "-n", "1", "--json")
    assert len(json.loads(result.stdout)) == 1 and "-n is deprecated" in result.stderr
    assert (
        run("--repo", directory, "rank", "top", "--xml", "-n", "1", "--limit", "2").exit_code == 2
    )


def test_top_opic_lists_the_estimates_opic_stored(repo):
    directory, ids = repo
    with Metadata.open(directory / "metadata.db") as md:
        # what OPIC.checkpoint writes: the estimate in opic_importance, the cash in opic_cash
        md.set_scores("opic_importance", [ids["h1.html"], ids["x1.xml"]], [0.25, 0.75])
        md.set_scores("opic_cash", [ids["h1.html"], ids["h3.html"]], [2.5, 0.5])
    rows = json.loads(run("--repo", directory, "rank", "top", "--opic", "--json").output)
    assert [(r["url_id"], r["opic_importance"]) for r in rows] == [
        (ids["x1.xml"], 0.75),
        (ids["h1.html"], 0.25),
    ]
    shown = run("--repo", directory, "rank", "show", BASE + "h1.html", "--json").output
    assert json.loads(shown)["opic_rank"] == 2


def test_show_gives_scores_ranks_and_provenance(repo):
    directory, ids = repo
    run("--repo", directory, "rank", "compute")
    result = run("--repo", directory, "rank", "show", BASE + "x2.xml", "--json")
    record = json.loads(result.output)
    assert record["url_id"] == ids["x2.xml"] and record["type"] == "XML"
    assert record["xml_rank"] == 1 and record["html_rank"] is None
    assert record["computed"]["importance"]["sweeps"] > 0
    text = run("--repo", directory, "rank", "show", str(ids["h3.html"])).output
    assert "importance computed" in text and "interest" in text


def test_without_xml_pages_only_importance_is_computed(tmp_path):
    make_repo(tmp_path / "r", {"a.html": (PageType.HTML, ["new.html"])})
    result = run("--repo", tmp_path / "r", "rank", "compute")
    assert result.exit_code == 0, result.output
    assert "interest: not computed (no XML page yet)" in result.output


def test_pages_without_links_get_the_teleport_values(tmp_path):
    pages = {"a.html": (PageType.HTML, []), "x.xml": (PageType.XML, [])}
    xml = make_repo(tmp_path / "r", pages)["x.xml"]
    result = run("--repo", tmp_path / "r", "rank", "compute")
    assert result.exit_code == 0, result.output
    with Metadata.open(tmp_path / "r" / "metadata.db", readonly=True) as md:
        ids, importance = md.scores("importance")
        _, interest = md.scores("interest")
    # a.html, x.xml and the unread new.html: E uniform, E' on the XML page alone
    assert importance == pytest.approx(np.full(3, 1 / 3))
    assert interest == pytest.approx((ids == xml).astype(float))


def test_a_repository_without_pages_is_told_so(tmp_path):
    assert run("init", tmp_path / "r").exit_code == 0
    result = run("--repo", tmp_path / "r", "rank", "compute")
    assert result.exit_code == 1 and "no page yet" in result.output
    assert isinstance(result.exception, SystemExit)


def test_a_run_that_does_not_converge_writes_nothing(repo):
    directory, _ = repo
    result = run("--repo", directory, "rank", "compute", "--max-sweeps", "1")
    assert result.exit_code == 1
    assert "did not converge" in result.output and "no score was written" in result.output
    with Metadata.open(directory / "metadata.db", readonly=True) as md:
        assert md.scores("importance")[0].size == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rank", "top"], "--xml, --html or --opic"),
        (["rank", "compute", "--memory", "lots"], "not a memory size"),
        (["rank", "show", "http://site.test/none.html"], "Error"),
    ],
)
def test_user_errors_get_a_sentence(repo, args, message):
    directory, _ = repo
    result = run("--repo", directory, *args)
    assert result.exit_code != 0 and message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_outside_a_repository_the_commands_say_so(tmp_path):
    result = run("--repo", tmp_path, "rank", "compute")
    assert result.exit_code == 1 and "Error" in result.output
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["compute", "top", "show"])
def test_every_rank_command_has_help(command):
    result = run("rank", command, "--help")
    assert result.exit_code == 0 and len(result.output.splitlines()) > 3


def test_the_module_entry_point_ranks(repo):
    directory, _ = repo
    out = subprocess.run(
        [sys.executable, "-m", "xyleme", "--repo", str(directory), "rank", "compute"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "importance:" in out.stdout and "snapshot" in out.stdout


@pytest.mark.parametrize("command", ["compute", "top", "show"])
def test_every_rank_command_is_documented(command):
    docs = (ROOT / "docs" / "ranking.md").read_text()
    assert f"## `xyleme rank {command}" in docs


def test_ctrl_c_cancels_and_writes_nothing(repo, monkeypatch):
    directory, _ = repo

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("xyleme.cli.rank.rank_repository", interrupted)
    result = run("--repo", directory, "rank", "compute")
    assert result.exit_code == 130 and "cancelled: no score was written" in result.output
    with Metadata.open(directory / "metadata.db", readonly=True) as md:
        assert md.scores("importance")[0].size == 0
