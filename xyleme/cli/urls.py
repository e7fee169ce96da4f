"""``xyleme urls``: the URLs of one outcome (refused, failed, unread, read...) with the reason
each was refused or failed, or their counts per reason (``--by-reason``).

Reads the repository read-only, so it works while the daemon runs; the queries are
:mod:`metadata.reports`'.
"""

from __future__ import annotations

from typing import Any

import click

from xyleme.cli import cli, repo_path
from xyleme.cli.listing import Column, emit, listing_options, shown_limit, when

# The statuses, kept here as text so `xyleme --help` does not import the metadata package
# (tests/cli/test_cli_reports.py checks they match metadata.reports').
STATUSES = (
    "rejected",
    "error",
    "dead",
    "failed",
    "unread",
    "read",
    "html",
    "xml",
    "dtd",
    "resource",
    "redirect",
    "waiting",
)
WITH_REASONS = ("rejected", "error", "dead", "failed", "waiting")

URL = Column("url", "URL", long=True)
LAST_READ = Column("last_access", "last fetch", when)
COLUMNS: dict[str, list[Column]] = {
    "rejected": [
        URL,
        Column("reason", "reason", long=True),
        Column("referrer", "found on", lambda url: url or "– (a seed or a module)", long=True),
        Column("at", "refused", when),
    ],
    "failed": [
        URL,
        Column("type", "type"),
        Column("status", "HTTP", lambda status: "no answer" if status is None else str(status)),
        Column("reason", "reason", long=True),
        Column("failures", "failures", right=True),
        LAST_READ,
    ],
    "unread": [URL, Column("discovered_at", "discovered", when)],
    "redirect": [
        URL,
        Column("status", "HTTP"),
        Column("redirect_url", "to", long=True),
        LAST_READ,
    ],
    "read": [
        URL,
        Column("type", "type"),
        Column("status", "HTTP"),
        Column("content_type", "content type"),
        Column("size", "bytes", right=True),
        LAST_READ,
    ],
}
GROUPS = [
    Column("count", "URLs", right=True),
    Column("reason", "reason group", long=True),
    Column("example", "example", long=True),
]


def _columns(status: str) -> list[Column]:
    if status in WITH_REASONS[1:]:
        return COLUMNS["failed"]
    return COLUMNS.get(status, COLUMNS["read"])


@cli.command("urls")
@click.option(
    "--status",
    type=click.Choice(STATUSES),
    required=True,
    help="rejected: refused before any fetch (scope, trap, suffix, invalid); error: last "
    "fetch failed; dead: believed gone; failed: error or dead; unread: never read; read / "
    "html / xml / dtd / resource: read; redirect: answered with a redirect; waiting: XML "
    "parked until its DTD, entity or schema arrives.",
)
@click.option(
    "--reason",
    metavar="TEXT",
    help="Only URLs whose reason starts with TEXT (case-insensitive): a group that "
    "--by-reason prints, or a longer prefix.",
)
@click.option(
    "--host",
    metavar="HOST",
    help="Only URLs of HOST: a host name (any scheme and port) or scheme://host[:port].",
)
@click.option(
    "--by-reason",
    is_flag=True,
    help="Count the URLs per reason group (the reason before its first ':') instead.",
)
@listing_options()
@click.pass_context
def urls(
    ctx: click.Context,
    status: str,
    reason: str | None,
    host: str | None,
    by_reason: bool,
    limit: int,
    fmt: str | None,
    wide: bool,
) -> None:
    """List URLs by what became of them, with the reason each was refused or failed.

    Newest first. `rejected` reads the rejected-links table, which keeps the most recent
    refusals only ([metadata] rejected_limit). Example: `xyleme urls --status rejected
    --by-reason`, then `xyleme urls --status rejected --reason "out of scope"`.
    """
    from metadata import reports
    from xyleme.cli.ops import open_metadata

    if (reason or by_reason) and status not in WITH_REASONS:
        option = "--by-reason" if by_reason else "--reason"
        raise click.UsageError(
            f"{option} needs a --status whose URLs have reasons: {', '.join(WITH_REASONS)}"
        )
    with open_metadata(repo_path(ctx), readonly=True) as md:
        if by_reason:
            groups = reports.reason_counts(md, status, reason=reason, host=host)
            shown = groups[: shown_limit(limit)]
            emit(shown, GROUPS, fmt, total=len(groups), wide=wide, noun="reason groups")
            return
        rows: list[dict[str, Any]]
        if status == reports.REJECTED:
            rows, total = reports.rejected_urls(
                md, reason=reason, host=host, limit=shown_limit(limit)
            )
        else:
            rows, total = reports.page_urls(
                md, status, reason=reason, host=host, limit=shown_limit(limit)
            )
    emit(rows, _columns(status), fmt, total=total, wide=wide, noun="URLs")
