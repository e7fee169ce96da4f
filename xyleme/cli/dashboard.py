"""``xyleme dashboard``: serve a repository's dashboard and JSON API on its own, read-only."""

from __future__ import annotations

import asyncio
import ipaddress
import signal
from collections.abc import Callable
from pathlib import Path

import click
from aiohttp import web

from metadata import MetadataError
from xyleme import commands
from xyleme.cli import cli, repo_path
from xyleme.cli.ops import run_state_command
from xyleme.dashboard import create_app, serving

TOKEN_VARIABLE = "XYLEME_DASHBOARD_TOKEN"


class RepositoryActions:
    """The admin actions of a standalone dashboard, on the path of ``xyleme pause`` and
    ``xyleme seed add``: run on the repository when no daemon holds it, else handed to the
    daemon through its command table (each in a thread: the daemon may take seconds)."""

    def __init__(self, repository: Path) -> None:
        self.repository = repository

    async def set_paused(self, paused: bool) -> commands.Answer:
        return await self._run("pause" if paused else "resume", {})

    async def add_seeds(self, urls: list[str]) -> commands.Answer:
        return await self._run("seed add", {"urls": urls})

    async def _run(self, name: str, args: dict) -> commands.Answer:
        try:
            return await asyncio.to_thread(run_state_command, self.repository, name, args)
        except click.ClickException as error:  # e.g. the daemon did not answer in time
            return commands.Answer(error.message, ok=False)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` as (host, port); the host must be an IP address (default loopback).

    >>> parse_address("127.0.0.1:8080")
    ('127.0.0.1', 8080)
    """
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise click.BadParameter(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:8080)")
    host = host.strip("[]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise click.BadParameter(f"{host!r} is not an IP address") from None
    return host, int(port)


def admin_options(command: Callable) -> Callable:
    """``--http-admin`` and ``--token``, as ``xyleme dashboard`` and ``xyleme run --http``
    take them (parameters ``admin`` and ``token``; check them with :func:`admin_token_of`)."""
    command = click.option(
        "--token",
        envvar=TOKEN_VARIABLE,
        help=f"The admin token (at least 8 characters; or ${TOKEN_VARIABLE}). Needs --http-admin.",
    )(command)
    return click.option(
        "--http-admin",
        "admin",
        is_flag=True,
        help="Let the dashboard pause, resume and add seeds for requests with the token.",
    )(command)


def admin_token_of(admin: bool, token: str | None) -> str | None:
    """The admin token when ``--http-admin`` is given with one; usage errors otherwise."""
    if admin and not token:
        raise click.UsageError(f"--http-admin needs --token (or ${TOKEN_VARIABLE})")
    if token and not admin:
        raise click.UsageError("--token is only used with --http-admin")
    return token if admin else None


@cli.command("dashboard")
@click.option(
    "--http",
    "address",
    default="127.0.0.1:8080",
    show_default=True,
    help="Address to serve on (HOST:PORT; port 0 picks a free one). Loopback by default.",
)
@admin_options
@click.pass_context
def dashboard(ctx: click.Context, address: str, admin: bool, token: str | None) -> None:
    """Serve the web dashboard and JSON API of the repository, read-only.

    Works while a daemon writes the repository: the metadata is opened read-only and every
    request reads the latest committed state. Views: Overview, Refresh schedule, Rankings,
    Page, Query; JSON under /api/; Prometheus figures at /metrics. Stop with Ctrl-C.
    """
    host, port = parse_address(address)
    admin_token = admin_token_of(admin, token)
    repo = repo_path(ctx)
    try:
        app = create_app(
            repo,
            admin_token=admin_token,
            actions=RepositoryActions(repo) if admin else None,
        )
    except (MetadataError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    mode = "admin actions with the token" if admin else "read-only"
    if not ipaddress.ip_address(host).is_loopback:
        click.echo(f"warning: serving on {host}, reachable from other machines", err=True)
    try:
        asyncio.run(_serve(app, host, port, f"dashboard of {repo} at {{url}} ({mode})"))
    except OSError as error:
        raise click.ClickException(f"cannot serve on {address}: {error.strerror}") from None


async def _serve(app: web.Application, host: str, port: int, banner: str) -> None:
    """Serve until SIGINT or SIGTERM; print the banner with the address bound (port 0)."""
    async with serving(app, host, port) as url:
        click.echo(banner.format(url=url) + "; Ctrl-C stops it")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
