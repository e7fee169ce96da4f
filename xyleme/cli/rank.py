"""``xyleme rank``: compute importance and interest, list the top pages, show one page.

``compute`` reads the Link-Data, ranks every page out of core (paper §5) and writes the
importance and interest columns; ``top`` and ``show`` only read.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from metadata import PAGE_TYPE_CODE, InvalidURL, Metadata, MetadataError, PageType
from ranking import RankingError, RankingSettings
from ranking.pagerank import parse_size
from xyleme.cli import cli, repo_path
from xyleme.cli.errors import settings_errors
from xyleme.cli.listing import Column, dash, emit, listing_options, shown_limit, when
from xyleme.cli.ops import hand_to_daemon, report
from xyleme.cli.params import PAGE
from xyleme.jobs.ranking import provenance, rank_repository
from xyleme.lock import DaemonLock, RepositoryLocked

DATABASE = "metadata.db"
RANKING = "ranking"
_DEFAULTS = RankingSettings()
#: The score column each ranking lists. OPIC's checkpoint stores its importance estimate,
#: (H[k] + C[k]) / (G + 1) with its history window, in ``opic_importance`` (docs/opic.md).
SCORE_OF = {"xml": "importance", "html": "interest", "opic": "opic_importance"}
TYPES = list(PAGE_TYPE_CODE)


def _open(ctx: click.Context, *, readonly: bool) -> Metadata:
    try:
        return Metadata.open(repo_path(ctx) / DATABASE, readonly=readonly)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None


class _ProgressBar:
    """A rich progress bar per slice: sweep, slice, and each vector's current figure."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("reading the links", total=None)

    def slice_done(self, sweep: int, index: int, n_slices: int, figures: dict[str, float]) -> None:
        shown = "  ".join(f"{kind} {value:.1e}" for kind, value in figures.items())
        self.progress.update(
            self.task,
            total=n_slices,
            completed=index + 1,
            description=f"sweep {sweep}  slice {index + 1}/{n_slices}  {shown}",
        )


RANK_TIMEOUT = 3600.0
"""Seconds ``rank compute`` waits for a busy daemon to take and answer the ranking."""


@cli.group("rank")
def rank() -> None:
    """Importance of XML pages, interest of HTML pages, OPIC estimates (paper §5)."""


def _memory(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    return value


@rank.command("compute")
@click.option(
    "--memory",
    default=_DEFAULTS.memory,
    show_default=True,
    callback=_memory,
    help="Memory budget; the link matrix is cut into as many slices as it needs.",
)
@click.option(
    "--tol",
    type=float,
    default=_DEFAULTS.tol,
    show_default=True,
    help="ℓ₁ error bound of the importance; relative change of the interest.",
)
@click.option(
    "--max-sweeps",
    type=click.IntRange(min=1),
    default=_DEFAULTS.max_sweeps,
    show_default=True,
    help="Fail (writing nothing) after this many sweeps.",
)
@click.option(
    "--damping",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=_DEFAULTS.damping,
    show_default=True,
    help="Damping factor c.",
)
@click.option(
    "--variant",
    type=click.Choice(["uniform", "importance"]),
    default="uniform",
    show_default=True,
    help="Interest teleport: uniform on XML pages (PR') or their importance (PR'').",
)
@click.pass_context
def compute(
    ctx: click.Context, memory: str, tol: float, max_sweeps: int, damping: float, variant: str
) -> None:
    """Rank every page from the Link-Data and store importance and interest."""
    with settings_errors(RankingSettings):
        settings = RankingSettings(
            damping=damping,
            tol=tol,
            max_sweeps=max_sweeps,
            memory=memory,
            variant="PR'" if variant == "uniform" else "PR''",
        )
    folder = repo_path(ctx) / RANKING
    folder.mkdir(exist_ok=True)
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with _open(ctx, readonly=False) as md, _unless_a_daemon_runs(repo_path(ctx)):
        try:
            with Progress(*columns, console=console, transient=True) as progress:
                done = rank_repository(md, folder, settings, monitor=_ProgressBar(progress))
        except KeyboardInterrupt:
            click.echo("cancelled: no score was written", err=True)
            sys.exit(130)
        except (RankingError, MetadataError) as error:
            raise click.ClickException(f"{error} (no score was written)") from None
    click.echo(f"ranked {done.pages} pages ({done.xml_pages} XML) over {done.links} links")
    for result in (done.importance, done.interest):
        if result is None:
            click.echo("interest: not computed (no XML page yet)")
            continue
        click.echo(
            f"{result.kind}: {result.sweeps} sweeps, {result.figure_name} {result.figure:.2e}, "
            f"{result.details['slices']} slices, snapshot {result.snapshot}"
        )


@contextmanager
def _unless_a_daemon_runs(repository: Path) -> Iterator[None]:
    """Hold the repository while ranking it; if its daemon holds it, hand the ranking to the
    daemon (with its own [ranking] settings), print its answer and exit."""
    lock = DaemonLock(repository)
    try:
        lock.acquire()
    except RepositoryLocked:
        click.echo("a daemon holds the repository: it ranks with its [ranking] settings", err=True)
        report(hand_to_daemon(repository, "rank compute", {}, timeout=RANK_TIMEOUT), False)
        sys.exit(0)
    try:
        yield
    finally:
        lock.release()


def _ranked(view: dict[str, np.ndarray], which: str) -> tuple[np.ndarray, np.ndarray]:
    """(ids, scores) of the pages ``which`` ranks, best first; unknown scores left out."""
    column = SCORE_OF[which]
    keep = ~np.isnan(view[column])
    if which != "opic":
        page_type = PageType.XML if which == "xml" else PageType.HTML
        keep &= view["type"] == PAGE_TYPE_CODE[page_type]
    ids, scores = view["id"][keep], view[column][keep]
    order = np.lexsort((ids, -scores))
    return ids[order], scores[order]


NOUNS = {
    "xml": "XML pages with an importance",
    "html": "HTML pages with an interest",
    "opic": "pages with an OPIC estimate",
}


@rank.command("top")
@click.option("--xml", "which", flag_value="xml", help="XML pages by importance.")
@click.option("--html", "which", flag_value="html", help="HTML pages by interest.")
@click.option(
    "--opic", "which", flag_value="opic", help="All pages by OPIC's estimate (opic_importance)."
)
@listing_options(default_limit=20, deprecated=("-n",))
@click.pass_context
def top(ctx: click.Context, which: str | None, limit: int, fmt: str | None, wide: bool) -> None:
    """The best pages: XML by importance, HTML by interest, or all by OPIC estimate.

    ``--json`` rows are ``/api/rankings``' (rank, url_id, url, type and the score)."""
    if which is None:
        raise click.UsageError("say which ranking: --xml, --html or --opic")
    with _open(ctx, readonly=True) as md:
        view = md.refresh_view()
        ids, scores = _ranked(view, which)
        total = len(ids)
        ids, scores = ids[: shown_limit(limit)], scores[: shown_limit(limit)]
        urls = md.urls_of(ids.tolist())
    types = [TYPES[code].value for code in view["type"][np.searchsorted(view["id"], ids)]]
    score_name = SCORE_OF[which]
    rows = [
        {"rank": place, "url_id": int(url_id), "url": url, "type": kind, score_name: float(score)}
        for place, (url_id, url, kind, score) in enumerate(
            zip(ids, urls, types, scores, strict=True), 1
        )
    ]
    columns = [
        Column("rank", "rank", right=True),
        Column("url", "URL", long=True),
        Column("type", "type"),
        Column(score_name, score_name, lambda value: f"{value:.4e}", right=True),
    ]
    emit(rows, columns, fmt, total=total, wide=wide, noun=NOUNS[which])


def _place(ids: np.ndarray, url_id: int) -> int | None:
    found = np.flatnonzero(ids == url_id)
    return int(found[0]) + 1 if found.size else None


@rank.command("show")
@click.argument("url", type=PAGE)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def show(ctx: click.Context, url: str, as_json: bool) -> None:
    """The importance, interest and OPIC estimate of URL (or URL-Id), with how they were made."""
    with _open(ctx, readonly=True) as md:
        try:
            url_id = int(url) if url.isdigit() else md.page_by_url(url).url_id
            canonical = md.url_of(url_id)
        except InvalidURL as error:
            raise click.ClickException(f"{url!r} is not a valid URL: {error.reason}") from None
        except MetadataError as error:  # StoreError included
            raise click.ClickException(str(error)) from None
        view = md.refresh_view()
    row = int(np.searchsorted(view["id"], url_id))
    page_type = TYPES[view["type"][row]]
    record: dict[str, object] = {"url_id": url_id, "url": canonical, "type": page_type.value}
    # xml_rank: place among XML pages by importance; html_rank: among HTML pages by
    # interest; opic_rank: among all pages by OPIC's estimate
    for which, column in SCORE_OF.items():
        value = view[column][row]
        record[column] = None if math.isnan(value) else float(value)
        record[f"{which}_rank"] = _place(_ranked(view, which)[0], url_id)
    record["computed"] = provenance(repo_path(ctx) / RANKING)
    if as_json:
        click.echo(json.dumps(record, indent=2))
        return
    for key, value in record.items():
        if key != "computed":
            click.echo(f"{key:<20} {dash(value)}")
    for kind, made in record["computed"].items():
        click.echo(
            f"{kind} computed {when(made['computed_at'])}: damping {made['damping']}, "
            f"{made['sweeps']} sweeps, "
            f"{made['figure_name']} {made['figure']:.2e}, snapshot {made['snapshot']}"
        )
