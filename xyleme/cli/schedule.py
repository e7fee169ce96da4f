"""``xyleme schedule``: when each page will be read again, why, and the repository's figures."""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from metadata import Metadata
from refresh.report import ScheduleReport
from refresh.settings import RefreshSettings
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import repository_errors
from xyleme.cli.listing import when
from xyleme.cli.repository import CONFIG, DATABASE
from xyleme.config import ConfigError, load_config
from xyleme.jobs.schedule import read_schedule

PAGE_FIELDS = (
    "url_id",
    "url",
    "type",
    "next_refresh",
    "in_units",
    "interval_units",
    "change_rate_per_unit",
    "method",
    "r",
)


def load_settings(repo: Path) -> RefreshSettings:
    """The refresh settings of the repository's xyleme.toml: the ``[refresh]`` table, with the
    time unit, G and θ from ``[clock]`` and ``[bandwidth]`` (as the daemon reads them)."""
    try:
        return load_config(repo / CONFIG).refresh
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def page_rows(report: ScheduleReport, rows: np.ndarray, urls: list[str]) -> list[dict]:
    """One JSON-ready dict per selected page."""
    unit = report.settings.time_unit_s
    out = []
    for row, url in zip(rows.tolist(), urls, strict=True):
        next_refresh = float(report.next_refresh[row])
        interval = float(report.interval_units[row])
        out.append(
            {
                "url_id": int(report.ids[row]),
                "url": url,
                "type": str(report.page_type[row]),
                "next_refresh": next_refresh if math.isfinite(next_refresh) else None,
                "in_units": (
                    (next_refresh - report.now) / unit if math.isfinite(next_refresh) else None
                ),
                "interval_units": interval if math.isfinite(interval) else None,
                "change_rate_per_unit": float(report.change_rate[row]) * unit,
                "method": str(report.method[row]),
                "r": float(report.r[row]),
            }
        )
    return out


def print_text(report: ScheduleReport, pages: list[dict]) -> None:
    summary = report.summary()
    console = Console(width=max(Console().width, 120))
    unit_h = report.settings.time_unit_s / 3600
    console.print(
        f"now {when(report.now)}; time unit {unit_h:g} h; G = {summary['bandwidth_G']:,.0f} "
        f"pages/unit, θ = {summary['discovery_share_theta']:.0%}, "
        f"G_r = {summary['refresh_bandwidth_Gr']:,.0f}"
    )
    console.print(
        f"S = {summary['S']:.6g}, K = {summary['K']:.6g} units, "
        f"Ω = {summary['omega']:.6g} (S²/(2·G_r) = {summary['omega_without_floor']:.6g}); "
        f"{summary['refreshed_pages']:,} of {summary['pages']:,} pages refreshed, "
        f"{summary['pages_at_floor']:,} at the one-unit floor"
    )
    console.print(
        f"this unit: {summary['due_now']:,} refreshes, {summary['retries_now']:,} retries, "
        f"{summary['discovery_now']:,} discoveries, {summary['background_now']:,} re-checks"
    )
    console.print(
        "refreshes per unit, next units: "
        + ", ".join(f"{count:,}" for count in summary["due_per_unit"])
    )
    table = Table("url", "type", "next refresh", "in", "interval", "λ/unit", "method", "r")
    for page in pages:
        table.add_row(
            page["url"],
            page["type"],
            when(page["next_refresh"]),
            "-" if page["in_units"] is None else f"{page['in_units']:.3g}",
            "-" if page["interval_units"] is None else f"{page['interval_units']:.3g}",
            f"{page['change_rate_per_unit']:.3g}",
            page["method"],
            f"{page['r']:.3g}",
        )
    console.print(table)


@cli.command("schedule")
@click.option(
    "--units",
    default=7,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="How many time units ahead to count the refreshes.",
)
@click.option(
    "--top",
    default=50,
    show_default=True,
    type=click.IntRange(0),
    help="How many pages to list, soonest refresh first.",
)
@click.option("--url", default=None, help="Show this page (URL or URL-Id) only.")
@click.option(
    "--now",
    "now",
    type=float,
    default=None,
    help="Simulated time in seconds since the epoch [default: the repository's clock: the "
    "simulated time its daemon reached, wall-clock time for a real-time repository, else the "
    "latest time the repository recorded].",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the pages as CSV.")
@click.pass_context
def schedule(
    ctx: click.Context,
    units: int,
    top: int,
    url: str | None,
    now: float | None,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Show the refresh schedule: per page the next refresh, interval, λ and r; for the
    repository G, θ, S, K, Ω and the refreshes due per time unit (paper §6)."""
    if as_json and as_csv:
        raise click.UsageError("--json and --csv exclude each other")
    repo = repo_path(ctx)
    settings = load_settings(repo)
    path = repo / DATABASE
    with repository_errors(path), Metadata.open(path, readonly=True) as md:
        wanted = None
        if url is not None:
            record = md.page(int(url)) if url.isdigit() else md.page_by_url(url)
            wanted = record.url_id
        schedule = read_schedule(md, settings, now=now, units=units)
    report, urls = schedule.report, schedule.urls
    if wanted is not None:
        rows = np.flatnonzero(report.ids == wanted)
    else:
        soonest = np.where(np.isfinite(report.next_refresh), report.next_refresh, np.inf)
        rows = np.argsort(soonest, kind="stable")[:top]
    pages = page_rows(report, rows, [urls[row] for row in rows.tolist()])

    if as_json:
        click.echo(json.dumps({"repository": report.summary(), "pages": pages}, indent=2))
    elif as_csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=PAGE_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(pages)
    else:
        print_text(report, pages)
