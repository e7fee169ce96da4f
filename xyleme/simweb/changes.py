"""When each page changes: a Poisson process per page on simulated time, drawn lazily.

Page *i* changes at the arrival times of a Poisson process of rate λ_i started at its birth.
The inter-arrival gaps come from the page's own stream (seed, "changes", i), so the times
are drawn only for the pages a request or a test asks about, only as far as it asks, and are
the same in every process. The content of page *i* at time *t* is its version *k*, the number
of its changes at or before *t*.

Change times are whole seconds (each arrival is rounded up; two arrivals within one second
count as one change). HTTP dates have a one-second resolution, so this makes Last-Modified
exact and lets the server answer 304 exactly when nothing changed (Xyleme acquisition paper
§6.1 estimates λ from such observations).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_right

import numpy as np

from xyleme.simweb.streams import fast_stream

NEVER = math.inf


class ChangeTimes:
    """The change times of every page, extended on demand.

    Parameters
    ----------
    seed
        The web's seed.
    rates
        λ of each page, in changes per simulated second (0 = never changes).
    births
        Simulated time at which each page's version 0 starts.

    Examples
    --------
    >>> changes = ChangeTimes(1, np.array([0.0, 1 / 3600]), np.array([0.0, 0.0]))
    >>> changes.version(0, 1e9)
    0
    >>> first = changes.until(1, 10 * 3600)[0]
    >>> changes.version(1, first - 1), changes.version(1, first)
    (0, 1)
    """

    def __init__(self, seed: int, rates: np.ndarray, births: np.ndarray) -> None:
        self._seed = seed
        self._rates: list[float] = [float(r) for r in rates]
        self._births: list[float] = [float(b) for b in births]
        # Per page: drawn change times (8 bytes each), always ending with one beyond every
        # time asked so far.
        self._times: list[array | None] = [None] * len(self._rates)
        self._cursor: list[float] = list(self._births)
        self._rngs: dict = {}

    def _drawn(self, page: int, at: float) -> array:
        """The page's change times, drawn at least until one lies beyond ``at``."""
        times = self._times[page]
        if times is None:
            if self._rates[page] <= 0.0:
                times = self._times[page] = array("d", [NEVER])
                return times
            times = self._times[page] = array("d")
            self._rngs[page] = fast_stream(self._seed, "changes", page)
        elif times[-1] > at:
            return times
        rng, rate = self._rngs[page], self._rates[page]
        cursor = self._cursor[page]
        while not times or times[-1] <= at:
            cursor -= math.log(1.0 - rng.uniform()) / rate
            when = float(math.ceil(cursor))
            if not times or when > times[-1]:
                times.append(when)
        self._cursor[page] = cursor
        return times

    def version(self, page: int, at: float) -> int:
        """The number of changes of ``page`` at or before simulated time ``at``."""
        times = self._times[page]
        if times is None or times[-1] <= at:
            times = self._drawn(page, at)
        return bisect_right(times, at)

    def until(self, page: int, at: float) -> list[float]:
        """The change times of ``page`` at or before ``at``, oldest first."""
        times = self._drawn(page, at)
        return times[: bisect_right(times, at)].tolist()

    def version_start(self, page: int, version: int) -> float:
        """When ``version`` of ``page`` began: its birth for version 0, else its change time."""
        if version == 0:
            return self._births[page]
        times = self._times[page]
        if times is None or len(times) < version:
            raise ValueError(f"page {page} has not reached version {version} yet")
        return times[version - 1]
