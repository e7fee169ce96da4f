"""How xyleme writes a timestamp for a person: one format for the CLI's tables and the
dashboard's pages, so a time read in one can be searched for in the other.

A low module of its own (the standard library only): the CLI and the dashboard both import it,
neither imports the other.
"""

from __future__ import annotations

import math
import numbers
from datetime import UTC, datetime


def when(seconds: object, none: str = "never") -> str:
    """A timestamp (seconds since the epoch, simulated or real) as ``YYYY-MM-DD HH:MM:SSZ``
    (UTC); ``none`` for no time: None, NaN, an infinity, or anything not a number.

    Examples
    --------
    >>> when(0)
    '1970-01-01 00:00:00Z'
    >>> when(float("nan")), when(None, none="-")
    ('never', '-')
    """
    if not isinstance(seconds, numbers.Real) or not math.isfinite(seconds):
        return none
    return datetime.fromtimestamp(float(seconds), UTC).strftime("%Y-%m-%d %H:%M:%SZ")
