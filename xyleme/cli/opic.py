"""``xyleme opic``: OPIC's importance estimates and discovery order, from the last checkpoint."""

from __future__ import annotations

import json

import click
import numpy as np

from metadata import Metadata, MetadataError
from ranking.opic import OPIC, CorruptSnapshot, OPICSettings
from xyleme.cli import cli, repo_path
from xyleme.cli.repository import DATABASE


@cli.command("opic")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--unread", is_flag=True, help="List never-read pages, most cash first (discovery order)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def opic_command(ctx: click.Context, limit: int, unread: bool, as_json: bool) -> None:
    """Show OPIC's top pages by estimated importance (or --unread pages by cash).

    Reads the state the daemon saved at its last checkpoint: fetches after it are not
    counted yet.
    """
    path = repo_path(ctx) / DATABASE
    try:
        with Metadata.open(path, readonly=True) as md:
            opic = OPIC.restore(md, OPICSettings().checkpoint_key)
            if opic is None:
                raise click.ClickException(
                    "no OPIC checkpoint in this repository yet (the daemon writes one)"
                )
            estimates = opic.estimates()
            if unread:
                ids = opic.unread_by_cash(limit)
            else:
                known = np.flatnonzero(opic.weights() > 0)
                ids = known[np.argsort(-estimates[known], kind="stable")[:limit]]
            urls = md.urls_of(ids.tolist())
    except (CorruptSnapshot, MetadataError) as error:  # StoreError is a MetadataError
        raise click.ClickException(f"{path}: {error}") from None
    cash, reads = opic.cash(ids), opic.reads()[ids]
    rows = [
        {
            "url_id": int(url_id),
            "estimate": float(estimates[url_id]),
            "cash": float(cash[rank]),
            "reads": int(reads[rank]),
            "url": urls[rank],
        }
        for rank, url_id in enumerate(ids.tolist())
    ]
    summary = {
        "g": opic.g,
        "known_pages": opic.known_pages,
        "read_pages": int((opic.reads() > 0).sum()),
    }
    if as_json:
        click.echo(json.dumps({**summary, "pages": rows}, indent=2))
        return
    click.echo(
        f"G-time {summary['g']:.3f}, {summary['known_pages']} pages known, "
        f"{summary['read_pages']} read"
    )
    click.echo(f"{'#':>3}  {'url-id':>8}  {'estimate':>10}  {'cash':>10}  {'reads':>5}  url")
    for rank, row in enumerate(rows, start=1):
        click.echo(
            f"{rank:>3}  {row['url_id']:>8}  {row['estimate']:>10.6f}  {row['cash']:>10.6f}  "
            f"{row['reads']:>5}  {row['url']}"
        )
