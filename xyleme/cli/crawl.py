"""``xyleme crawl``: crawl from seed URLs into the repository, then print the statistics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metadata import Metadata, MetadataError, SystemClock
from xyleme import signals
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import settings_errors
from xyleme.cli.ops import effective_config
from xyleme.crawler import Crawler, CrawlerSettings, Scope, ScopeError
from xyleme.scope_config import configured_rules

if TYPE_CHECKING:
    from xyleme.archive import Archive

DATABASE = "metadata.db"


@cli.command("crawl")
@click.argument("seeds", nargs=-1, required=True)
@click.option(
    "--scope",
    "rules",
    multiple=True,
    help="A scope rule (origin URL, host:, domain:, glob:, regex:, net:, deny:…); repeatable.",
)
@click.option("--domain", "domains", multiple=True, help="Allow a domain and its subdomains.")
@click.option("--host", "hosts", multiple=True, help="Allow one host name.")
@click.option("--prefix", "prefixes", multiple=True, help="Allow URLs starting with this.")
@click.option("--deny", multiple=True, help="Refuse a domain, or URLs starting with a prefix.")
@click.option(
    "--concurrency", type=click.IntRange(1), default=64, show_default=True, help="In flight."
)
@click.option(
    "--per-host", type=click.IntRange(1), default=1, show_default=True, help="In flight per host."
)
@click.option(
    "--delay", type=click.FloatRange(0), default=1.0, show_default=True, help="Seconds per host."
)
@click.option(
    "--max-depth", type=click.IntRange(0), default=8, show_default=True, help="Link hops."
)
@click.option("--max-pages", type=click.IntRange(1), help="Stop after this many fetches.")
@click.option(
    "--simweb-port",
    type=click.IntRange(1, 65535),
    help="Resolve *.simweb.test to a simulated web on 127.0.0.1:PORT.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as one JSON object.")
@click.pass_context
def crawl(
    ctx: click.Context,
    seeds: tuple[str, ...],
    rules: tuple[str, ...],
    domains: tuple[str, ...],
    hosts: tuple[str, ...],
    prefixes: tuple[str, ...],
    deny: tuple[str, ...],
    concurrency: int,
    per_host: int,
    delay: float,
    max_depth: int,
    max_pages: int | None,
    simweb_port: int | None,
    as_json: bool,
) -> None:
    """Crawl from SEEDS (scouting, level 3) within the scope, recording into the repository.

    With no --scope/--domain/--host/--prefix/--deny the scope is the repository's [crawler]
    scope, else the seeds' sites (docs/crawler.md, "Scope"). A seed out of scope stops the
    command before any fetch (exit 2). Ctrl-C stops cleanly: what was fetched is committed.
    The repository's [archive] settings apply: every exchange goes to its WARC files and
    crawl log (docs/archive.md).
    """
    path = repo_path(ctx) / DATABASE
    archive = repository_archive(repo_path(ctx))
    with settings_errors(CrawlerSettings):
        settings = CrawlerSettings(
            concurrency=concurrency,
            per_host_concurrency=per_host,
            min_delay=delay,
            max_scout_depth=max_depth,
        )
    try:
        written = Scope(rules, hosts=hosts, domains=domains, prefixes=prefixes, denied=deny)
    except ScopeError as error:
        raise click.BadParameter(str(error), param_hint="--scope") from None
    if not written.rules:  # no option: the repository's [crawler] scope, as the daemon's
        written = Scope(configured_rules(effective_config(repo_path(ctx), None)))
    scope = Scope.configured(written.rules, seeds)
    refused = scope.refused_seeds(seeds)
    for seed, reason in refused:
        click.echo(f"seed refused: {seed}: {reason}", err=True)
    if refused:
        raise SystemExit(2)
    try:
        with Metadata.open(path) as md:
            stats = asyncio.run(_crawl(md, settings, scope, seeds, max_pages, simweb_port, archive))
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(stats))
        return
    _print_stats(stats, Path(path))


async def _crawl(
    md: Metadata,
    settings: CrawlerSettings,
    scope: Scope,
    seeds: tuple[str, ...],
    max_pages: int | None,
    simweb_port: int | None,
    archive: Archive | None,
) -> dict:
    resolver = None
    if simweb_port is not None:
        from xyleme.simweb import SimWebResolver  # the CLI may import the simulated web

        resolver = SimWebResolver(simweb_port)
    crawler = Crawler(
        md, settings, scope, clock=md.clock, resolver=resolver, exchanges=archive
    )  # its time
    if archive is not None:
        archive.clock = md.clock  # WARC-Date: the repository's time, as fetched_at
    refused = [seed for seed in seeds if not crawler.submit(seed)]
    for seed in refused:  # not a URL, or a trap's shape: the rejected links say why
        click.echo(f"seed refused (see `xyleme page` / rejected links): {seed}", err=True)
    if max_pages is not None:

        def stop_when_enough(event: object) -> None:
            if crawler.stats.pages >= max_pages:
                crawler.stop()

        for signal in (signals.page_fetched, signals.page_failed, signals.page_dead):
            crawler.signals.connect(signal, stop_when_enough)
    if archive is None:
        return await crawler.run()
    archive.open()
    try:
        return await crawler.run()
    finally:
        await archive.close()


def repository_archive(repository: Path) -> Archive | None:
    """The repository's archive as its xyleme.toml sets it (None when switched off)."""
    from xyleme.archive import Archive  # imported by a crawl, not by --help
    from xyleme.config import CONFIG_FILE, ConfigError, load_config

    try:
        settings = load_config(repository / CONFIG_FILE).archive
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    archive = Archive(repository / settings.folder, settings, SystemClock())
    return archive if archive.active else None


def _print_stats(stats: dict, path: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"crawl into {path}", show_header=False)
    rows = [
        ("pages", f"{stats['pages']} ({stats['pages_per_s']}/s)"),
        ("bytes", f"{stats['bytes']} ({stats['bytes_per_s']}/s)"),
        ("by type", _pairs(stats["by_type"])),
        ("by status", _pairs(stats["by_status"])),
        ("errors", _pairs(stats["errors"])),
        ("rejected", _pairs(stats["rejected"])),
        ("not modified / changed", f"{stats['not_modified']} / {stats['changed']}"),
        ("left in queues", _pairs(stats["queues"])),
    ]
    for name, value in rows:
        table.add_row(name, value)
    Console().print(table)


def _pairs(counts: dict) -> str:
    return ", ".join(f"{key}: {value}" for key, value in counts.items()) or "-"
