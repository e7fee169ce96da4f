"""``xyleme liverank``: print the order in which a re-check would test the repository's pages.

Nothing is fetched. Static strategies (r, i, p) print every page. Sample-based (pa, pa_pm,
asf) and dynamic (bfs, ai) strategies depend on answers: pages re-read at or after
``--answers-since`` count as answered, and the order is printed as far as those answers
decide it (the sample alone when none is known).
"""

from __future__ import annotations

import csv
import json
import sys

import click

from metadata import Metadata
from ranking.liverank import (
    ALIVE_ANSWER,
    DEAD_ANSWER,
    LiveRankError,
    LiveRankSettings,
    make_liverank,
    replay,
)
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import repository_errors, settings_errors
from xyleme.cli.params import MOMENT, liverank_options
from xyleme.cli.repository import DATABASE
from xyleme.jobs.liverank_snapshot import load_snapshot

_ANSWER_NAMES = {ALIVE_ANSWER: "alive", DEAD_ANSWER: "dead"}


@cli.command("liverank")
@liverank_options
@click.option(
    "--answers-since",
    type=MOMENT,
    default=None,
    help="Pages read at or after this time count as answered (alive: HTML/XML/DTD, dead: "
    "DEAD). Seconds since the epoch or an ISO date.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Print the first N.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV: rank,url_id,answer,url.")
@click.pass_context
def liverank(
    ctx: click.Context,
    strategy: str,
    sample: float,
    sample_kind: str,
    seed: int,
    answers_since: float | None,
    limit: int | None,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Print the LiveRank order of the repository's pages: live pages first, nothing fetched."""
    if as_json and as_csv:
        raise click.UsageError("choose one of --json and --csv")
    try:
        with settings_errors(LiveRankSettings):
            settings = LiveRankSettings(
                strategy=strategy, sample=sample, sample_kind=sample_kind, seed=seed
            )
    except (LiveRankError, ValueError) as error:
        raise click.BadParameter(str(error)) from None
    path = repo_path(ctx) / DATABASE
    with repository_errors(path), Metadata.open(path, readonly=True) as md:
        snapshot = load_snapshot(md, answered_since=answers_since)
        if not snapshot.graph.n_pages:
            raise click.ClickException("no page has been read yet: nothing to order")
        order, complete = replay(make_liverank(snapshot.graph, settings), snapshot.answers)
        shown = order[:limit]
        urls = md.urls_of(snapshot.url_ids[shown].tolist())
    rows = [
        {
            "rank": rank,
            "url_id": int(snapshot.url_ids[page]),
            "answer": _ANSWER_NAMES.get(int(snapshot.answers[page])),
            "url": url,
        }
        for rank, (page, url) in enumerate(zip(shown.tolist(), urls, strict=True), start=1)
    ]
    n_pages = snapshot.graph.n_pages
    if as_json:
        summary = {"strategy": strategy, "pages": n_pages, "complete": complete, "order": rows}
        click.echo(json.dumps(summary, indent=2))
    elif as_csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=["rank", "url_id", "answer", "url"])
        writer.writeheader()
        writer.writerows(rows)
    else:
        width = len(str(len(rows)))
        for row in rows:
            answer = row["answer"] or "-"
            click.echo(f"{row['rank']:>{width}}  {row['url_id']:>8}  {answer:<5}  {row['url']}")
    if not complete:
        click.echo(
            f"{strategy}: {order.size} of {n_pages} pages ordered; the rest depends on answers "
            "not known yet (re-read the listed pages, then pass --answers-since)",
            err=True,
        )
