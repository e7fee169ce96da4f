"""``xyleme init`` and ``xyleme page``."""

import json
import subprocess
import sys
import tomllib

import pytest
from click.testing import CliRunner

from metadata import FetchResult, LoadStatus, Metadata, PageType
from tests.paths import ROOT
from xyleme.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


@pytest.fixture
def repo(tmp_path):
    directory = tmp_path / "repo"
    assert run("init", directory).exit_code == 0
    with Metadata.open(directory / "metadata.db") as md:
        doc, dtd = md.ids_for(["http://example.com/doc.xml", "http://example.com/doc.dtd"])
        md.record_fetch(
            FetchResult(doc, 1_700_000_000.0, PageType.XML, 200, md5="a" * 32, children=[dtd])
        )
        md.record_fetch(
            FetchResult(doc, 1_700_086_400.0, PageType.XML, 304, last_modified=1_699_000_000.0)
        )
        md.set_status(doc, LoadStatus.WAITING_DTD, "needs the DTD", waiting_for=[dtd])
    return directory


def test_init_creates_the_repository_layout(tmp_path):
    directory = tmp_path / "new" / "repo"
    result = run("init", directory)
    assert result.exit_code == 0, result.output
    assert (directory / "documents").is_dir() and (directory / "ranking").is_dir()
    config = (directory / "xyleme.toml").read_text()
    assert config.startswith("# xyleme repository configuration")
    assert "# observation_limit = 64" in config
    parsed = tomllib.loads(config)
    assert "metadata" in parsed and not any(parsed.values())  # every default commented out
    with Metadata.open(directory / "metadata.db") as md:
        assert md.max_url_id() == 0


def test_init_uses_the_global_repo_option(tmp_path):
    assert run("--repo", tmp_path / "r", "init").exit_code == 0
    assert (tmp_path / "r" / "metadata.db").is_file()


def test_init_refuses_an_existing_repository(repo):
    before = (repo / "metadata.db").read_bytes()
    result = run("init", repo)
    assert result.exit_code != 0
    assert "already holds a xyleme repository" in result.output
    assert (repo / "metadata.db").read_bytes() == before


def test_page_prints_the_full_record_with_history(repo):
    result = run("--repo", repo, "page", "HTTP://EXAMPLE.COM/doc.xml#top")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "http://example.com/doc.xml" in out
    assert "XML" in out and "a" * 32 in out
    assert "WAITING_DTD" in out
    assert "observations (2, oldest first)" in out
    assert "2023-11-14 22:13:20Z  first" in out
    assert "2023-11-15 22:13:20Z  no       2023-11-03 08:26:40Z" in out


def test_page_json(repo):
    result = run("--repo", repo, "page", "http://example.com/doc.xml", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["url_id"] == 1 and record["page_type"] == "XML"
    assert record["status"] == 304 and record["md5"] == "a" * 32
    assert record["refreshes"] == 1 and record["unchanged_accesses"] == 1
    assert record["children"] == 1 and record["waiting_for"] == [2]
    assert record["observations"] == [
        {"at": 1_700_000_000.0, "changed": None, "last_modified": None},
        {"at": 1_700_086_400.0, "changed": False, "last_modified": 1_699_000_000.0},
    ]


def test_page_shows_robots_directives_and_canonical(repo):
    with Metadata.open(repo / "metadata.db") as md:
        page, original = md.ids_for(["http://example.com/copy.html", "http://example.com/"])
        fetch = FetchResult(page, 1_700_000_000.0, PageType.HTML, 200, md5="b" * 32)
        fetch.robots, fetch.canonical_to = "noarchive,noindex", original
        md.record_fetch(fetch)
    text = run("--repo", repo, "page", "http://example.com/copy.html").output
    shown = dict(line.split(None, 1) for line in text.splitlines()[:40] if "  " in line)
    assert shown["robots"].strip() == "noarchive,noindex"
    assert shown["canonical_to"].strip() == str(original)
    assert shown["canonical_url"].strip() == "http://example.com/"
    record = json.loads(run("--repo", repo, "page", str(page), "--json").output)
    assert record["robots"] == "noarchive,noindex" and record["canonical_to"] == original
    assert record["canonical_url"] == "http://example.com/"
    plain = json.loads(run("--repo", repo, "page", "1", "--json").output)
    assert (plain["robots"], plain["canonical_to"], plain["canonical_url"]) == (None, None, None)


def test_page_by_url_id(repo):
    result = run("--repo", repo, "page", "2", "--json")
    assert json.loads(result.output)["url"] == "http://example.com/doc.dtd"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://example.com/unknown", "no page 'http://example.com/unknown'"),
        ("mailto:x@example.com", "is not a valid URL: scheme 'mailto'"),
        ("99", "no page 99"),
    ],
)
def test_page_errors_are_one_clear_line(repo, url, message):
    result = run("--repo", repo, "page", url)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_page_outside_a_repository(tmp_path):
    result = run("--repo", tmp_path, "page", "http://example.com/")
    assert result.exit_code == 1
    assert "metadata.db: no such database file" in result.output


def test_corrupt_database_is_one_line_naming_the_file_without_traceback(tmp_path):
    (tmp_path / "metadata.db").write_bytes(b"not sqlite " * 200)
    completed = subprocess.run(
        [sys.executable, "-m", "xyleme", "--repo", str(tmp_path), "page", "http://a.org/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode != 0
    assert "Traceback" not in completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path / "metadata.db") in lines[0]


def test_commands_have_help():
    for command in ("init", "page"):
        result = run(command, "--help")
        assert result.exit_code == 0 and len(result.output.splitlines()) > 3
