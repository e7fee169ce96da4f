"""Issue 17: every command exits with 0 when done, 1 on a failure it expected, 2 on usage
or bad input (docs/cli.md), and never shows a traceback.

The commands are found by walking the click group, and :data:`CASES` must name every one:
a new command fails :func:`test_every_command_has_its_cases` until its cases are written.
Each command is run once per code it can give; a code a test cannot reach (a command that
serves until stopped, or fetches from the network) is ``None`` with the reason, and the
generic cases (``--help`` is 0, an unknown option 2) still run for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType
from ranking.opic import OPIC
from tests.daemon_fixtures import make_repository
from xyleme.cli import load_all

cli = load_all()
HOME, DOC = "http://a.test/", "http://a.test/d.xml"


@dataclass(frozen=True)
class Case:
    """Arguments after the command's name that give 0, 1 and 2; ``None`` with ``why`` when
    a code cannot be reached in a test. ``{repo}``, ``{missing}``, ``{new}`` and ``{xml}`` are
    replaced by the test repository, a folder that is not one, a fresh folder and an XML file.
    ``missing`` runs the failing case with ``--repo {missing}``."""

    ok: list[str] | None
    fail: list[str] | None
    bad: list[str] | None
    why: str = ""
    missing: bool = False


SERVES = "serves or runs until it is stopped (its own tests run it in a child process)"
FETCHES = "fetches from the network (its own tests crawl a local site)"
CASES: dict[tuple[str, ...], Case] = {
    ("changes",): Case(["--since", "0"], ["--since", "0"], ["--since", "x"], missing=True),
    ("coordinator",): Case(None, [], ["extra"], SERVES, missing=True),
    ("config", "show"): Case(
        [], None, ["--config", "{missing}/x.toml"], "a configuration is input: 0 or 2"
    ),
    ("crawl",): Case(None, [HOME], ["--concurrency", "0"], FETCHES, missing=True),
    ("dashboard",): Case(None, [], ["--http", "nonsense"], SERVES, missing=True),
    ("demo",): Case(None, None, ["--days", "-1"], "takes minutes (tests/project/test_demo.py)"),
    ("diff",): Case([DOC], ["http://a.test/none.xml"], ["99999999999999999999"]),
    ("doc",): Case([DOC], ["http://a.test/none.xml"], [DOC, "--json"]),
    ("export",): Case(["pages"], ["pages"], ["everything"], missing=True),
    ("hosts",): Case([], ["nowhere.test"], ["--limit", "-1"]),
    ("init",): Case(["{new}"], ["{repo}"], ["{xml}"]),
    ("liverank",): Case([], [], ["--strategy", "x"], missing=True),
    ("migrate",): Case([], [], ["extra"], missing=True),
    ("load",): Case(["http://a.test/e.xml", "{xml}"], None, [DOC, "{missing}/x.xml"], "0 or 2"),
    ("opic",): Case([], [], ["--limit", "-1"], missing=True),
    ("page",): Case(["1"], ["999"], ["99999999999999999999"]),
    ("pause",): Case([], [], ["now"], missing=True),
    ("query",): Case(["//item"], ["//item"], ["//item["], missing=True),
    ("rank", "compute"): Case([], [], ["--damping", "2"], missing=True),
    ("rank", "show"): Case([DOC], ["http://a.test/none.xml"], ["--json", "--json", "x", "y"]),
    ("rank", "top"): Case(["--xml"], ["--xml"], [], missing=True),
    ("recheck",): Case(None, [], ["--strategy", "x"], FETCHES, missing=True),
    ("resume",): Case([], [], ["now"], missing=True),
    ("run",): Case(None, [], ["--http", "nonsense"], SERVES, missing=True),
    ("schedule",): Case([], ["--url", "http://a.test/none.xml"], ["--units", "0"]),
    ("scope", "show"): Case([], None, ["--config", "{missing}/x.toml"], "0 or 2"),
    ("scope", "test"): Case([DOC], ["http://b.test/"], ["mailto:x@a.test"]),
    ("seed", "add"): Case(["http://a.test/more"], None, [], "a refused seed is input (2)"),
    ("seed", "list"): Case([], [], ["--limit", "-1"], missing=True),
    ("seed", "remove"): Case([HOME], ["http://a.test/never-a-seed"], []),
    ("simweb", "serve"): Case(None, None, ["--pages", "-1"], SERVES),
    ("simweb", "truth"): Case(
        ["--hosts", "1", "--pages", "5"], None, ["--pages", "-1"], "a generated web: 0 or 2"
    ),
    ("status",): Case([], [], ["now"], missing=True),
    ("stop",): Case(
        None, [], ["--timeout", "-1"], "needs a running daemon (tests/cli/test_cli_stop.py)", True
    ),
    ("urls",): Case(["--status", "read"], ["--status", "read"], ["--status", "x"], missing=True),
    ("worker",): Case(None, ["--part", "0/1"], ["--part", "3/2"], SERVES, missing=True),
}


def _leaves(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _leaves(command, (*path, name))
        else:
            found.append((*path, name))
    return found


COMMANDS = _leaves(cli)


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A repository with two read pages, a stored XML document, scores, an OPIC checkpoint
    and a seed; a folder that is not a repository; an XML file."""
    folder = tmp_path_factory.mktemp("codes")
    repo = make_repository(folder / "repo", '[crawler]\nscope = ["domain:a.test"]\n')
    xml = folder / "d.xml"
    xml.write_text("<shop><item>pen</item></shop>")
    with Metadata.open(repo / "metadata.db") as md:
        home, doc = md.ids_for([HOME, DOC])
        md.record_fetches(
            [
                FetchResult(home, 100.0, PageType.HTML, status=200, md5="1" * 32, children=[doc]),
                FetchResult(doc, 101.0, PageType.XML, status=200, md5="2" * 32),
            ]
        )
        md.set_scores("importance", np.array([doc]), np.array([0.75]))
        opic = OPIC()
        opic.add_pages([home])
        opic.on_fetch(home, [doc])
        opic.checkpoint(md)
    for args in (["load", DOC, str(xml)], ["seed", "add", HOME]):
        result = CliRunner().invoke(cli, ["--repo", str(repo), *args])
        assert result.exit_code == 0, result.output
    return {"repo": repo, "missing": folder / "missing", "xml": xml, "folder": folder}


def _run(place: dict[str, Path], args: list[str], repo: Path) -> click.testing.Result:
    fresh = place["folder"] / f"new{len(list(place['folder'].iterdir()))}"
    values = {"repo": place["repo"], "missing": place["missing"], "xml": place["xml"]}
    words = [word.format(**values, new=fresh) for word in args]
    return CliRunner().invoke(cli, ["--repo", str(repo), *words], env={"XYLEME_DEBUG": None})


def test_every_command_has_its_cases():
    assert set(COMMANDS) == set(CASES), "write the exit-code cases of the new command here"


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_is_0_and_an_unknown_option_2(place, path):
    assert _run(place, [*path, "--help"], place["repo"]).exit_code == 0
    result = _run(place, [*path, "--no-such-option"], place["repo"])
    assert result.exit_code == 2 and "No such option" in result.output


def _args(case: Case, code: int) -> list[str] | None:
    return {0: case.ok, 1: case.fail, 2: case.bad}[code]


OUTCOMES = [
    (path, code) for path in COMMANDS for code in (0, 1, 2) if _args(CASES[path], code) is not None
]
"""Every (command, exit code) a test can reach; the others are named, with the reason, in
:data:`CASES` (checked by :func:`test_an_outcome_left_out_says_why`)."""


def test_an_outcome_left_out_says_why():
    unexplained = [
        (path, code)
        for path in COMMANDS
        for code in (0, 1, 2)
        if _args(CASES[path], code) is None and not CASES[path].why
    ]
    assert unexplained == []


@pytest.mark.parametrize(
    ("path", "code"), OUTCOMES, ids=[f"{' '.join(p)}-{c}" for p, c in OUTCOMES]
)
def test_each_outcome_has_its_code(place, path, code):
    case = CASES[path]
    args = _args(case, code)
    repo = place["missing"] if code == 1 and case.missing else place["repo"]
    result = _run(place, [*path, *args], repo)
    assert result.exit_code == code, result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), result.exception
    assert "Traceback" not in result.output
    if code:
        assert result.output.strip(), "a failure says why"
