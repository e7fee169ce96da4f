"""``xyleme run``: the acquisition daemon in the foreground (systemd, a container, a terminal)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from metadata import MetadataError
from xyleme.cli import cli, repo_path
from xyleme.cli.dashboard import admin_options, admin_token_of, parse_address
from xyleme.cli.errors import InputError
from xyleme.cli.ops import config_option, effective_config
from xyleme.daemon import Daemon, DaemonStopped, run_daemon
from xyleme.dashboard import run_with_dashboard
from xyleme.lock import RepositoryLocked
from xyleme.logs import FORMATS, configure_logging


@cli.command("run")
@config_option
@click.option(
    "--log-format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Log lines on stderr for people (text) or machines (json).",
)
@click.option(
    "--simweb-port",
    "simweb_port",
    type=click.IntRange(1, 65535),
    help="Resolve *.simweb.test to the simulated web serving on 127.0.0.1:PORT "
    "(`xyleme simweb serve`; for tests and demos).",
)
@click.option(
    "--http",
    "address",
    default=None,
    help="Also serve the dashboard and JSON API on HOST:PORT (e.g. 127.0.0.1:8080).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=None,
    help="Run N crawl worker processes and a coordinator instead of one daemon process "
    "(a PostgreSQL store only; docs/scaleout.md).",
)
@admin_options
@click.pass_context
def run(
    ctx: click.Context,
    config_file: Path | None,
    log_format: str,
    simweb_port: int | None,
    address: str | None,
    workers: int | None,
    admin: bool,
    token: str | None,
) -> None:
    """Run the daemon that keeps the repository fresh, until SIGTERM or Ctrl-C.

    Refuses to start on a wrong configuration (naming the key), on a folder that is not a
    repository, and when another daemon holds the repository.
    """
    if workers is not None:
        if address is not None:
            raise InputError(
                "--http serves one daemon process: with --workers serve the dashboard with "
                "`xyleme dashboard` (it shows the workers)"
            )
        from xyleme.cli.workers import run_workers  # the supervisor: no daemon in this process

        run_workers(ctx, workers, config_file, log_format, simweb_port)
        return
    repository = repo_path(ctx)
    http = None if address is None else parse_address(address)
    admin_token = admin_token_of(admin, token)
    config = effective_config(repository, config_file)
    configure_logging(log_format)
    resolver = None
    if simweb_port is not None:
        from xyleme.simweb import SimWebResolver  # only then: the daemon never needs simweb

        resolver = SimWebResolver(simweb_port)
    try:
        if http is None:
            run_daemon(repository, config, resolver=resolver)
        else:
            daemon = Daemon(repository, config, resolver=resolver)

            def announce(url: str) -> None:
                click.echo(f"dashboard at {url}", err=True)

            asyncio.run(
                run_with_dashboard(daemon, *http, admin_token=admin_token, announce=announce)
            )
    except (RepositoryLocked, MetadataError, DaemonStopped, ValueError) as error:
        raise click.ClickException(str(error)) from None
    except FileNotFoundError as error:
        raise click.ClickException(f"{repository} is not a xyleme repository ({error})") from None
