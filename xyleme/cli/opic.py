"""``xyleme opic``: OPIC's importance estimates and discovery order, from the last checkpoint;
``--parts``: the cash of each crawl worker's part (OPIC §4.1) and their sum."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from loader import iso
from metadata import TOTAL_CASH, CashPart, CashTotal, Metadata, MetadataError
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
PART_COLUMNS = [
    Column("part", "part", right=True),
    Column("parts", "of", right=True),
    Column("flushes", "flushes", right=True),
    Column("cash", "cash", lambda value: f"{value:.9f}", right=True),
    Column("flushed", "last flush"),
]


@cli.command("opic")
@click.option(
    "--unread", is_flag=True, help="List never-read pages, most cash first (discovery order)."
)
@click.option(
    "--parts", is_flag=True, help="List the crawl workers' parts' cash and its sum (OPIC §4.1)."
)
@listing_options(default_limit=10)
@click.pass_context
def opic_command(
    ctx: click.Context, unread: bool, parts: bool, limit: int, fmt: str | None, wide: bool
) -> None:
    """Show OPIC's top pages by estimated importance (or --unread pages by cash, or the
    --parts of the crawl workers).

    Reads the state the daemon saved at its last checkpoint: fetches after it are not
    counted yet. ``--json`` rows: ``rank``, ``url_id``, ``url``, ``opic_importance`` (the
    estimate, as ``/api/rankings`` names it), ``cash`` and ``reads``; with ``--parts``:
    ``part``, ``parts``, ``flushes``, ``cash``, ``flushed`` (each part's books as of its last
    flush), the transfers in flight and the total on the table's last lines.
    """
    path = repo_path(ctx) / DATABASE
    if parts:
        return show_parts(path, fmt, wide)
    try:
        with Metadata.open(path, readonly=True) as md:
            opic = OPIC.restore(md, OPICSettings().checkpoint_key)
            if opic is None:
                worked = bool(md.cash_parts())
                raise click.ClickException(
                    "no OPIC checkpoint in this repository yet (the daemon writes one)"
                    + ("; its crawl workers' cash: xyleme opic --parts" if worked else "")
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


def show_parts(path: Path, fmt: str | None, wide: bool) -> None:
    """Each part's cash as its last flush committed it, the transfers in flight, and the
    total (1 when conserved: the drift is printed beside it)."""
    try:
        with Metadata.open(path, readonly=True) as md:
            books, total = md.cash_parts(), md.cash_total()
    except MetadataError as error:
        raise click.ClickException(f"{path}: {error}") from None
    if not books:
        raise click.ClickException(
            "no OPIC parts in this repository (crawl workers write them: xyleme run --workers)"
        )
    rows = [part_row(book) for book in books]
    emit(rows, PART_COLUMNS, fmt, total=len(rows), wide=wide, noun="parts")
    if fmt is None:
        click.echo(totals_line(total))


def part_row(book: CashPart) -> dict:
    flushed = None if book.written is None else iso(book.written)
    return {
        "part": book.part,
        "parts": book.parts,
        "flushes": book.epoch,
        "cash": book.cash,
        "flushed": flushed or "never",
    }


def totals_line(total: CashTotal) -> str:
    """The sum over the parts, the cash in flight and the total with its drift."""
    drift = abs(total.total - TOTAL_CASH) / TOTAL_CASH
    return (
        f"parts {total.in_parts:.9f} + in flight {total.in_flight:.9f} "
        f"({total.transfers} transfer rows) = total {total.total:.12f} (drift {drift:.1e})"
    )
