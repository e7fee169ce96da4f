"""The operator's commands: ``config show``, ``seed add|list|remove``, ``pause``/``resume``,
``export`` (``status`` is in :mod:`xyleme.cli.status`).

Readers open the repository read-only and work while the daemon runs. Commands that change
state run directly when no daemon holds the repository, and are otherwise handed to it
through the command table (:mod:`xyleme.commands`), whose answer they print.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from xyleme import commands, export
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import InputError
from xyleme.cli.export_archive import ARCHIVE_KINDS, archive_export
from xyleme.cli.listing import Column, emit, listing_options, shown_limit, when
from xyleme.cli.params import MOMENT
from xyleme.cli.reading import has_metadata, json_option, open_metadata
from xyleme.config import CONFIG_FILE, Config, ConfigError, as_dict, as_toml, load_config
from xyleme.lock import DaemonLock, RepositoryLocked
from xyleme.scope_config import repository_scope, seed_refusals

if TYPE_CHECKING:
    from xyleme.crawler import Scope

ANSWER_TIMEOUT = 30.0


def effective_config(repository: Path, config_file: Path | None) -> Config:
    """The configuration a daemon on ``repository`` would use (``--config`` wins)."""
    try:
        if config_file is not None:
            return load_config(config_file, required=True)
        return load_config(repository / CONFIG_FILE)
    except ConfigError as error:
        raise InputError(str(error)) from None


def config_option(function: Any) -> Any:
    """``--config FILE``: another configuration than the repository's xyleme.toml."""
    return click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Read this configuration instead of the repository's xyleme.toml.",
    )(function)


@contextmanager
def holding(repository: Path) -> Iterator[bool]:
    """Hold the repository while a command runs directly; yields False, holding nothing, when
    a daemon holds it (the command is handed over then). Not a repository: a CLI error."""
    if not has_metadata(repository):
        with open_metadata(repository, readonly=True):
            pass  # raises the repository's own "not a repository" message
    lock = DaemonLock(repository)
    try:
        lock.acquire()
    except RepositoryLocked:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def run_state_command(repository: Path, name: str, args: dict[str, Any]) -> commands.Answer:
    """Run a state-changing command directly, or through the daemon holding the repository."""
    with holding(repository) as held:
        if not held:
            return hand_to_daemon(repository, name, args)
        with open_metadata(repository, readonly=False) as md:
            return commands.execute(commands.RepositoryTarget(md), name, args)


def hand_to_daemon(
    repository: Path, name: str, args: dict[str, Any], timeout: float = ANSWER_TIMEOUT
) -> commands.Answer:
    """Queue a command for the daemon holding ``repository`` and wait for its answer."""
    with open_metadata(repository, readonly=False) as md:
        command_id = commands.submit(md, name, args)
        try:
            return commands.wait_for_answer(md, command_id, timeout)
        except commands.CommandFailed as error:
            raise click.ClickException(str(error)) from None


def report(answer: commands.Answer, as_json: bool) -> None:
    """Print a command's answer; a refused command exits with status 1."""
    if as_json:
        click.echo(json.dumps({"ok": answer.ok, "message": answer.message, **answer.data}))
    else:
        click.echo(answer.message)
    if not answer.ok:
        raise SystemExit(1)


# ---------------------------------------------------------------------- config


@cli.group("config")
def config_group() -> None:
    """Inspect the repository's configuration (xyleme.toml)."""


@config_group.command("show")
@config_option
@json_option
@click.pass_context
def config_show(ctx: click.Context, config_file: Path | None, as_json: bool) -> None:
    """Print the effective configuration: every key, its value and its meaning."""
    config = effective_config(repo_path(ctx), config_file)
    click.echo(json.dumps(as_dict(config), indent=2) if as_json else as_toml(config), nl=False)
    if as_json:
        click.echo()


# ---------------------------------------------------------------------- seeds, pause


@cli.group("seed")
def seed_group() -> None:
    """Manage the seed URLs the crawl starts from."""


@seed_group.command("add")
@click.argument("urls", nargs=-1)
@click.option(
    "--file",
    "seed_file",
    type=click.File("r", encoding="utf-8"),
    help="Read seed URLs from this file, one a line (# starts a comment); - is stdin.",
)
@json_option
@click.pass_context
def seed_add(ctx: click.Context, urls: tuple[str, ...], seed_file: Any, as_json: bool) -> None:
    """Add seed URLs; a running daemon queues them at once."""
    wanted = list(urls)
    if seed_file is not None:
        for line in seed_file:
            line = line.split("#", 1)[0].strip()
            if line:
                wanted.append(line)
    if not wanted:
        raise click.UsageError("give at least one URL, or --file")
    refuse_out_of_scope(effective_config(repo_path(ctx), None), wanted, as_json)
    report(run_state_command(repo_path(ctx), "seed add", {"urls": wanted}), as_json)


def refuse_out_of_scope(config: Config, seeds: list[str], as_json: bool) -> None:
    """Exit 2, adding nothing, when the scope refuses a seed: it would never be crawled."""
    refused = seed_refusals(config, seeds)
    if not refused:
        return
    message = "; ".join(f"seed {url} refused: {reason}" for url, reason in refused)
    message += ". Nothing added: see `xyleme scope show`, or widen [crawler] scope"
    if as_json:
        click.echo(json.dumps({"ok": False, "message": message, "refused": dict(refused)}))
    else:
        click.echo(message, err=True)
    raise SystemExit(2)


@seed_group.command("list")
@listing_options()
@click.pass_context
def seed_list(ctx: click.Context, limit: int, fmt: str | None, wide: bool) -> None:
    """List the seeds, oldest first: when each was added, whether the scope admits it
    (and if not, why), and what became of its page."""
    repository = repo_path(ctx)
    config = effective_config(repository, None)
    with open_metadata(repository, readonly=True) as md:
        seeds = commands.seed_entries(md)
        refusal = seed_scope(config, [seed.url for seed in seeds]).refusal
        shown = seeds[: shown_limit(limit)]
        ids = md.ids_for([seed.url for seed in shown], create=False, canonical=True)
        pages = {url_id: md.page(url_id) for url_id in ids if url_id is not None}
    rows = []
    for seed, url_id in zip(shown, ids, strict=True):
        page = pages.get(url_id)
        reason = refusal(seed.url)
        rows.append(
            {
                "url": seed.url,
                "added": seed.added,
                "in_scope": reason is None,
                "scope_reason": reason,
                "url_id": url_id,
                "type": None if page is None else page.page_type.value,
                "last_access": None if page is None else page.last_access,
            }
        )
    if fmt is None:
        rows = [{**row, "page": _seed_page(row)} for row in rows]
    emit(rows, SEED_COLUMNS, fmt, total=len(seeds), wide=wide, noun="seeds")


def seed_scope(config: Config, seeds: list[str]) -> Scope:
    """The scope a daemon would crawl these seeds in (the one scope check of ``seed list``)."""
    return repository_scope(config, seeds)


def _seed_page(row: dict[str, Any]) -> str:
    if row["type"] is None:
        return "no page"
    if row["last_access"] is None:
        return "never read"
    return f"{row['type']}, fetched {when(row['last_access'])}"


SEED_COLUMNS = [
    Column("url", "URL", long=True),
    Column("added", "added", lambda added: when(added, "unknown")),
    Column("scope_reason", "in scope", lambda reason: "yes" if reason is None else f"no: {reason}"),
    Column("page", "page", long=True),
]


@seed_group.command("remove")
@click.argument("urls", nargs=-1, required=True)
@json_option
@click.pass_context
def seed_remove(ctx: click.Context, urls: tuple[str, ...], as_json: bool) -> None:
    """Stop URLs being seeds (a running daemon is told at once); their pages and history stay.

    A URL that is not a seed is named and the command exits with 1."""
    report(run_state_command(repo_path(ctx), "seed remove", {"urls": list(urls)}), as_json)


@cli.command("pause")
@json_option
@click.pass_context
def pause(ctx: click.Context, as_json: bool) -> None:
    """Stop fetching (the daemon keeps running and answering); `xyleme resume` goes on."""
    report(run_state_command(repo_path(ctx), "pause", {}), as_json)


@cli.command("resume")
@json_option
@click.pass_context
def resume(ctx: click.Context, as_json: bool) -> None:
    """Fetch again after `xyleme pause`."""
    report(run_state_command(repo_path(ctx), "resume", {}), as_json)


# ---------------------------------------------------------------------- export


@cli.command("export")
@click.argument("kind", type=click.Choice([*sorted(export.KINDS), *ARCHIVE_KINDS]))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl", "folder"]),
    default=None,
    help="pages/links/rankings: csv (default) or jsonl; documents: jsonl (default) or folder.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(allow_dash=True, path_type=str),
    default="-",
    show_default=True,
    help="File (or, for warc and documents --format folder, folder) to write; - is stdout.",
)
@click.option(
    "--all-versions", is_flag=True, help="documents: every stored version, not just the latest."
)
@click.option("--url-prefix", default="", help="warc, documents: only URLs starting with this.")
@click.option("--since", type=MOMENT, default=None, help="warc: records dated at or after this.")
@click.option("--until", type=MOMENT, default=None, help="warc: records dated before this.")
@click.pass_context
def export_command(
    ctx: click.Context, kind: str, fmt: str | None, output: str, **options: Any
) -> None:
    """Export the repository: KIND is one of

    \b
      pages      Refresh-Data of every page (CSV or JSON Lines)
      links      the link matrix as URL-Id pairs
      rankings   importance, interest and OPIC scores
      warc       the archive's WARC files (all, or --since/--until/--url-prefix)
      documents  the stored XML: latest (or --all-versions) as JSON Lines or a folder

    Unknown values are empty CSV cells or JSON nulls; rows come in ascending URL-Id order.
    Every export streams: its memory does not grow with the repository. Examples:

    \b
      xyleme export pages -o pages.csv
      xyleme export warc -o crawl.warc.gz --since 2026-11-01
      xyleme export documents --format folder --all-versions -o docs/
    """
    repository = repo_path(ctx)
    if kind in ARCHIVE_KINDS:
        archive_export(repository, kind, fmt, output, **options)
        return
    if fmt == "folder":
        raise click.UsageError(f"--format folder is for documents, not {kind}")
    given = [name for name, value in options.items() if value not in (None, False, "")]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise click.UsageError(f"{flags}: for warc and documents, not {kind}")
    with (
        open_metadata(repository, readonly=True) as md,
        click.open_file(output, "w", encoding="utf-8") as out,
    ):
        export.write(md, kind, fmt or "csv", out)
