"""Issue 18, fault 5: no input on the command line or in a file gives a traceback.

Hypothesis feeds every command (found by walking the click group, so a new command is
fuzzed without an edit here) random arguments: its own options and choices, numbers that
overflow or are not finite, odd text, missing, binary and nested files. Each run must end in
exit status 0, 1 or 2 with no traceback. ``XYLEME_DEBUG=1`` turns the CLI's last-resort
guard off, so an error it would have caught fails the test: the real cause must be fixed.
Commands that would serve, crawl or run the daemon stop where their event loop would start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xyleme.cli.simweb
from tests.daemon_fixtures import make_repository
from xyleme.cli import load_all


class Started(Exception):
    """The command accepted its arguments and was about to start its event loop."""


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def _command(path: tuple[str, ...]) -> click.Command:
    command = cli
    for name in path:
        command = command.commands[name]
    return command


cli = load_all()  # the lazy group imports every command module for the walk
COMMANDS = _commands(cli)

NUMBERS = ["99999999999999999999", "-1", "0", "1e400", "nan", "-inf", "2.5", "٣", "²", "1_0"]
TEXTS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A repository, and files no command should choke on."""
    folder = tmp_path_factory.mktemp("fuzz")
    repository = make_repository(folder / "repo")
    binary = folder / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage\x00")
    nested = folder / "nested.toml"
    nested.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    ranges = folder / "ranges.toml"
    ranges.write_text("[crawler]\nconcurrency = 100000000\nmin_delay = nan\n")
    json_file = folder / "web.json"
    json_file.write_text('{"hosts": 1e400, "pages": "many"}')
    return {
        "repo": repository,
        "binary": binary,
        "nested": nested,
        "ranges": ranges,
        "json": json_file,
        "missing": folder / "missing.toml",
        "folder": folder,
    }


def _arguments(command: click.Command, files: dict[str, Path]) -> st.SearchStrategy:
    """A value for each of ``command``'s arguments, then some of its options with a value."""
    options = [name for param in command.params for name in param.opts if name.startswith("-")]
    arguments = sum(1 for param in command.params if isinstance(param, click.Argument))
    choices = [
        choice
        for param in command.params
        if isinstance(param.type, click.Choice)
        for choice in param.type.choices
    ]
    paths = [str(path) for name, path in files.items() if name != "repo"]
    value = st.one_of(
        st.sampled_from(NUMBERS),
        st.sampled_from(paths),
        st.sampled_from([*choices, "http://a.test/", "-", "", "--"]),
        TEXTS,
    )
    option = st.tuples(st.sampled_from(options or ["--help"]), value)
    return st.tuples(
        st.lists(value, min_size=arguments, max_size=arguments + 1),
        st.lists(option, max_size=3),
    ).map(lambda drawn: [*drawn[0], *(token for pair in drawn[1] for token in pair)])


@pytest.fixture
def no_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``asyncio.run`` raises :class:`Started`: nothing serves, crawls or reaches a network;
    nor is a simulated web built (seconds each), once its settings are accepted."""

    def refuse(coroutine, **_: object) -> None:
        coroutine.close()
        raise Started

    def no_web(*_: object, **__: object) -> None:
        raise Started

    monkeypatch.setattr(asyncio, "run", refuse)
    monkeypatch.setattr(xyleme.cli.simweb, "SimWeb", no_web)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_random_arguments_never_give_a_traceback(path, files, no_event_loop, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what `init NAME` or `--output NAME` makes stays in there
    command = _command(path)

    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(arguments=_arguments(command, files))
    def check(arguments: list[str]) -> None:
        argv = ["--repo", str(files["repo"]), *path, *arguments]
        result = CliRunner().invoke(cli, argv, env={"XYLEME_DEBUG": "1"}, catch_exceptions=True)
        if isinstance(result.exception, Started):
            return
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            argv,
            result.exc_info,
        )
        assert result.exit_code in (0, 1, 2), (argv, result.output)
        assert "Traceback" not in result.output, (argv, result.output)

    check()
