"""Parameter types shared by several commands (this module defines no command)."""

from __future__ import annotations

from datetime import UTC, datetime

import click


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
