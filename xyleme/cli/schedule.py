"""``xyleme schedule``: when each page will be read again, why, and the repository's figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import numpy as np

from metadata import Metadata
from refresh.report import ScheduleReport
from refresh.settings import RefreshSettings
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import repository_errors
from xyleme.cli.listing import NONE, Column, emit, listing_options, shown_limit, when
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


def summary_lines(report: ScheduleReport) -> list[str]:
    """The repository's figures (G, θ, S, K, Ω, this unit's work) as sentences."""
    summary = report.summary()
    unit_h = report.settings.time_unit_s / 3600
    return [
        f"now {when(report.now)}; time unit {unit_h:g} h; G = {summary['bandwidth_G']:,.0f} "
        f"pages/unit, θ = {summary['discovery_share_theta']:.0%}, "
        f"G_r = {summary['refresh_bandwidth_Gr']:,.0f}",
        f"S = {summary['S']:.6g}, K = {summary['K']:.6g} units, "
        f"Ω = {summary['omega']:.6g} (S²/(2·G_r) = {summary['omega_without_floor']:.6g}); "
        f"{summary['refreshed_pages']:,} of {summary['pages']:,} pages refreshed, "
        f"{summary['pages_at_floor']:,} at the one-unit floor",
        f"this unit: {summary['due_now']:,} refreshes, {summary['retries_now']:,} retries, "
        f"{summary['discovery_now']:,} discoveries, {summary['background_now']:,} re-checks",
        "refreshes per unit, next units: "
        + ", ".join(f"{count:,}" for count in summary["due_per_unit"]),
    ]


def _units(value: float | None) -> str:
    return NONE if value is None else f"{value:.3g}"


PAGE_COLUMNS = [
    Column("url", "URL", long=True),
    Column("type", "type"),
    Column("next_refresh", "next refresh", lambda at: when(at, "not planned")),
    Column("in_units", "in", _units, right=True),
    Column("interval_units", "interval", _units, right=True),
    Column("change_rate_per_unit", "λ/unit", _units, right=True),
    Column("method", "method"),
    Column("r", "r", _units, right=True),
]


@cli.command("schedule")
@click.option(
    "--units",
    default=7,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="How many time units ahead to count the refreshes.",
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
@click.option(
    "--summary",
    is_flag=True,
    help="Print the repository's figures only (G, θ, S, K, Ω, refreshes due per unit); "
    "one JSON object with --json.",
)
@listing_options(deprecated=("--top",))
@click.pass_context
def schedule(
    ctx: click.Context,
    units: int,
    url: str | None,
    now: float | None,
    summary: bool,
    limit: int,
    fmt: str | None,
    wide: bool,
) -> None:
    """Show the refresh schedule: per page the next refresh, interval, λ and r, soonest
    first; for the repository G, θ, S, K, Ω and the refreshes due per time unit (paper §6).

    ``--json`` rows have the fields of ``/api/schedule``'s pages; ``--summary --json`` gives
    the repository's figures as one object."""
    if summary and fmt == "csv":
        raise click.UsageError("--summary is one object: --json or a table, not --csv")
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
    if summary:
        text = summary_lines(report)
        click.echo(json.dumps(report.summary(), indent=2) if fmt == "json" else "\n".join(text))
        return
    if wanted is not None:
        rows = np.flatnonzero(report.ids == wanted)
    else:
        soonest = np.where(np.isfinite(report.next_refresh), report.next_refresh, np.inf)
        rows = np.argsort(soonest, kind="stable")[: shown_limit(limit)]
    pages = page_rows(report, rows, [urls[row] for row in rows.tolist()])
    if fmt is None:
        click.echo("\n".join(summary_lines(report)))
    total = 1 if wanted is not None else len(report.ids)
    emit(pages, PAGE_COLUMNS, fmt, fields=PAGE_FIELDS, total=total, wide=wide, noun="pages")
