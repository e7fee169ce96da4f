"""Parameter types shared by several commands (this module defines no command)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

import click

from ranking.liverank import SAMPLE_KINDS, STRATEGIES

F = TypeVar("F", bound=Callable)


class Moment(click.ParamType):
    """A simulated time: seconds since the Unix epoch, or an ISO 8601 date (UTC if naive)."""

    name = "TIME"

    def convert(
        self, value: str | float, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            self.fail(f"{value!r} is neither seconds since the epoch nor an ISO date", param, ctx)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()


MOMENT = Moment()

MAX_URL_ID = 2**63 - 1
"""The largest URL-Id: SQLite's INTEGER."""


class PageReference(click.ParamType):
    """A page: its URL, or its URL-Id (ASCII digits, at most :data:`MAX_URL_ID`).

    Kept as text (the commands look a page up by either), but a number that cannot be a
    URL-Id is refused here: ``99999999999999999999`` or ``²`` (a digit to ``str.isdigit``).
    """

    name = "URL"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value.isdigit() and not (value.isascii() and int(value) <= MAX_URL_ID):
            self.fail(f"{value!r} is not a URL-Id (0 to {MAX_URL_ID}) nor a URL", param, ctx)
        return value


PAGE = PageReference()


_LIVERANK_OPTIONS = (
    click.option(
        "--strategy",
        type=click.Choice(STRATEGIES),
        default="pa_pm",
        show_default=True,
        help="r random, i in-degree, p PageRank, pa / pa_pm adaptive PageRank, asf active "
        "site first, bfs breadth-first, ai active in-degree (LiveRank paper §2.3-2.5).",
    ),
    click.option(
        "--sample",
        type=float,
        default=0.01,
        show_default=True,
        help="Sample size z: a fraction of the pages below 1, a page count otherwise.",
    ),
    click.option(
        "--sample-kind",
        type=click.Choice(SAMPLE_KINDS),
        default="random",
        show_default=True,
        help="How the sample of pa, pa_pm and asf is drawn.",
    ),
    click.option("--seed", type=int, default=0, show_default=True, help="Seeds R and the sample."),
)


def liverank_options(command: F) -> F:
    """The options that choose a LiveRank ordering, the same for `liverank` and `recheck`."""
    for option in reversed(_LIVERANK_OPTIONS):
        command = option(command)
    return command
