"""The ``xyleme`` command line: one click group, its commands grouped by topic in submodules.

Every command that reads or writes a repository takes the global ``--repo DIR`` (default:
``$XYLEME_REPO``, else the current directory), reached through :func:`repo_path`.

The group is lazy (:class:`LazyGroup`): :data:`COMMANDS` names the module that defines each
command and the summary ``xyleme --help`` prints, so listing the commands imports no topic
module and running one imports only its own. Every command starts fast (``xyleme --help``
loads neither numpy nor the daemon); a test keeps :data:`COMMANDS` equal to what the modules
define.

No input gives a traceback: a bad argument, file or configuration is a one-line error with
exit status 2 (:class:`xyleme.cli.errors.InputError`, click's usage errors); a failure the
command expects (no such page, a locked repository) exits with 1. Anything else is a bug:
:class:`GuardedGroup` still reports it in one line (exit 1) unless ``--debug`` or
``XYLEME_DEBUG=1`` asks for the traceback.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import click

from xyleme import __version__

DEBUG_HINT = "set XYLEME_DEBUG=1 or pass --debug for the traceback"

COMMANDS: dict[str, tuple[str, str]] = {
    "changes": ("loader", "List the document versions stored since a time"),
    "config": ("ops", "Inspect the repository's configuration (xyleme.toml)."),
    "coordinator": ("workers", "Run the coordinator of a shared store until SIGTERM"),
    "crawl": ("crawl", "Crawl from SEEDS (scouting, level 3) within the scope"),
    "dashboard": ("dashboard", "Serve the web dashboard and JSON API of the repository"),
    "demo": ("demo", "Crawl, load, rank and refresh a simulated web"),
    "diff": ("loader", "Show what changed between two stored versions"),
    "doc": ("loader", "Print a stored XML document (URL or URL-Id), or list its versions."),
    "export": ("ops", "Export the repository"),
    "hosts": ("hosts", "Per host: pages read, bytes, status codes"),
    "init": ("repository", "Create a repository in DIRECTORY"),
    "liverank": ("liverank", "Print the LiveRank order of the repository's pages"),
    "migrate": ("repository", "Bring the repository's metadata store to this xyleme's schema"),
    "load": ("loader", "Load a local FILE into the warehouse"),
    "opic": ("opic", "Show OPIC's top pages by estimated importance"),
    "page": ("repository", "Show the full metadata record of URL (or of a URL-Id)"),
    "pause": ("ops", "Stop fetching (the daemon keeps running and answering)"),
    "query": ("loader", "Evaluate an XPath 1.0 expression"),
    "rank": ("rank", "Importance of XML pages, interest of HTML pages, OPIC estimates"),
    "recheck": ("recheck", "Re-check the repository's pages, live ones first (LiveRank)"),
    "resume": ("ops", "Fetch again after `xyleme pause`."),
    "run": ("daemon", "Run the daemon that keeps the repository fresh"),
    "schedule": ("schedule", "Show the refresh schedule"),
    "scope": ("scope", "The crawl scope"),
    "seed": ("ops", "Manage the seed URLs the crawl starts from."),
    "simweb": ("simweb", "The simulated web"),
    "status": ("status", "Counts by page type, the daemon's rates and queues"),
    "stop": ("stop", "Stop the daemon running on the repository, as SIGTERM would"),
    "urls": ("urls", "List URLs by what became of them"),
    "worker": ("workers", "Run one crawl worker of a shared store until SIGTERM"),
}
"""Each command: the module of this package that defines it, and its summary (the start of
its help) for ``xyleme --help``."""


class UnexpectedError(click.ClickException):
    """An error no command expected, reported in one line (exit status 1)."""

    def __init__(self, error: BaseException) -> None:
        text = " ".join(str(error).split())[:200]
        super().__init__(f"unexpected {type(error).__name__}: {text} ({DEBUG_HINT})")


class GuardedGroup(click.Group):
    """A group that turns any exception a command did not expect into a one-line error."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as error:
            if ctx.params.get("debug"):
                raise
            raise UnexpectedError(error) from error


class LazyGroup(GuardedGroup):
    """A group whose commands are imported when one is run, not when they are listed.

    A command missing from :data:`COMMANDS` (a module added without an entry) is still found,
    by importing every module, so it works, only slower; the test of the table fails then.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in COMMANDS:
                importlib.import_module(f"{__name__}.{COMMANDS[cmd_name][0]}")
            else:
                load_all()
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS`' summaries: no module is imported."""
        rows = [
            (name, COMMANDS[name][1] if name in COMMANDS else self.commands[name].short_help)
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl([(name, summary or "") for name, summary in rows])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="xyleme")
@click.option(
    "--repo",
    "repo",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="XYLEME_REPO",
    default=".",
    show_default="$XYLEME_REPO, else the current directory",
    help="The repository folder to read or write.",
)
@click.option(
    "--debug",
    is_flag=True,
    envvar="XYLEME_DEBUG",
    help="Show the traceback of an unexpected error (also XYLEME_DEBUG=1).",
)
@click.pass_context
def cli(ctx: click.Context, repo: Path, debug: bool) -> None:
    """xyleme: build and keep fresh a warehouse of the XML data of the web."""
    ctx.obj = {"repo": repo}


def repo_path(ctx: click.Context) -> Path:
    """The repository folder the global ``--repo`` option names."""
    return ctx.find_root().obj["repo"]


def main() -> None:
    """Entry point of the ``xyleme`` console script."""
    cli()


def load_all() -> click.Group:
    """Import every module of this package, so :data:`cli` holds every command (tests and
    documentation walk it); a module that would replace another's command stops the CLI."""
    owners = {name: module for name, (module, _) in COMMANDS.items() if name in cli.commands}
    for module in pkgutil.iter_modules(__path__):
        before = dict(cli.commands)
        importlib.import_module(f"{__name__}.{module.name}")
        for name, command in cli.commands.items():
            if name in before and before[name] is not command:
                raise RuntimeError(
                    f"xyleme.cli.{module.name} redefines the command {name!r} "
                    f"of xyleme.cli.{owners.get(name, '?')}"
                )
            owners.setdefault(name, module.name)
    return cli


def __getattr__(name: str) -> Any:
    """``create_repository`` (for the realistic site's crawls), read lazily: its module
    imports this one for :data:`cli`, so a top-level import here would be a circle."""
    if name == "create_repository":
        from xyleme.cli.repository import create_repository

        return create_repository
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GuardedGroup", "UnexpectedError", "cli", "create_repository", "main", "repo_path"]
