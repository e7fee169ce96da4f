"""``xyleme load|doc|diff|changes|query``: fill and read the XML warehouse (issue 5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from loader import Loader, LoadOutcome, LoadResult
from loader.changes import diff_versions, iso
from loader.errors import LoaderError
from loader.query import parse_namespaces, run_query
from loader.reading import Warehouse
from loader.settings import LoaderSettings
from metadata import Metadata, MetadataError
from metadata.clock import SystemClock
from xyleme.cli import cli, repo_path
from xyleme.cli.params import MOMENT, PAGE

_DEFAULTS = LoaderSettings()


def _warehouse(ctx: click.Context) -> Warehouse:
    """The repository's documents, with URL lookups through its metadata when there is one."""
    repo = repo_path(ctx)
    lookup = None
    if (repo / "metadata.db").is_file():
        try:
            metadata = Metadata.open(repo / "metadata.db", readonly=True)
        except MetadataError as error:
            raise click.ClickException(str(error)) from None
        ctx.call_on_close(metadata.close)

        def lookup(url: str) -> int | None:
            return metadata.id_for(url, create=False)

    try:
        return Warehouse(repo / "documents", lookup_id=lookup)
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None


class _AskTheOperator:
    """The CLI's DependencyFetcher: there is no crawler here, so the operator is asked."""

    def __init__(self) -> None:
        self.requested: list[str] = []

    def request(self, url: str, referrer_id: int) -> None:
        self.requested.append(url)


def _describe(url: str, result: LoadResult) -> str:
    if result.outcome is LoadOutcome.STORED:
        validity = result.validity
        return (
            f"{url}: stored version {result.version} (dtd {validity.dtd.value}, schema "
            f"{validity.schema.value}), {result.links} links, {result.dependencies} dependencies"
        )
    if result.outcome is LoadOutcome.UNCHANGED:
        return f"{url}: unchanged (version {result.version})"
    if result.outcome is LoadOutcome.DEPENDENCY:
        return f"{url}: dependency cached (md5 {result.md5})"
    return f"{url}: {result.outcome.value}: {result.reason}"


@cli.command("load")
@click.argument("url")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--content-type", default=None, help="The Content-Type the server would send.")
@click.pass_context
def load(ctx: click.Context, url: str, file: Path, content_type: str | None) -> None:
    """Load a local FILE into the warehouse as if it had been fetched from URL.

    A document whose DTD, entities or schema are not loaded yet waits for them: load each one
    the same way (its URL and a file) and the waiting documents are finished.
    """
    repo = repo_path(ctx)
    clock = SystemClock()
    fetcher = _AskTheOperator()
    try:
        metadata = Metadata.open(repo / "metadata.db", clock=clock)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    with metadata:
        url_id = metadata.id_for(url)
        if url_id is None:
            raise click.ClickException(f"{url} is not a URL the warehouse accepts")
        loader = Loader(repo / "documents", metadata, fetcher, clock)
        headers = {"Content-Type": content_type} if content_type else {}
        result = loader.load(url_id, url, file, headers, clock.now())
        loader.close()
        click.echo(_describe(url, result))
        for note in result.notes:
            click.echo(f"  {note}")
    for needed in fetcher.requested:
        click.echo(f"  needs {needed}: load it with `xyleme load {needed} FILE`")
    if result.outcome is LoadOutcome.FAILED:
        ctx.exit(1)


@cli.command("doc")
@click.argument("url", type=PAGE)
@click.option(
    "--version", "version", type=int, default=None, help="Version number (default: latest)."
)
@click.option("--versions", "list_versions", is_flag=True, help="List the stored versions instead.")
@click.pass_context
def doc(ctx: click.Context, url: str, version: int | None, list_versions: bool) -> None:
    """Print a stored XML document (URL or URL-Id), or list its versions."""
    warehouse = _warehouse(ctx)
    try:
        url_id = warehouse.document_id(url)
        if list_versions:
            for info in warehouse.repository.document(url_id).versions:
                validity = info.validity
                click.echo(
                    f"{info.version}\t{iso(info.fetched_at)}\t{info.md5}\t{info.size}\t"
                    f"dtd={validity.dtd.value}\tschema={validity.schema.value}"
                )
            return
        sys.stdout.buffer.write(warehouse.repository.read(url_id, version))
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None


@cli.command("diff")
@click.argument("url", type=PAGE)
@click.option(
    "--from",
    "from_version",
    type=int,
    default=None,
    help="Older version (default: the one before --to).",
)
@click.option("--to", "to_version", type=int, default=None, help="Newer version (default: latest).")
@click.pass_context
def diff(ctx: click.Context, url: str, from_version: int | None, to_version: int | None) -> None:
    """Show what changed between two stored versions, on the canonical (C14N) form."""
    warehouse = _warehouse(ctx)
    try:
        lines = diff_versions(warehouse, warehouse.document_id(url), from_version, to_version)
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    click.echo("\n".join(lines) if lines else "no change (canonical forms are equal)")


@cli.command("changes")
@click.option(
    "--since",
    "since",
    type=MOMENT,
    required=True,
    help="Seconds since the epoch, or an ISO 8601 date.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.pass_context
def changes(ctx: click.Context, since: float, as_json: bool) -> None:
    """List the document versions stored since a time (fetch time, simulated clock)."""
    warehouse = _warehouse(ctx)
    try:
        found = list(warehouse.repository.changes(since))
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    for change in found:
        if as_json:
            click.echo(
                json.dumps(
                    {
                        "url": change.url,
                        "url_id": change.url_id,
                        "version": change.version,
                        "md5": change.md5,
                        "at": change.fetched_at,
                    }
                )
            )
        else:
            click.echo(f"{iso(change.fetched_at)}\t{change.version}\t{change.url}")


@cli.command("query")
@click.argument("xpath")
@click.option("--url-prefix", default="", help="Only documents whose URL starts with this.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=_DEFAULTS.query_max_results,
    show_default=True,
    help="Most results printed.",
)
@click.option(
    "--ns",
    "bindings",
    multiple=True,
    help="A namespace prefix for the query, as prefix=uri (repeatable).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=_DEFAULTS.query_time_limit_seconds,
    show_default=True,
    help="Seconds before the query is stopped.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
@click.pass_context
def query(
    ctx: click.Context,
    xpath: str,
    url_prefix: str,
    limit: int,
    bindings: tuple[str, ...],
    timeout: float,
    as_json: bool,
) -> None:
    """Evaluate an XPath 1.0 expression over the latest version of every stored document."""
    warehouse = _warehouse(ctx)
    try:
        matches = run_query(
            warehouse.repository.folder,
            xpath,
            parse_namespaces(bindings),
            url_prefix,
            limit,
            timeout,
        )
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps([m.as_dict() for m in matches], indent=2))
        return
    for match in matches:
        click.echo(f"{match.url}\t{match.value}")
