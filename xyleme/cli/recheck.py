"""``xyleme recheck``: test the repository's pages for liveness in LiveRank order.

With no daemon holding the repository, the command holds it and runs the re-check engine
(:func:`xyleme.jobs.recheck.recheck`) on its snapshot with the crawler's probe
(:class:`xyleme.crawler.probe.CrawlerProbe`): each verdict is recorded in the metadata (DEAD
with its reason, live pages re-typed or re-read), progress is printed as it goes (a rich
progress bar on a terminal, plain lines otherwise), then a summary. When a daemon holds it,
the command is handed over (:mod:`xyleme.commands`): the daemon starts the same re-check as a
background task on its own crawler and answers at once
(:class:`xyleme.jobs.recheck_task.RecheckTask`).
"""

from __future__ import annotations

import asyncio
import json
import sys

import click

from metadata import Metadata
from ranking.liverank import LiveRankError, LiveRankSettings
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import repository_errors, settings_errors
from xyleme.cli.ops import effective_config, hand_to_daemon, holding, report
from xyleme.cli.params import liverank_options
from xyleme.cli.repository import DATABASE
from xyleme.commands import stored_seeds
from xyleme.crawler import CrawlerSettings, Scope
from xyleme.crawler.probe import METHODS, CrawlerProbe
from xyleme.jobs.recheck import RecheckProgress, RecheckReport, recheck
from xyleme.jobs.recheck_request import (
    NothingToRecheck,
    RecheckRequest,
    prepare,
    progress_line,
    summary,
    summary_text,
)
from xyleme.scope_config import repository_scope


@cli.command("recheck")
@liverank_options
@click.option("--budget", type=click.IntRange(min=0), default=None, help="Fetch at most N pages.")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="head",
    show_default=True,
    help="HEAD is cheap; only GET sees soft 404s (200 with a 'not found' page).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=16,
    show_default=True,
    help="Probes in flight.",
)
@click.option(
    "--per-host",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="In flight per host (direct run; a daemon uses its [crawler]).",
)
@click.option(
    "--delay",
    type=click.FloatRange(0),
    default=1.0,
    show_default=True,
    help="Seconds between requests to a host (direct run; a daemon uses its [crawler]).",
)
@click.option(
    "--simweb-port",
    type=click.IntRange(1, 65535),
    help="Resolve *.simweb.test to a simulated web on 127.0.0.1:PORT (direct run).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary (or the daemon's answer) as one JSON object.",
)
@click.pass_context
def recheck_command(
    ctx: click.Context,
    strategy: str,
    sample: float,
    sample_kind: str,
    seed: int,
    budget: int | None,
    method: str,
    concurrency: int,
    per_host: int,
    delay: float,
    simweb_port: int | None,
    as_json: bool,
) -> None:
    """Re-check the repository's pages, live ones first (LiveRank), marking the dead DEAD.

    Prints as it goes the fraction of pages found alive against fetches spent. While a daemon
    holds the repository, the daemon runs the re-check in the background on its own crawler
    and answers at once; `xyleme status` then shows its progress.
    """
    request = RecheckRequest(strategy, sample, sample_kind, seed, budget, method, concurrency)
    try:
        with settings_errors(LiveRankSettings):
            request.liverank_settings()
    except (LiveRankError, ValueError) as error:
        raise click.BadParameter(str(error)) from None
    repository = repo_path(ctx)
    with holding(repository) as held:
        if not held:
            report(hand_to_daemon(repository, "recheck", request.as_args()), as_json)
            return
        with settings_errors(CrawlerSettings):
            crawler_settings = CrawlerSettings(
                concurrency=concurrency, per_host_concurrency=per_host, min_delay=delay
            )
        figures = _run_directly(
            repository / DATABASE, request, crawler_settings, simweb_port, quiet=as_json
        )
    click.echo(json.dumps(figures) if as_json else summary_text(figures))


def _run_directly(path, request, crawler_settings, simweb_port, *, quiet: bool) -> dict:
    """The re-check in this process; its summary (every verdict is in the metadata)."""
    with repository_errors(path), Metadata.open(path) as md:
        try:
            session, url_ids = prepare(md, request)
        except NothingToRecheck as error:
            raise click.ClickException(str(error)) from None
        # The repository's scope: a re-check fetches nothing the crawl may not.
        scope = repository_scope(effective_config(path.parent, None), stored_seeds(md))
        resolver = None
        if simweb_port is not None:
            from xyleme.simweb import SimWebResolver  # the CLI may import the simulated web

            resolver = SimWebResolver(simweb_port)
            scope = Scope([*scope.rules, "net:127.0.0.1/32"])  # where the simulated web is
        probe = CrawlerProbe(  # on the repository's clock (Metadata.repository_clock)
            md, crawler_settings, scope, clock=md.clock, resolver=resolver, method=request.method
        )
        report_ = asyncio.run(
            _run(session, url_ids, probe, request.budget, request.concurrency, quiet=quiet)
        )
    return summary(request, report_, probe.fetches)


async def _run(session, url_ids, probe, budget, concurrency, *, quiet: bool) -> RecheckReport:
    total = session.n_pages if budget is None else min(budget, session.n_pages)
    async with probe:
        if quiet:
            return await recheck(session, url_ids, probe, budget=budget, concurrency=concurrency)
        if sys.stdout.isatty():
            return await _with_bar(session, url_ids, probe, budget, concurrency, total)
        step = max(1, total // 20)

        def print_line(progress: RecheckProgress) -> None:
            if progress.fetches % step == 0 or progress.fetches == total:
                click.echo(progress_line(progress))

        return await recheck(
            session,
            url_ids,
            probe,
            budget=budget,
            concurrency=concurrency,
            on_progress=print_line,
        )


async def _with_bar(session, url_ids, probe, budget, concurrency, total) -> RecheckReport:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (
        TextColumn("re-check"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[line]}"),
    )
    with Progress(*columns) as bar:
        task = bar.add_task("recheck", total=total, line="")

        def advance(progress: RecheckProgress) -> None:
            bar.update(task, completed=progress.fetches, line=progress_line(progress))

        return await recheck(
            session, url_ids, probe, budget=budget, concurrency=concurrency, on_progress=advance
        )
