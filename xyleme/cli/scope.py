"""``xyleme scope show|test``: the crawl scope's rules in force, and the verdict on one URL.

Both read the scope the daemon would use (:mod:`xyleme.scope_config`): the repository's
``[crawler] scope`` rules (``--config`` wins), else one rule per stored seed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from metadata import InvalidURL, canonicalize_url
from xyleme import commands
from xyleme.cli import cli, repo_path
from xyleme.cli.listing import Column, dash, emit, listing_options, shown_limit
from xyleme.cli.ops import config_option, effective_config
from xyleme.cli.reading import has_metadata, open_metadata
from xyleme.config import Config
from xyleme.crawler import Kind, Rule, Scope, TrapGuard, literal_refusal
from xyleme.scope_config import repository_scope

ORDER = (
    "A deny rule refuses what it matches wherever it stands; otherwise the first rule that "
    "matches admits; a URL no rule matches is refused."
)


@cli.group("scope")
def scope_group() -> None:
    """The crawl scope: the rules in force, and which of them admits or refuses a URL."""


def _scope(ctx: click.Context, config_file: Path | None) -> tuple[Scope, Config]:
    """The repository's scope (its configuration's rules, else its stored seeds')."""
    repository = repo_path(ctx)
    config = effective_config(repository, config_file)
    seeds: list[str] = []
    if has_metadata(repository):  # metadata.db, or the PostgreSQL store xyleme.toml names
        with open_metadata(repository, readonly=True) as md:
            seeds = commands.stored_seeds(md)
    return repository_scope(config, seeds), config


def _row(position: int, rule: Rule) -> dict[str, Any]:
    """A rule as the JSON of ``scope show`` and ``scope test`` give it."""
    return {
        "position": position,
        "kind": rule.kind.value,
        "effect": "deny" if rule.deny else ("connect" if rule.kind is Kind.NET else "admit"),
        "rule": str(rule),
        "source": rule.source or None,
    }


RULE_COLUMNS = [
    Column("position", "#", right=True),
    Column("kind", "kind"),
    Column("effect", "effect"),
    Column("rule", "rule", long=True),
    Column("source", "source", long=True),
]


@scope_group.command("show")
@config_option
@listing_options()
@click.pass_context
def scope_show(
    ctx: click.Context, config_file: Path | None, limit: int, fmt: str | None, wide: bool
) -> None:
    """Print the rules in force, in order, with their kind and where each comes from.

    ``--json`` rows: ``position``, ``kind``, ``effect`` (admit, deny or connect), ``rule``
    and ``source`` (where the rule comes from; null when unknown)."""
    scope, _ = _scope(ctx, config_file)
    rows = [_row(position, rule) for position, rule in enumerate(scope.rules, 1)]
    if fmt is None and not scope.admits_anything:
        click.echo("no admitting rule and no seed: every http(s) URL is admitted")
    emit(rows[: shown_limit(limit)], RULE_COLUMNS, fmt, total=len(rows), wide=wide, noun="rules")
    if fmt is None:
        click.echo(ORDER)
        click.echo(
            "Loopback and private addresses are reached only for hosts an origin or host: rule "
            "names, addresses of a net: rule, and domain: rules of non-public names (.test, …)."
        )


@scope_group.command("test")
@click.argument("url")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON object.")
@click.pass_context
def scope_test(ctx: click.Context, url: str, config_file: Path | None, as_json: bool) -> None:
    """Say which rule admits or refuses URL (exit 0 admitted, 1 refused, 2 not a URL).

    The trap guards ([crawler] max_url_length, max_path_segments, …) and the SSRF guard on a
    URL whose host is an address are checked too; names are not resolved.
    """
    try:
        canonical = canonicalize_url(url)
    except InvalidURL as error:
        click.echo(f"{url!r} is not a URL the crawler can fetch: {error.reason}", err=True)
        raise SystemExit(2) from None
    scope, config = _scope(ctx, config_file)
    decision = scope.decide(canonical)
    reason = decision.reason
    admitted = decision.admitted
    if admitted:
        refusal = TrapGuard.from_settings(config.crawler).refusal(canonical)
        host = urlsplit(canonical).hostname or ""
        refusal = refusal or literal_refusal(host, scope.vouches_for)
        if refusal is not None:
            admitted, reason = False, f"{reason}, but refused: {refusal}"
    verdict: dict[str, Any] = {"url": url, "canonical": canonical, "admitted": admitted}
    rule = decision.rule
    verdict |= {"rule": None} if rule is None else _row(scope.rules.index(rule) + 1, rule)
    verdict["reason"] = reason
    if as_json:
        click.echo(json.dumps(verdict))
    else:
        click.echo(f"{'admitted' if admitted else 'refused'}  {canonical}")
        if rule is not None:
            source = dash(verdict["source"])
            click.echo(f"  rule {verdict['position']} ({verdict['kind']}, {source})")
        click.echo(f"  {reason}")
    raise SystemExit(0 if admitted else 1)
