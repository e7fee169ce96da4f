"""``xyleme recheck-direct``: test the repository's pages for liveness in LiveRank order.

(``xyleme recheck``, the daemon's command, queues a static ordering for the daemon to fetch;
this one runs the whole re-check itself, with every strategy, and refuses to run while a
daemon holds the repository.)

Runs the re-check engine (:func:`refresh.recheck.recheck`) on the repository's snapshot with
the crawler's probe (:class:`xyleme.crawler.probe.CrawlerProbe`): each verdict is recorded in
the metadata (DEAD with its reason, live pages re-typed or re-read), progress is printed as
it goes (a rich progress bar on a terminal, plain lines otherwise), then a summary.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections import Counter

import click

from metadata import Metadata, MetadataError
from ranking.liverank import LiveRankSettings, make_liverank
from ranking.liverank_errors import LiveRankError
from ranking.liverank_repository import load_snapshot
from ranking.liverank_settings import SAMPLE_KINDS, STRATEGIES
from refresh.recheck import RecheckProgress, RecheckReport, Verdict, recheck
from xyleme.cli import cli, repo_path
from xyleme.cli.repository import DATABASE
from xyleme.crawler import CrawlerSettings, Scope
from xyleme.crawler.probe import METHODS, CrawlerProbe
from xyleme.lock import holder_pid


@cli.command("recheck-direct")
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="pa_pm",
    show_default=True,
    help="The LiveRank ordering (as for `xyleme liverank`).",
)
@click.option(
    "--sample",
    type=float,
    default=0.01,
    show_default=True,
    help="Sample size z: a fraction of the pages below 1, a page count otherwise.",
)
@click.option("--sample-kind", type=click.Choice(SAMPLE_KINDS), default="random", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds R and the sample.")
@click.option("--budget", type=click.IntRange(min=0), default=None, help="Fetch at most N pages.")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="head",
    show_default=True,
    help="HEAD is cheap; only GET sees soft 404s (200 with a 'not found' page).",
)
@click.option(
    "--concurrency", type=click.IntRange(1), default=16, show_default=True, help="In flight."
)
@click.option(
    "--per-host", type=click.IntRange(1), default=1, show_default=True, help="In flight per host."
)
@click.option(
    "--delay", type=click.FloatRange(0), default=1.0, show_default=True, help="Seconds per host."
)
@click.option(
    "--simweb-port",
    type=click.IntRange(1, 65535),
    help="Resolve *.simweb.test to a simulated web on 127.0.0.1:PORT.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
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

    Prints as it goes the fraction of pages found alive against fetches spent.
    """
    try:
        settings = LiveRankSettings(
            strategy=strategy, sample=sample, sample_kind=sample_kind, seed=seed
        )
    except (LiveRankError, ValueError) as error:
        raise click.BadParameter(str(error)) from None
    crawler_settings = CrawlerSettings(
        concurrency=concurrency, per_host_concurrency=per_host, min_delay=delay
    )
    repository = repo_path(ctx)
    if holder_pid(repository) is not None:
        raise click.ClickException(
            "a daemon holds this repository: stop it first (or use `xyleme recheck`, "
            "which hands a static ordering to it)"
        )
    path = repository / DATABASE
    try:
        with Metadata.open(path) as md:
            snapshot = load_snapshot(md)
            if not snapshot.graph.n_pages:
                raise click.ClickException("no page has been read yet: nothing to re-check")
            session = make_liverank(snapshot.graph, settings)
            resolver = None
            if simweb_port is not None:
                from xyleme.simweb import SimWebResolver  # the CLI may import the simulated web

                resolver = SimWebResolver(simweb_port)
            probe = CrawlerProbe(md, crawler_settings, Scope(), resolver=resolver, method=method)
            report = asyncio.run(
                _run(session, snapshot.url_ids, probe, budget, concurrency, quiet=as_json)
            )
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    except sqlite3.DatabaseError as error:
        raise click.ClickException(f"{path}: unreadable database ({error})") from None
    summary = _summary(strategy, method, report, probe.fetches)
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(
        f"{strategy}: {summary['fetches']} of {summary['pages']} pages tested "
        f"({summary['requests']} HTTP requests): {summary['alive']} alive, "
        f"{summary['dead']} dead, {summary['unknown']} unknown; "
        f"fraction alive {summary['fraction_alive']:.3f}"
        + ("" if summary["complete"] else " (budget spent)")
    )
    for reason, count in summary["dead_reasons"].items():
        click.echo(f"  dead: {count:6d}  {reason}")


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
                click.echo(_line(progress))

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
            bar.update(task, completed=progress.fetches, line=_line(progress))

        return await recheck(
            session, url_ids, probe, budget=budget, concurrency=concurrency, on_progress=advance
        )


def _line(progress: RecheckProgress) -> str:
    return (
        f"fetches {progress.fetches}: alive {progress.alive} "
        f"({progress.fraction_alive:.3f} per fetch), dead {progress.dead}, "
        f"unknown {progress.unknown}"
    )


def _summary(strategy: str, method: str, report: RecheckReport, requests: int) -> dict:
    progress = report.progress
    dead_reasons = Counter(
        _reason_kind(answer.reason) for answer in report.answers if answer.verdict is Verdict.DEAD
    )
    return {
        "strategy": strategy,
        "method": method,
        "pages": progress.pages,
        "fetches": progress.fetches,
        "requests": requests,
        "alive": progress.alive,
        "dead": progress.dead,
        "unknown": progress.unknown,
        "fraction_alive": round(progress.fraction_alive, 4),
        "complete": report.complete,
        "dead_reasons": dict(dead_reasons.most_common()),
    }


def _reason_kind(reason: str) -> str:
    """A reason without its particulars: ``HTTP 404``, ``DNS failure``, ``soft 404``."""
    if "DNS failure" in reason:
        return "DNS failure"
    return reason.split(":")[0].split(" (")[0]
