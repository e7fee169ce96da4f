"""``xyleme load|doc|diff|changes|query``: fill and read the XML warehouse (issue 5)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from loader import (
    Loader,
    LoaderError,
    LoaderSettings,
    LoadOutcome,
    LoadResult,
    QueryError,
    QueryTimeout,
    Warehouse,
    diff_versions,
    parse_namespaces,
    run_query,
)
from metadata import Metadata, MetadataError, SystemClock
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import InputError
from xyleme.cli.listing import Column, emit, listing_options, shown_limit, size, when
from xyleme.cli.params import MOMENT, PAGE
from xyleme.cli.reading import DATABASE, has_metadata

_DEFAULTS = LoaderSettings()


def _warehouse(ctx: click.Context) -> Warehouse:
    """The repository's documents, with URL lookups through its metadata when there is one."""
    repo = repo_path(ctx)
    lookup = None
    if has_metadata(repo):  # metadata.db, or the PostgreSQL store xyleme.toml names
        try:
            metadata = Metadata.open(repo / DATABASE, readonly=True)
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
        metadata = Metadata.open(repo / DATABASE, clock=clock)
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


VERSION_FIELDS = ("version", "md5", "fetched_at", "size")
VERSION_COLUMNS = [
    Column("version", "version", right=True),
    Column("fetched_at", "fetched", when),
    Column("md5", "MD5"),
    Column("size", "size", size, right=True),
    Column("dtd", "DTD"),
    Column("schema", "schema"),
]


@cli.command("doc")
@click.argument("url", type=PAGE)
@click.option(
    "--version", "version", type=int, default=None, help="Version number (default: latest)."
)
@click.option("--versions", "list_versions", is_flag=True, help="List the stored versions instead.")
@listing_options()
@click.pass_context
def doc(
    ctx: click.Context,
    url: str,
    version: int | None,
    list_versions: bool,
    limit: int,
    fmt: str | None,
    wide: bool,
) -> None:
    """Print a stored XML document (URL or URL-Id), or list its versions.

    ``--versions`` lists them oldest first; its ``--json`` rows are the ``versions`` of
    ``/api/page`` (``version``, ``md5``, ``fetched_at``, ``size``, ``validity``), its CSV
    has the validity's ``dtd`` and ``schema`` as columns. The listing options apply to
    ``--versions`` only."""
    if not list_versions and (fmt or wide):
        raise click.UsageError("--json, --csv and --wide list versions: add --versions")
    warehouse = _warehouse(ctx)
    try:
        url_id = warehouse.document_id(url)
        if not list_versions:
            sys.stdout.buffer.write(warehouse.repository.read(url_id, version))
            return
        versions = warehouse.repository.document(url_id).versions
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    rows = [info.as_dict() for info in versions[: shown_limit(limit)]]
    if fmt != "json":  # flat: the validity's two checks as columns
        rows = [
            {**row, "dtd": row["validity"]["dtd"], "schema": row["validity"]["schema"]}
            for row in rows
        ]
    fields = [*VERSION_FIELDS, "validity"] if fmt == "json" else [*VERSION_FIELDS, "dtd", "schema"]
    emit(rows, VERSION_COLUMNS, fmt, fields=fields, total=len(versions), wide=wide, noun="versions")


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
    """Show what changed between two stored versions, on the canonical (C14N) form.

    A document with a single stored version has nothing to compare: the command says so."""
    warehouse = _warehouse(ctx)
    try:
        url_id = warehouse.document_id(url)
        versions = warehouse.repository.document(url_id).versions
        if len(versions) == 1 and from_version is None:
            only = versions[0]
            click.echo(
                f"{url} has one stored version (version {only.version}, fetched "
                f"{when(only.fetched_at)}): nothing to compare it with yet"
            )
            return
        lines = diff_versions(warehouse, url_id, from_version, to_version)
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    click.echo("\n".join(lines) if lines else "no change (canonical forms are equal)")


CHANGE_COLUMNS = [
    Column("fetched_at", "fetched", when),
    Column("version", "version", right=True),
    Column("url", "URL", long=True),
]


@cli.command("changes")
@click.option(
    "--since",
    "since",
    type=MOMENT,
    required=True,
    help="Seconds since the epoch, or an ISO 8601 date.",
)
@listing_options()
@click.pass_context
def changes(ctx: click.Context, since: float, limit: int, fmt: str | None, wide: bool) -> None:
    """List the document versions stored since a time (fetch time, simulated clock), in the
    order they were stored. ``--json`` rows: ``url_id``, ``url``, ``version``, ``md5`` and
    ``fetched_at``."""
    warehouse = _warehouse(ctx)
    try:
        found = list(warehouse.repository.changes(since))
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    rows = [dataclasses.asdict(change) for change in found[: shown_limit(limit)]]
    emit(rows, CHANGE_COLUMNS, fmt, total=len(found), wide=wide, noun="versions")


QUERY_COLUMNS = [
    Column("url", "URL", long=True),
    Column("value", "value", long=True),
]


@cli.command("query")
@click.argument("xpath")
@click.option("--url-prefix", default="", help="Only documents whose URL starts with this.")
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
    help="Seconds before the query is stopped (what it found by then is printed).",
)
@listing_options(default_limit=_DEFAULTS.query_max_results)
@click.pass_context
def query(
    ctx: click.Context,
    xpath: str,
    url_prefix: str,
    bindings: tuple[str, ...],
    timeout: float,
    limit: int,
    fmt: str | None,
    wide: bool,
) -> None:
    """Evaluate an XPath 1.0 expression over the latest version of every stored document.

    ``--json`` rows are ``/api/query``'s results: ``url_id``, ``url``, ``version``,
    ``value``. A query stopped at ``--timeout`` prints the results it found, warns on
    stderr and exits with 1 (the answer is incomplete)."""
    warehouse = _warehouse(ctx)
    cap = shown_limit(limit)
    stopped = None
    try:
        matches = run_query(
            warehouse.repository.folder,
            xpath,
            parse_namespaces(bindings),
            url_prefix,
            sys.maxsize if cap is None else cap + 1,  # one more: whether more exist
            timeout,
        )
    except QueryTimeout as error:
        matches, stopped = error.partial, error
    except QueryError as error:  # the expression or a --ns binding: the user's input
        raise InputError(str(error)) from None
    except (LoaderError, MetadataError) as error:
        raise click.ClickException(str(error)) from None
    rows = [match.as_dict() for match in matches[:cap]]
    more = cap is not None and len(matches) > cap
    emit(rows, QUERY_COLUMNS, fmt, wide=wide, noun="results", more=more)
    if stopped is not None:
        click.echo(
            f"warning: {stopped}; the {len(rows)} results found by then are shown "
            "(a longer --timeout finds more)",
            err=True,
        )
        ctx.exit(1)
