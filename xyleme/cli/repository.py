"""``xyleme init`` and ``xyleme page``: create a repository, show one page's metadata."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from metadata import Metadata, MetadataError, PageRecord, migrate_store, target_of
from xyleme import __version__
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import InputError, repository_errors
from xyleme.cli.listing import NONE, dash, when
from xyleme.cli.params import PAGE
from xyleme.config import Config, as_toml

DATABASE = "metadata.db"
CONFIG = "xyleme.toml"
FOLDERS = ("documents", "ranking")
STORE_SCHEMES = ("postgresql://", "postgres://", "sqlite://")


def config_text(store_url: str | None = None) -> str:
    """The ``xyleme.toml`` of a new repository: a header and the commented defaults (but
    ``[store] url`` when the repository's metadata lives elsewhere: ``init --db``)."""
    header = [
        f"# xyleme repository configuration (made by `xyleme init`, xyleme {__version__}).",
        "# Each setting is shown commented out at its documented default:",
        "# uncomment a line to change it. `xyleme config show` prints the effective values.",
        "",
    ]
    text = "\n".join(header) + as_toml(Config(), commented=True)
    if store_url:
        text = text.replace('\n[store]\n# url = ""', f"\n[store]\nurl = {json.dumps(store_url)}", 1)
    return text


def create_repository(
    directory: Path, config: str | None = None, store_url: str | None = None
) -> None:
    """Make a repository in ``directory``: config, database, folders.

    ``config`` is the text of ``xyleme.toml`` (default: every setting commented out);
    ``store_url`` puts the metadata in that store (PostgreSQL) instead of ``metadata.db``.
    Raises :class:`click.ClickException` naming what went wrong (nothing is overwritten).
    """
    for name in (CONFIG, DATABASE):
        if (directory / name).exists():
            raise click.ClickException(
                f"{directory} already holds a xyleme repository ({name} exists)"
            )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        Metadata.create(store_url or directory / DATABASE).close()
        for folder in FOLDERS:
            (directory / folder).mkdir(exist_ok=True)
        (directory / CONFIG).write_text(config or config_text(store_url), encoding="utf-8")
    except (OSError, MetadataError) as error:
        raise click.ClickException(str(error)) from None


@cli.command("init")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--db",
    "store_url",
    metavar="URL",
    help="Keep the metadata in this store, e.g. postgresql://user@host/dbname "
    "(an empty database of its own); default: metadata.db in DIRECTORY (SQLite).",
)
@click.pass_context
def init(ctx: click.Context, directory: Path | None, store_url: str | None) -> None:
    """Create a repository in DIRECTORY (default: --repo): config, database, folders."""
    directory = directory if directory is not None else repo_path(ctx)
    if store_url is not None and not store_url.startswith(STORE_SCHEMES):
        raise InputError(f"--db {store_url!r}: a store URL starts with postgresql:// or sqlite://")
    create_repository(directory, store_url=store_url)
    click.echo(f"Created a xyleme repository in {directory}")
    database = target_of(store_url).name if store_url else DATABASE
    for name in (CONFIG, database, *(f"{folder}/" for folder in FOLDERS)):
        click.echo(f"  {name}")


@cli.command("migrate")
@click.pass_context
def migrate(ctx: click.Context) -> None:
    """Bring the repository's metadata store to this xyleme's schema (say from which version
    to which); a store written by a newer xyleme is refused, untouched."""
    path = repo_path(ctx) / DATABASE
    with repository_errors(path):
        before, after = migrate_store(path)
    name = target_of(path).name
    if before == after:
        click.echo(f"{name}: schema version {after}, already current")
    else:
        click.echo(f"{name}: migrated schema version {before} -> {after}")


@cli.command("page")
@click.argument("url", type=PAGE)
@click.option("--json", "as_json", is_flag=True, help="Print the record as one JSON object.")
@click.pass_context
def page(ctx: click.Context, url: str, as_json: bool) -> None:
    """Show the full metadata record of URL (or of a URL-Id), with its access history."""
    path = repo_path(ctx) / DATABASE
    with repository_errors(path), Metadata.open(path, readonly=True) as md:
        record = md.page(int(url)) if url.isdigit() else md.page_by_url(url)
        links = {
            "children": int(md.children(record.url_id).size),
            "extra_children": md.extra_children(record.url_id),
            "dependencies": md.dependencies(record.url_id).tolist(),
            "canonical_url": (
                None if record.canonical_to is None else md.url_of(record.canonical_to)
            ),
        }
        status = md.status(record.url_id)
        loading = {
            "load_status": None if status is None else status[0].value,
            "load_detail": None if status is None else status[1],
            "waiting_for": md.waiting_for(record.url_id),
        }
    if as_json:
        fields = dataclasses.asdict(record)
        fields["page_type"] = record.page_type.value
        click.echo(json.dumps({**fields, **links, **loading}, indent=2))
    else:
        click.echo(_as_text(record, {**links, **loading}))


_TIMES = {"first_access", "last_access", "last_change", "last_modified", "next_refresh"}


def _as_text(record: PageRecord, extra: dict[str, object]) -> str:
    """The record as aligned ``field  value`` lines, then the observation history."""
    fields = dataclasses.asdict(record)
    observations = fields.pop("observations")
    fields["page_type"] = record.page_type.value
    fields["discovered_at"] = record.discovered_at
    rows = {**fields, **extra}
    width = max(map(len, rows))
    lines = []
    for name, value in rows.items():
        shown = when(value, "never") if name in _TIMES | {"discovered_at"} else dash(value)
        lines.append(f"{name:<{width}}  {shown}")
    lines.append("")
    lines.append(f"observations ({len(observations)}, oldest first)")
    if observations:
        lines.append(f"  {'when':<20}  {'changed':<7}  last-modified")
    for seen in observations:
        changed = {None: "first", True: "yes", False: "no"}[seen["changed"]]
        lines.append(
            f"  {when(seen['at'], NONE):<20}  {changed:<7}  {when(seen['last_modified'], NONE)}"
        )
    return "\n".join(lines)
