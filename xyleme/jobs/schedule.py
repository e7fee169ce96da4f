"""The schedule recipe: the refresh module's report over a repository, read one way for all.

The refresh pass (:mod:`xyleme.jobs.refresh_pass`), ``xyleme schedule`` and the dashboard all
read the same two arrays in one snapshot (the refresh view and the observation history: a
daemon may commit between two reads), the pages' hosts and, for the daemon, OPIC's cash, and
hand them to :func:`refresh.report.schedule_report`. The store speaks in page type codes and
the refresh module in names: the recipe converts (``PAGE_TYPE_NAMES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from metadata import PAGE_TYPE_NAMES, Metadata
from refresh.report import ScheduleReport, host_keys, schedule_report
from refresh.settings import RefreshSettings
from xyleme.status import repository_now


@dataclass(frozen=True)
class Schedule:
    """A schedule report with what it was computed from."""

    report: ScheduleReport
    urls: list[str]
    """The URL of each page of the report, in its order (ascending URL-Id)."""
    history: Mapping[str, np.ndarray]
    """The observation history read with the view (the refresh pass averages over it)."""


def read_schedule(
    md: Metadata,
    settings: RefreshSettings,
    *,
    now: float | None = None,
    units: int = 7,
    opic_cash: np.ndarray | None = None,
) -> Schedule:
    """The refresh schedule of every page of ``md`` at ``now`` for ``units`` time units.

    Parameters
    ----------
    md : Metadata
        The repository's metadata (read-only is enough).
    settings : RefreshSettings
        The repository's ``[refresh]`` table.
    now : float, optional
        Simulated time; by default the repository's (:func:`xyleme.status.repository_now`).
    units : int
        Time units counted in the report's refreshes per unit.
    opic_cash : numpy.ndarray, optional
        OPIC's cash indexed by URL-Id (a live daemon's), for discovery; by default the cash
        its last checkpoint stored.

    Raises
    ------
    ValueError
        When the stored observations cannot be estimated from (out of time order, say).
    """
    with md.snapshot():
        view = md.refresh_view()
        history = md.observation_history()
    if now is None:
        now = repository_now(md, view)
    ids = view["id"]
    urls = md.urls_of(ids.tolist()) if len(ids) else []
    if opic_cash is not None:
        aligned = np.zeros(len(ids))
        held = ids < len(opic_cash)
        aligned[held] = opic_cash[ids[held]]
        opic_cash = aligned
    report = schedule_report(
        {**view, "type": np.asarray(PAGE_TYPE_NAMES, dtype=object)[view["type"]]},
        history,
        now,
        settings,
        units=units,
        host_keys=host_keys(urls) if urls else None,
        opic_cash=opic_cash,
    )
    return Schedule(report, urls, history)
