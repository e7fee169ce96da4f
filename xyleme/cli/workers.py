"""``xyleme worker`` and ``xyleme coordinator``: the processes of a crawl shared by several
workers over one PostgreSQL store (docs/scaleout.md); ``xyleme run --workers N`` starts
them on one machine (:mod:`xyleme.supervisor`)."""

from __future__ import annotations

import logging
import os
from functools import partial
from pathlib import Path

import click

from metadata import Metadata, MetadataError, target_of
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import InputError
from xyleme.cli.ops import config_option, effective_config
from xyleme.cli.reading import DATABASE, has_metadata
from xyleme.lock import SUPERVISOR_LOCK_FILE, DaemonLock, RepositoryLocked
from xyleme.logs import FORMATS, configure_logging

log = logging.getLogger(__name__)


log_format_option = click.option(
    "--log-format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Log lines on stderr for people (text) or machines (json).",
)
simweb_option = click.option(
    "--simweb-port",
    "simweb_port",
    type=click.IntRange(1, 65535),
    help="Resolve *.simweb.test to the simulated web serving on 127.0.0.1:PORT "
    "(`xyleme simweb serve`; for tests and demos).",
)
lease_option = click.option(
    "--lease",
    "lease_s",
    type=click.FloatRange(0.1, 86_400.0),
    default=300.0,
    show_default=True,
    help="Seconds a claim on a page lasts unless renewed: how long a killed worker's hosts "
    "wait before another start of its part claims them again.",
)
batch_option = click.option(
    "--batch",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Due pages claimed at once (more is claimed when fewer than half are left).",
)


def require_postgres(repository: Path, what: str) -> None:
    """A clear error (exit 2) when the repository's store is SQLite: several processes
    share a PostgreSQL store only."""
    if not has_metadata(repository):
        raise click.ClickException(f"{repository} is not a xyleme repository (`xyleme init`)")
    try:
        sqlite = target_of(repository / DATABASE).path is not None
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    if sqlite:
        raise InputError(
            f"{what} needs a PostgreSQL store, and {repository} keeps its metadata in SQLite "
            "(one write lock: workers would wait on each other). Create the repository with "
            "`xyleme init --db postgresql://…` (docs/scaleout.md), or run `xyleme run` "
            "without --workers"
        )


def resolver_of(simweb_port: int | None) -> object | None:
    if simweb_port is None:
        return None
    from xyleme.simweb import SimWebResolver  # only then: a worker never needs simweb

    return SimWebResolver(simweb_port)


@cli.command("worker")
@click.option(
    "--part",
    "part_text",
    required=True,
    metavar="I/N",
    help="Crawl part I of N: the hosts whose stable hash is I modulo N (0 ≤ I < N).",
)
@lease_option
@batch_option
@click.option(
    "--heartbeat",
    "heartbeat_s",
    type=click.FloatRange(0.1, 3600.0),
    default=2.0,
    show_default=True,
    help="Seconds between two heartbeats (row, leases renewed, hosts' facts).",
)
@config_option
@log_format_option
@simweb_option
@click.pass_context
def worker(
    ctx: click.Context,
    part_text: str,
    lease_s: float,
    batch: int,
    heartbeat_s: float,
    config_file: Path | None,
    log_format: str,
    simweb_port: int | None,
) -> None:
    """Run one crawl worker of a shared store until SIGTERM: it claims the due pages of
    its part of the hosts, fetches, loads and writes them."""
    from xyleme.worker import WorkerSettings, parse_part, run_worker

    try:
        part, parts = parse_part(part_text)
    except ValueError as error:
        raise InputError(str(error)) from None
    repository = repo_path(ctx)
    require_postgres(repository, "xyleme worker")
    config = effective_config(repository, config_file)
    configure_logging(log_format)
    settings = WorkerSettings(part, parts, batch=batch, lease_s=lease_s, heartbeat_s=heartbeat_s)
    run_process(
        repository,
        lambda: run_worker(repository, config, settings, resolver=resolver_of(simweb_port)),
    )


@cli.command("coordinator")
@config_option
@log_format_option
@click.pass_context
def coordinator(ctx: click.Context, config_file: Path | None, log_format: str) -> None:
    """Run the coordinator of a shared store until SIGTERM: the refresh and ranking passes,
    elected by a PostgreSQL advisory lock (a second one waits, and takes over)."""
    from xyleme.coordinator import run_coordinator

    repository = repo_path(ctx)
    require_postgres(repository, "xyleme coordinator")
    config = effective_config(repository, config_file)
    configure_logging(log_format)
    run_process(repository, lambda: run_coordinator(repository, config))


def run_process(repository: Path, run: object) -> None:
    """Run a worker or coordinator, its expected failures one line (exit 1)."""
    from xyleme.scope_config import NoSeedInScope
    from xyleme.stopping import DaemonStopped

    try:
        run()
    except (MetadataError, DaemonStopped, NoSeedInScope, ValueError) as error:
        raise click.ClickException(str(error)) from None
    except FileNotFoundError as error:
        raise click.ClickException(f"{repository} is not a xyleme repository ({error})") from None


def run_workers(
    ctx: click.Context,
    workers: int,
    config_file: Path | None,
    log_format: str,
    simweb_port: int | None,
) -> None:
    """``xyleme run --workers N``: N workers and a coordinator here, restarted when they die."""
    from xyleme.supervisor import Supervisor, SupervisorFailed, child_commands

    repository = repo_path(ctx)
    require_postgres(repository, "xyleme run --workers")
    config = effective_config(repository, config_file)  # a wrong one is refused before any start
    configure_logging(log_format)
    common = ["--log-format", log_format]
    if config_file is not None:
        common += ["--config", str(config_file)]
    worker_options = [*common] + (
        [] if simweb_port is None else ["--simweb-port", str(simweb_port)]
    )
    lock = DaemonLock(repository, SUPERVISOR_LOCK_FILE)
    try:
        lock.acquire()
    except RepositoryLocked as error:
        raise click.ClickException(
            f"xyleme run --workers already runs on {repository} "
            f"({f'process {error.pid}' if error.pid else 'another process'}): "
            "`xyleme stop` stops it"
        ) from None
    try:
        with Metadata.open(repository / DATABASE, settings=config.metadata) as md:
            supervisor = Supervisor(
                child_commands(repository, workers, worker_options, common),
                stop_requested=partial(stop_asked, md),
            )
            supervisor.run()
    except SupervisorFailed as error:
        raise click.ClickException(str(error)) from None
    finally:
        lock.release()


def stop_asked(md: Metadata) -> bool:
    """Whether ``xyleme stop`` asked the supervisor to stop (the request answered); a store
    that does not answer is logged and asked again at the next poll."""
    from xyleme import commands

    try:
        taken = commands.take_pending(md, only="stop")
    except MetadataError as error:
        log.warning("could not read the command table: %s", error)
        return False
    for command_id, _, _ in taken:
        pid = os.getpid()
        reply = commands.Answer(f"workers' supervisor (pid {pid}) stopping", {"pid": pid})
        commands.answer(md, command_id, reply)
    return bool(taken)
