"""``xyleme worker``, ``xyleme coordinator`` and ``xyleme run --workers``: every wrong input is
a one-line error with a non-zero exit, never a traceback; an SQLite store is refused (several
workers share a PostgreSQL store)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.daemon_fixtures import make_repository
from xyleme.cli import cli
from xyleme.worker import parse_part


@pytest.fixture
def sqlite_repo(tmp_path):
    return make_repository(tmp_path / "repo")


def invoke(repo, *args):
    return CliRunner().invoke(cli, ["--repo", str(repo), *map(str, args)])


@pytest.mark.parametrize(
    ("part", "says"),
    [
        ("3/2", "the part I must be 0 to N-1 (0 to 1 here)"),
        ("2/2", "the part I must be 0 to N-1"),
        ("0/0", "N, the number of workers, must be at least 1"),
        ("x", "write it I/N"),
        ("1", "write it I/N"),
        ("-1/2", "write it I/N"),
        ("1/2/3", "write it I/N"),
    ],
)
def test_a_wrong_part_is_a_clear_error(sqlite_repo, part, says):
    result = invoke(sqlite_repo, "worker", "--part", part)
    assert result.exit_code == 2
    assert says in result.output and "Traceback" not in result.output
    with pytest.raises(ValueError, match="--part"):
        parse_part(part)


def test_a_right_part_parses():
    assert parse_part(" 0/1 ") == (0, 1)
    assert parse_part("7/8") == (7, 8)


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--workers", "2"),
        ("worker", "--part", "0/2"),
        ("coordinator",),
    ],
)
def test_several_processes_on_an_sqlite_store_are_refused(sqlite_repo, args):
    result = invoke(sqlite_repo, *args)
    assert result.exit_code == 2
    assert "needs a PostgreSQL store" in result.output
    assert "xyleme init --db postgresql://" in result.output
    assert "Traceback" not in result.output


def test_not_a_repository_is_exit_1(tmp_path):
    result = invoke(tmp_path / "nowhere", "worker", "--part", "0/1")
    assert result.exit_code == 1 and "is not a xyleme repository" in result.output


def test_run_workers_with_http_is_refused_with_the_way(sqlite_repo):
    result = invoke(sqlite_repo, "run", "--workers", "2", "--http", "127.0.0.1:0")
    assert result.exit_code == 2 and "xyleme dashboard" in result.output


def test_run_workers_zero_is_a_usage_error(sqlite_repo):
    result = invoke(sqlite_repo, "run", "--workers", "0")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_a_worker_on_an_unreachable_store_says_so(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    url = "postgresql://nobody@127.0.0.1:1/none"
    (repo / "xyleme.toml").write_text(f'[store]\nurl = "{url}"\n')
    result = invoke(repo, "worker", "--part", "0/1")
    assert result.exit_code == 1
    assert "cannot connect" in result.output and "Traceback" not in result.output
