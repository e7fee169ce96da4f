"""``xyleme opic``: OPIC's importance estimates and discovery order, from the last checkpoint."""

from __future__ import annotations

import click
import numpy as np

from metadata import Metadata, MetadataError
from ranking.opic import OPIC, CorruptSnapshot, OPICSettings
from xyleme.cli import cli, repo_path
from xyleme.cli.listing import Column, emit, listing_options, shown_limit
from xyleme.cli.repository import DATABASE

COLUMNS = [
    Column("rank", "#", right=True),
    Column("url_id", "URL-Id", right=True),
    Column("opic_importance", "estimate", lambda value: f"{value:.6f}", right=True),
    Column("cash", "cash", lambda value: f"{value:.6f}", right=True),
    Column("reads", "reads", right=True),
    Column("url", "URL", long=True),
]


@cli.command("opic")
@click.option(
    "--unread", is_flag=True, help="List never-read pages, most cash first (discovery order)."
)
@listing_options(default_limit=10)
@click.pass_context
def opic_command(ctx: click.Context, unread: bool, limit: int, fmt: str | None, wide: bool) -> None:
    """Show OPIC's top pages by estimated importance (or --unread pages by cash).

    Reads the state the daemon saved at its last checkpoint: fetches after it are not
    counted yet. ``--json`` rows: ``rank``, ``url_id``, ``url``, ``opic_importance`` (the
    estimate, as ``/api/rankings`` names it), ``cash`` and ``reads``.
    """
    path = repo_path(ctx) / DATABASE
    try:
        with Metadata.open(path, readonly=True) as md:
            opic = OPIC.restore(md, OPICSettings().checkpoint_key)
            if opic is None:
                raise click.ClickException(
                    "no OPIC checkpoint in this repository yet (the daemon writes one)"
                )
            estimates, reads = opic.estimates(), opic.reads()
            known = np.flatnonzero(opic.weights() > 0)
            if unread:
                total = int((reads[known] == 0).sum())
                ids = opic.unread_by_cash(shown_limit(limit) or total)
            else:
                total = int(known.size)
                ids = known[np.argsort(-estimates[known], kind="stable")[: shown_limit(limit)]]
            urls = md.urls_of(ids.tolist())
    except (CorruptSnapshot, MetadataError) as error:  # StoreError is a MetadataError
        raise click.ClickException(f"{path}: {error}") from None
    cash = opic.cash(ids)
    rows = [
        {
            "rank": rank,
            "url_id": int(url_id),
            "url": urls[rank - 1],
            "opic_importance": float(estimates[url_id]),
            "cash": float(cash[rank - 1]),
            "reads": int(reads[url_id]),
        }
        for rank, url_id in enumerate(ids.tolist(), start=1)
    ]
    if fmt is None:
        read = int((reads > 0).sum())
        click.echo(f"G-time {opic.g:.3f}, {opic.known_pages} pages known, {read} read")
    noun = "never-read pages" if unread else "pages"
    emit(rows, COLUMNS, fmt, total=total, wide=wide, noun=noun)
