"""``xyleme demo``: the whole system on the simulated web, unattended, in about two minutes."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.live import Live

from xyleme.cli import cli
from xyleme.cli.dashboard import parse_address
from xyleme.cli.repository import create_repository
from xyleme.demo import (
    DAY,
    DemoFolderError,
    choose_plan,
    mark_done,
    measure_capacity,
    prepare_folder,
    run_demo,
    web_settings,
)
from xyleme.demo_report import summary, write_plots
from xyleme.logs import configure_logging
from xyleme.progress import live_panel, plain_line
from xyleme.simweb import GroundTruth, SimWeb, SimWebProcessError


@cli.command("demo")
@click.option(
    "--days",
    type=click.FloatRange(min=0.1),
    default=18.0,
    show_default=True,
    help="Simulated days to run the daemon for.",
)
@click.option(
    "--pages",
    type=click.IntRange(min=50),
    default=2_000,
    show_default=True,
    help="Pages of the simulated web.",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=1.0, min_open=False),
    default=None,
    help="Simulated seconds per real second  [default: chosen from the crawler's "
    "measured capacity so that it refreshes every page about every 2 days, at most 86400].",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Repository folder to create: new or empty  [default: a new temporary folder].",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Delete what an earlier (finished, failed or interrupted) demo left in --dir and "
    "start over.",
)
@click.option(
    "--http",
    "address",
    default="127.0.0.1:0",
    show_default=True,
    help="Serve the dashboard on HOST:PORT while the demo runs (port 0: a free one).",
)
def demo(
    days: float,
    pages: int,
    speed: float | None,
    directory: Path | None,
    fresh: bool,
    address: str,
) -> None:
    """Crawl, load, rank and refresh a simulated web with the daemon, on accelerated time.

    Shows a live view on a terminal (plain lines otherwise), ends after --days simulated
    days or on Ctrl-C with a summary and plots, and leaves the repository to explore. A
    --dir an earlier demo left is refused, or started over with --fresh.
    """
    http = parse_address(address)
    try:
        repository = prepare_folder(directory, fresh)
    except (DemoFolderError, OSError) as error:
        raise click.BadParameter(str(error), param_hint="--dir") from None
    create_repository(repository)
    try:
        finished = _run(repository, days, pages, speed, http)
    except SimWebProcessError as error:  # the simulated web did not start
        mark_done(repository, "failed")
        raise click.ClickException(str(error)) from None
    except BaseException as error:
        interrupted = isinstance(error, KeyboardInterrupt | click.Abort)
        mark_done(repository, "interrupted" if interrupted else "failed")
        raise
    mark_done(repository, "done" if finished else "interrupted")


def _run(
    repository: Path, days: float, pages: int, speed: float | None, http: tuple[str, int]
) -> bool:
    """Calibrate, plan, run, report: the demo in a folder of its own. Whether the run went
    its whole length (not stopped early by Ctrl-C, which still ends with the summary)."""
    terminal = sys.stdout.isatty()
    configure_logging("text", logging.WARNING if terminal else logging.INFO)
    # the simulated web has malformed documents on purpose: one line each would drown the rest
    logging.getLogger("xyleme.crawler.writer").setLevel(logging.WARNING)
    settings = web_settings(pages)
    click.echo(
        f"xyleme demo: a simulated web of {settings.pages} pages on {settings.hosts} hosts, "
        f"repository {repository}"
    )
    click.echo("measuring the crawler's capacity on a frozen copy of the web ...")
    try:
        capacity = asyncio.run(measure_capacity(settings))
    except KeyboardInterrupt:
        raise click.Abort() from None
    plan = choose_plan(settings.pages, settings.hosts, days, capacity, speed)
    click.echo(plan.describe())
    if terminal:
        console = Console()
        with Live(console=console, auto_refresh=False) as live:

            def show(facts: dict) -> None:
                live.update(live_panel(facts), refresh=True)

            def announce(url: str) -> None:
                live.console.print(f"dashboard at {url}")

            run = asyncio.run(run_demo(plan, settings, repository, show, 0.25, http, announce))
    else:
        run = asyncio.run(
            run_demo(plan, settings, repository, _plain_printer(), 1.0, http, _echo_address)
        )
    write_plots(repository, plan, run)
    click.echo(summary(repository, plan, GroundTruth(SimWeb(settings)), run))
    return run.end >= run.start + days * DAY


def _echo_address(url: str) -> None:
    click.echo(f"dashboard at {url}")


def _plain_printer():
    """A ``show`` that prints a line at most once per simulated day (and the first one)."""
    last_day = [-1]

    def show(facts: dict) -> None:
        if int(facts["day"]) != last_day[0]:
            last_day[0] = int(facts["day"])
            click.echo(plain_line(facts))

    return show
