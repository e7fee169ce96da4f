"""The ``xyleme`` command line: one click group, its commands grouped by topic in submodules.

Every command that reads or writes a repository takes the global ``--repo DIR`` (default:
``$XYLEME_REPO``, else the current directory), reached through :func:`repo_path`.

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


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"]})
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


def _register_command_modules() -> None:
    """Import every module of this package: each defines its commands on :data:`cli`.

    Discovery instead of a list of imports, so a new topic module needs no edit here; a
    module that would silently replace another's command (click overwrites) stops the CLI.
    """
    owners: dict[str, str] = {}
    for module in pkgutil.iter_modules(__path__):
        before = dict(cli.commands)
        importlib.import_module(f"{__name__}.{module.name}")
        for name, command in cli.commands.items():
            if name in before and before[name] is not command:
                raise RuntimeError(
                    f"xyleme.cli.{module.name} redefines the command {name!r} "
                    f"of xyleme.cli.{owners[name]}"
                )
            owners.setdefault(name, module.name)


def __getattr__(name: str) -> Any:
    """``create_repository`` (for the realistic site's crawls), read lazily: its module
    imports this one for :data:`cli`, so a top-level import here would be a circle."""
    if name == "create_repository":
        from xyleme.cli.repository import create_repository

        return create_repository
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GuardedGroup", "UnexpectedError", "cli", "create_repository", "main", "repo_path"]

_register_command_modules()
