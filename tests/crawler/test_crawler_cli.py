"""``xyleme crawl`` against a simulated web served by another process."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from metadata import Metadata, PageType
from xyleme.cli import cli
from xyleme.simweb import SimWebProcess, SimWebSettings


@pytest.fixture(scope="module")
def simweb():
    settings = SimWebSettings(hosts=2, pages=120, seed=2).without_faults()
    with SimWebProcess(settings, frozen=True) as server:
        yield server


def test_crawl_records_pages_and_prints_json_stats(simweb, tmp_path):
    runner = CliRunner()
    assert runner.invoke(cli, ["--repo", str(tmp_path), "init"]).exit_code == 0
    arguments = ["--repo", str(tmp_path), "crawl", *simweb.seed_urls]
    arguments += ["--domain", "simweb.test", "--delay", "0", "--per-host", "4"]
    arguments += ["--simweb-port", str(simweb.port), "--max-pages", "30", "--json"]
    result = runner.invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output.strip().splitlines()[-1])
    assert 30 <= stats["pages"] < 120  # stopped early, in-flight fetches still committed
    with Metadata.open(tmp_path / "metadata.db", readonly=True) as md:
        counts = md.count_by_type()
        assert (
            counts[PageType.HTML] + counts[PageType.XML] + counts[PageType.ERROR]
            == (stats["pages"])
        )
        assert md.page_by_url(simweb.seed_urls[0]).page_type is PageType.HTML


def test_crawl_prints_a_table_and_refuses_out_of_scope_seeds(simweb, tmp_path):
    runner = CliRunner()
    runner.invoke(cli, ["--repo", str(tmp_path), "init"])
    arguments = ["--repo", str(tmp_path), "crawl", simweb.seed_urls[0], "http://elsewhere.example/"]
    arguments += ["--domain", "simweb.test", "--delay", "0", "--max-depth", "0"]
    arguments += ["--simweb-port", str(simweb.port)]
    result = runner.invoke(cli, arguments)
    assert result.exit_code == 2, result.output  # refused before any fetch: nothing crawled
    assert "seed refused: http://elsewhere.example/: out of scope" in result.output
    with Metadata.open(tmp_path / "metadata.db", readonly=True) as md:
        assert md.count_by_type()[PageType.HTML] == 0
    result = runner.invoke(cli, [*arguments[:4], *arguments[5:]])  # the in-scope seed alone
    assert result.exit_code == 0, result.output
    assert "by type" in result.output and "HTML: 1" in result.output


def test_crawl_without_a_repository_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(cli, ["--repo", str(tmp_path), "crawl", "http://a.example/"])
    assert result.exit_code != 0
    assert "xyleme init" in result.output
