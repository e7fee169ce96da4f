"""``xyleme demo``: the whole system on the simulated web, unattended, in a few minutes."""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
from pathlib import Path

import click
from rich.console import Console
from rich.live import Live

from xyleme.cli import cli
from xyleme.cli.dashboard import parse_address
from xyleme.cli.repository import create_repository
from xyleme.demo import choose_plan, measure_capacity, run_demo, summary, web_settings
from xyleme.logs import configure_logging
from xyleme.progress import live_panel, plain_line
from xyleme.simweb import GroundTruth, SimWeb, SimWebProcessError


@cli.command("demo")
@click.option(
    "--days",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Simulated days to run the daemon for.",
)
@click.option(
    "--pages",
    type=click.IntRange(min=50),
    default=20_000,
    show_default=True,
    help="Pages of the simulated web.",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=1.0, min_open=False),
    default=None,
    help="Simulated seconds per real second  [default: chosen from the crawler's "
    "measured capacity so the web is read in the first days, at most 86400].",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Repository folder to create  [default: a new temporary folder].",
)
@click.option(
    "--http",
    "address",
    default="127.0.0.1:0",
    show_default=True,
    help="Serve the dashboard on HOST:PORT while the demo runs (port 0: a free one).",
)
def demo(
    days: float, pages: int, speed: float | None, directory: Path | None, address: str
) -> None:
    """Crawl, load, rank and refresh a simulated web with the daemon, on accelerated time.

    Shows a live view on a terminal (plain lines otherwise), ends after --days simulated
    days or on Ctrl-C with a summary, and leaves the repository to explore.
    """
    http = parse_address(address)
    repository = directory or Path(tempfile.mkdtemp(prefix="xyleme-demo-")) / "repo"
    create_repository(repository)
    terminal = sys.stdout.isatty()
    configure_logging("text", logging.WARNING if terminal else logging.INFO)
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
    except SimWebProcessError as error:
        raise click.ClickException(str(error)) from None
    plan = choose_plan(settings.pages, settings.hosts, days, capacity, speed)
    click.echo(plan.describe())
    if terminal:
        console = Console()
        with Live(console=console, auto_refresh=False) as live:

            def show(facts: dict) -> None:
                live.update(live_panel(facts), refresh=True)

            def announce(url: str) -> None:
                live.console.print(f"dashboard at {url}")

            end, policy = asyncio.run(
                run_demo(plan, settings, repository, show, 0.25, http, announce)
            )
    else:
        end, policy = asyncio.run(
            run_demo(plan, settings, repository, _plain_printer(), 1.0, http, _echo_address)
        )
    click.echo(summary(repository, plan, GroundTruth(SimWeb(settings)), end, policy))


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
