"""The CLI's listing convention (docs/cli.md), shared by every command that prints rows.

``--limit N`` (its default shown in ``--help``; 0 for all), ``--json`` (one array of objects,
the HTTP API's field names), ``--csv`` (a header row, then one row per object) and
``--wide`` (a table whose long cells stay on one line). Machine formats carry every field
whole, unknown values as JSON null or an empty CSV cell; a table folds long URLs instead of
cutting them and never shows ``None`` ("never", "unknown" or "–" instead). When ``--limit``
hid rows, a note on stderr says how many and how to see them. This module defines no command.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from xyleme.timestamps import when as when  # the commands take it from here, with the rest

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_LIMIT = 50
"""Rows a listing shows unless ``--limit`` says otherwise."""
NONE = "–"
"""What a table shows for a value nobody knows or that does not apply."""


def dash(value: Any) -> str:
    """Any value as a table cell: ``–`` for None, floats to 4 significant digits."""
    if value is None:
        return NONE
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else NONE
    return str(value)


def ago(seconds: float | None, none: str = "unknown") -> str:
    """An age in real seconds as ``42 s``, ``7 min``, ``3.5 h`` or ``2.1 d``."""
    if seconds is None or not math.isfinite(seconds):
        return none
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} d"


def written_ago(written: float | None, none: str = "never reported") -> str:
    """How long ago a real (wall-clock) timestamp was, for "as of" cells."""
    return none if written is None else f"{ago(time.time() - written)} ago"


def size(value: int | None) -> str:
    """A byte count in binary units (``–`` when unknown)."""
    if value is None:
        return NONE
    amount = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return NONE  # unreachable: the loop returns at GiB


@dataclass(frozen=True, slots=True)
class Column:
    """A table column: the row's ``key``, its header, how a person reads the value, and
    whether it holds long text (URLs, reasons) that folds across lines unless ``--wide``.
    No cell is ever cut: a short column folds too when the terminal is very narrow."""

    key: str
    header: str
    show: Callable[[Any], str] = dash
    long: bool = False
    right: bool = False


def listing_options(
    default_limit: int = DEFAULT_LIMIT, deprecated: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """``--limit``, ``--json``, ``--csv`` and ``--wide``, as the parameters ``limit``,
    ``fmt`` (``table``, ``json`` or ``csv``) and ``wide``. ``deprecated`` names old spellings
    of ``--limit`` (``--top``, ``-n``) still accepted, hidden, with a note on stderr."""

    def decorate(command: F) -> F:
        options = [
            click.option(
                "--limit",
                type=click.IntRange(min=0),
                default=default_limit,
                show_default=True,
                callback=_limit_or_old_spelling,
                help="Show at most this many rows (0: all); stderr says when more exist.",
            ),
            click.option(
                "--json",
                "fmt",
                flag_value="json",
                help="Print one JSON array of objects (the HTTP API's field names).",
            ),
            click.option("--csv", "fmt", flag_value="csv", help="Print CSV with a header row."),
            click.option(
                "--wide", is_flag=True, help="Keep long cells (URLs) on one line in the table."
            ),
        ]
        if deprecated:
            options.append(
                click.option(
                    *deprecated,
                    "old_limit",
                    type=click.IntRange(min=0),
                    hidden=True,
                    expose_value=False,
                    callback=_old_limit,
                )
            )
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _old_limit(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
    """An old spelling of ``--limit`` given: it sets the limit, with a note on stderr."""
    if value is None:
        return
    spelling = "/".join(param.opts)
    if ctx.get_parameter_source("limit") not in (None, click.core.ParameterSource.DEFAULT):
        raise click.UsageError(f"{spelling} is the old name of --limit: give one of them")
    click.echo(f"{spelling} is deprecated: use --limit", err=True)
    ctx.meta["old_limit"] = value
    if "limit" in ctx.params:
        ctx.params["limit"] = value


def _limit_or_old_spelling(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """``--limit``, unless it was left at its default and an old spelling gave the limit."""
    old = ctx.meta.get("old_limit")
    if old is not None:
        if ctx.get_parameter_source("limit") is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError("--limit and its old name were both given: give one of them")
        return old
    return value


def shown_limit(limit: int) -> int | None:
    """The row cap a query takes: None for ``--limit 0`` (all)."""
    return limit or None


def emit(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[Column],
    fmt: str | None,
    *,
    fields: Sequence[str] | None = None,
    total: int | None = None,
    wide: bool = False,
    noun: str = "rows",
    more: bool = False,
) -> None:
    """Print ``rows`` as a table of ``columns``, or every field as JSON / CSV.

    ``fields`` names the machine formats' fields in order (default: the first row's keys);
    ``total`` is how many rows matched before the limit, for the note on stderr; ``more``
    says that more matched when the total is not known (a query stops at its limit).
    """
    fields = list(fields or (rows[0].keys() if rows else [column.key for column in columns]))
    if fmt == "json":
        click.echo(json.dumps([_json_safe(row) for row in rows], indent=2, ensure_ascii=False))
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fields, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        click.echo(buffer.getvalue(), nl=False)
    elif rows:
        click.echo(table(rows, columns, wide=wide), nl=False)
    else:
        click.echo(f"no {noun}", err=True)
    more_note(len(rows), total, noun, more=more)


def more_note(shown: int, total: int | None, noun: str = "rows", *, more: bool = False) -> None:
    """Say on stderr that ``--limit`` hid rows, and how to see them."""
    if total is not None and total > shown:
        click.echo(
            f"{shown} of {total} {noun} shown; --limit {total} (or 0) shows them all", err=True
        )
    elif more:
        click.echo(f"{shown} {noun} shown and more exist; --limit 0 shows them all", err=True)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], *, wide: bool = False) -> str:
    """Rows as an aligned text table; long cells fold at the terminal's width (``COLUMNS``),
    or stay whole on one line with ``wide``. Rich is imported here only: a command that
    prints no table does not pay for it."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = shutil.get_terminal_size((120, 24)).columns
    cells = [[column.show(row.get(column.key)) for column in columns] for row in rows]
    longest = [
        max([len(column.header), *(len(line[i]) for line in cells)])
        for i, column in enumerate(columns)
    ]
    first_long = next((i for i, column in enumerate(columns) if column.long), None)
    grid = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, column in enumerate(columns):
        if wide or not column.long:
            least = longest[i]  # a short cell never shrinks: it would be cut
        else:  # the first long column (the URL) gets half the width before folding
            least = min(longest[i], max(16, width // 2 if i == first_long else width // 6))
        grid.add_column(
            column.header,
            overflow="fold",
            no_wrap=wide or not column.long,
            justify="right" if column.right else "left",
            min_width=least,
        )
    for line in cells:
        grid.add_row(*(Text(cell) for cell in line))
    # Too narrow for every column at its least width: wider lines, never a dropped column.
    width = max(width, sum(column.min_width for column in grid.columns) + 3 * len(columns))
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=10**6 if wide else width, no_color=True, highlight=False, soft_wrap=wide
    )
    console.print(grid, crop=False)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _json_safe(row: dict[str, Any]) -> dict[str, Any]:
    """JSON has no NaN nor infinity: such numbers become null."""
    return {
        key: None if isinstance(value, float) and not math.isfinite(value) else value
        for key, value in row.items()
    }
