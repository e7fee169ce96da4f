"""Parameter types shared by several commands (this module defines no command)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

import click

from ranking.liverank_settings import SAMPLE_KINDS, STRATEGIES

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
