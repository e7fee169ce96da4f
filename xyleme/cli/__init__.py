"""The ``xyleme`` command line: one click group, its commands grouped by topic in submodules.

Every command that reads or writes a repository takes the global ``--repo DIR`` (default:
``$XYLEME_REPO``, else the current directory), reached through :func:`repo_path`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import click

from xyleme import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
@click.pass_context
def cli(ctx: click.Context, repo: Path) -> None:
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


_register_command_modules()
