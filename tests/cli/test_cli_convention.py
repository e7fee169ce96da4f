"""Issue 17: one CLI convention (docs/cli.md), checked on every command of the group.

A command that lists rows takes ``--limit`` (its default shown), ``--json``, ``--csv`` and
``--wide``, all four; no command shows ``--top`` or ``-n`` any more (they remain as hidden,
deprecated spellings); and every listing's ``--json`` is one array of objects and its
``--csv`` a header row, on the repository of the exit-code tests.
"""

from __future__ import annotations

import csv
import io
import json

import click
import pytest

from tests.cli.test_cli_exit_codes import CASES, COMMANDS, _run, place  # noqa: F401 (fixture)
from xyleme.cli import cli, load_all

LISTING_FLAGS = {"--limit", "--json", "--csv", "--wide"}
LISTING_MODE = {("doc",): ["--versions"]}
"""Commands that list rows only in one of their modes (``doc`` prints a document otherwise)."""


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = load_all()
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


def _visible_flags(command: click.Command) -> set[str]:
    return {
        flag
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for flag in (*param.opts, *param.secondary_opts)
    }


LISTINGS = [
    path for path in COMMANDS if _visible_flags(_command(path)) & {"--limit", "--csv", "--wide"}
]
"""The commands that list rows (``--json`` alone is also the flag of the commands that
answer one object: ``status``, ``page``, ``rank show``…)."""


def test_the_group_has_listings_to_check():
    assert cli is not None and len(LISTINGS) >= 10, LISTINGS


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_no_command_shows_the_old_limit_spellings(path):
    assert not _visible_flags(_command(path)) & {"--top", "-n"}


@pytest.mark.parametrize("path", LISTINGS, ids=" ".join)
def test_a_listing_takes_all_four_flags_with_its_default_shown(path):
    command = _command(path)
    assert _visible_flags(command) >= LISTING_FLAGS
    limit = next(p for p in command.params if "--limit" in getattr(p, "opts", ()))
    assert limit.show_default


@pytest.mark.parametrize("path", LISTINGS, ids=" ".join)
def test_a_listing_prints_an_array_of_objects_and_a_csv_header(place, path):  # noqa: F811
    args = CASES[path].ok
    if args is not None:
        args = [*args, *LISTING_MODE.get(path, [])]
    if args is None:  # the exit-code table says why this one cannot run in a test
        assert CASES[path].why
        return
    result = _run(place, [*path, *args, "--json"], place["repo"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and all(isinstance(row, dict) for row in rows)
    result = _run(place, [*path, *args, "--csv"], place["repo"])
    assert result.exit_code == 0, result.output
    header = next(csv.reader(io.StringIO(result.stdout)), None)
    assert header and all(name.strip() for name in header), result.stdout
