"""A repository whose metadata lives in PostgreSQL, end to end: ``xyleme crawl`` records a
simulated web into it, and the reading commands (status, urls, hosts, page, rank,
schedule, doc) answer from it as from SQLite."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from metadata import Metadata, PageType
from xyleme.cli import cli
from xyleme.simweb import SimWebProcess, SimWebSettings


@pytest.fixture(scope="module")
def simweb():
    settings = SimWebSettings(hosts=2, pages=80, seed=5).without_faults()
    with SimWebProcess(settings, frozen=True) as server:
        yield server


def run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def test_a_crawl_into_postgresql_and_the_commands_that_read_it(simweb, tmp_path, postgres_url):
    repo = tmp_path / "repo"
    assert run("init", repo, "--db", postgres_url).exit_code == 0
    crawled = run(
        *("--repo", repo, "crawl", *simweb.seed_urls, "--domain", "simweb.test"),
        *("--delay", "0", "--per-host", "4", "--simweb-port", simweb.port),
        *("--max-pages", "40", "--json"),
    )
    assert crawled.exit_code == 0, crawled.output
    stats = json.loads(crawled.output.strip().splitlines()[-1])
    assert stats["pages"] >= 40
    assert not (repo / "metadata.db").exists()
    assert (repo / ".crawler-seen.u64").exists() or (repo / "crawler-seen.u64").exists()
    with Metadata.open(postgres_url, readonly=True) as md:
        counts = md.count_by_type()
        assert counts[PageType.HTML] + counts[PageType.XML] >= 40
        assert md.page_by_url(simweb.seed_urls[0]).page_type is PageType.HTML
        assert sum(len(src) for src, _ in md.export_links()) > 0
    for command in (
        ("status",),
        ("urls", "--status", "read"),
        ("hosts",),
        ("page", simweb.seed_urls[0]),
        ("rank", "compute"),
        ("rank", "top", "--html"),
        ("schedule",),
    ):
        result = run("--repo", repo, *command)
        assert result.exit_code == 0, f"{command}: {result.output}"
        assert "Traceback" not in result.output
