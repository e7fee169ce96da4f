"""``xyleme hosts``: the per-host report (Heritrix's hosts report), or one host in detail.

Two sources, each figure saying how old it is: the pages' counts come from the database
(as of the command), and what only the crawler knows (delay in force, queue, robots.txt,
pages scouted against the host budget, the fetches by answer) from the snapshot the daemon
writes at each checkpoint (``host_stats`` and ``host_fetches``,
:func:`metadata.reports.write_host_stats`).
"""

from __future__ import annotations

import time
from typing import Any

import click

from xyleme.cli import cli, repo_path
from xyleme.cli.listing import (
    NONE,
    Column,
    ago,
    dash,
    emit,
    listing_options,
    shown_limit,
    size,
    when,
    written_ago,
)

SORTS = {
    "pages": lambda host: (-host["pages"], host["host"]),
    "errors": lambda host: (-(host["errors"] + host["dead"]), host["host"]),
    "queued": lambda host: (-(host["queued"] or 0), host["host"]),
    "bytes": lambda host: (-host["bytes"], host["host"]),
    "host": lambda host: host["host"],
}


def _seconds(value: float | None) -> str:
    return NONE if value is None else f"{value:g} s"


def _budget(host: dict[str, Any]) -> str:
    if host["budget"] is None:
        return NONE
    return f"{host['scouted'] or 0}/{host['budget']}"


def _robots(host: dict[str, Any]) -> str:
    state, note = host["robots"], host["robots_note"]
    if state is None:
        return "unknown" if host["stats_written"] is None else "not read now"
    if not note or state in note:
        return note or state
    return f"{state} ({note})"


ANSWERS = ("status_2xx", "status_3xx", "status_4xx", "status_5xx", "network_errors")


def _last_error(host: dict[str, Any]) -> str:
    if host["last_error"] is None:
        return NONE
    return f"{host['last_error']} ({when(host['last_error_at'])})"


COLUMNS = [
    Column("host", "host", long=True),
    Column("pages", "pages", right=True),
    Column("read", "read", right=True),
    Column("bytes", "bytes", size, right=True),
    Column("answers", "2xx/3xx/4xx/5xx/net", right=True),
    Column("robots", "robots.txt", long=True),
    Column("delay", "delay", _seconds, right=True),
    Column("queued", "queued", right=True),
    Column("budget", "scouted/budget", right=True),
    Column("last_error", "last error", long=True),
    Column("stats_written", "crawler's, as of", written_ago),
]


def _row(host: dict[str, Any]) -> dict[str, Any]:
    """A host's fields, with the composite cells the table shows."""
    return {
        **host,
        "answers": "/".join(str(host[name]) for name in ANSWERS),
        "robots": _robots(host),
        "budget": _budget(host),
        "last_error": host["last_error"],
    }


def detail(host: dict[str, Any]) -> str:
    """One host as labelled lines: the database's figures, then the crawler's with their age."""
    written = host["stats_written"]
    crawler = (
        "never reported (no daemon has crawled this host since the report exists)"
        if written is None
        else f"snapshot {written_ago(written)} (simulated {when(host['stats_at'])})"
    )
    robots_read = None
    if written is not None and host["robots_age"] is not None:
        robots_read = ago(time.time() - written + host["robots_age"]) + " ago"
    crawl_delay = host["crawl_delay"]
    lines = [
        ("host", host["host"]),
        ("pages", f"{host['pages']} known, {host['read']} read, {host['unread']} never read"),
        ("bytes", f"{size(host['bytes'])} (each page's last read body)"),
        (
            "fetches",
            f"2xx {host['status_2xx']}  3xx {host['status_3xx']}  4xx {host['status_4xx']}  "
            f"5xx {host['status_5xx']}  network {host['network_errors']}  "
            f"robots.txt refused {host['robots_refused']}",
        ),
        ("failed", f"{host['errors']} error, {host['dead']} dead"),
        ("last fetch", when(host["last_fetch"])),
        (
            "last error",
            NONE
            if host["last_error"] is None
            else f"{_last_error(host)} at {host['last_error_url']}",
        ),
        ("crawler", crawler),
        (
            "robots.txt",
            _robots(host)
            + ("" if robots_read is None else f", read {robots_read}")
            + ("" if crawl_delay is None else f", Crawl-delay {crawl_delay:g} s"),
        ),
        ("delay", _seconds(host["delay"]) + " between requests"),
        (
            "queue",
            f"{dash(host['queued'])} waiting, {dash(host['in_flight'])} in flight"
            + (f", backed off {host['backoff']:g} s more" if host["backoff"] else ""),
        ),
        ("budget", f"{_budget(host)} pages scouted this run"),
    ]
    return "\n".join(f"{label:<13} {text}" for label, text in lines) + "\n"


@cli.command("hosts")
@click.argument("host", required=False)
@click.option(
    "--sort",
    type=click.Choice(sorted(SORTS)),
    default="pages",
    show_default=True,
    help="Order of the hosts (most first, or by name).",
)
@listing_options()
@click.pass_context
def hosts(
    ctx: click.Context, host: str | None, sort: str, limit: int, fmt: str | None, wide: bool
) -> None:
    """Per host: pages read, bytes, status codes, robots.txt, delay, queue, budget, last error.

    HOST (a name, or scheme://host[:port]) shows that host in detail. Page figures are read
    from the database now; the crawler's (robots.txt, delay, queue, budget) come from the
    daemon's last checkpoint and say how old they are. Example: `xyleme hosts --sort errors`.
    """
    from metadata import HOST_FIELDS, host_report
    from xyleme.cli.ops import open_metadata

    with open_metadata(repo_path(ctx), readonly=True) as md:
        report = host_report(md, host)
    if host is not None and not report:
        raise click.ClickException(f"no host {host!r} in the repository")
    report.sort(key=SORTS[sort])
    shown = report[: shown_limit(limit)]
    if host is not None and fmt is None:
        click.echo("\n".join(detail(facts) for facts in shown), nl=False)
        return
    rows = shown if fmt else [_row(facts) for facts in shown]
    emit(rows, COLUMNS, fmt, fields=HOST_FIELDS, total=len(report), wide=wide, noun="hosts")
