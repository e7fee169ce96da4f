"""``xyleme liverank``: print the order in which a re-check would test the repository's pages.

Nothing is fetched. Static strategies (r, i, p) print every page. Sample-based (pa, pa_pm,
asf) and dynamic (bfs, ai) strategies depend on answers: pages re-read at or after
``--answers-since`` count as answered, and the order is printed as far as those answers
decide it (the sample alone when none is known).
"""

from __future__ import annotations

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
from xyleme.cli.listing import Column, emit, listing_options, shown_limit
from xyleme.cli.params import MOMENT, liverank_options
from xyleme.cli.repository import DATABASE
from xyleme.jobs.liverank_snapshot import load_snapshot

_ANSWER_NAMES = {ALIVE_ANSWER: "alive", DEAD_ANSWER: "dead"}
COLUMNS = [
    Column("rank", "#", right=True),
    Column("url_id", "URL-Id", right=True),
    Column("answer", "answer", lambda answer: answer or "unknown"),
    Column("url", "URL", long=True),
]


@cli.command("liverank")
@liverank_options
@click.option(
    "--answers-since",
    type=MOMENT,
    default=None,
    help="Pages read at or after this time count as answered (alive: HTML/XML/DTD, dead: "
    "DEAD). Seconds since the epoch or an ISO date.",
)
@listing_options()
@click.pass_context
def liverank(
    ctx: click.Context,
    strategy: str,
    sample: float,
    sample_kind: str,
    seed: int,
    answers_since: float | None,
    limit: int,
    fmt: str | None,
    wide: bool,
) -> None:
    """Print the LiveRank order of the repository's pages: live pages first, nothing fetched.

    ``--json`` rows: ``rank``, ``url_id``, ``url`` and ``answer`` (``alive``, ``dead`` or
    null when the page's answer is not known). An order the answers do not decide to the end
    is printed as far as it goes, with a note on stderr."""
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
        shown = order[: shown_limit(limit)]
        urls = md.urls_of(snapshot.url_ids[shown].tolist())
    rows = [
        {
            "rank": rank,
            "url_id": int(snapshot.url_ids[page]),
            "url": url,
            "answer": _ANSWER_NAMES.get(int(snapshot.answers[page])),
        }
        for rank, (page, url) in enumerate(zip(shown.tolist(), urls, strict=True), start=1)
    ]
    n_pages = snapshot.graph.n_pages
    emit(rows, COLUMNS, fmt, total=int(order.size), wide=wide, noun="ordered pages")
    if not complete:
        click.echo(
            f"{strategy}: {order.size} of {n_pages} pages ordered; the rest depends on answers "
            "not known yet (re-read the listed pages, then pass --answers-since)",
            err=True,
        )
