"""Every time unit, which pages go to the crawler and at which level (§6.5–6.6).

Two implementations of "the pages whose interval has elapsed" (§6.6):

* the **scan**: one vectorised comparison over the whole Refresh-Data per time unit
  (:func:`scan_due`); exact, O(N) per unit, no extra storage;
* the **folders**: one folder per time unit holding the pages due in it
  (:class:`FolderSchedule`); a unit only touches the ~G pages of its folder, at the price of
  the folders' storage and of a refresh moment rounded to the unit.

A scan once per unit that fetches the due pages at once rounds every refresh moment up to the
next scan: a page read just after a scan and due t units later waits for the scan after that,
so the floored pages (t = 1) are read every 2 units and the others ~half a unit late; the
bandwidth is under-spent and the obsolescence is well above Ω. So the plan also lists the
pages due *before the next scan* with their moments (``upcoming``), and a
:class:`RefreshTimetable` releases each one when its moment comes.

:func:`plan_time_unit` turns the metadata's refresh view into one unit's work: refreshes
(level 1) in decreasing accumulated obsolescence, retries of ERROR pages after their back-off
(level 1), discovery of unread pages by decreasing OPIC cash with θ·G of the bandwidth
(level 2), re-checks of DEAD pages (level 4), and the ERROR pages that have failed too often
and must become DEAD. It hands URL-Ids to any object with a ``submit_plan(batches)`` method
(:class:`CrawlQueue`); it never imports the crawler.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from refresh.change_rates import group_prior
from refresh.policy import RefreshPlan, normalise_importance, refresh_intervals, type_names
from refresh.settings import RefreshSettings

REFRESH_LEVEL = 1
DISCOVERY_LEVEL = 2
BACKGROUND_LEVEL = 4

REFRESHED_TYPES = ("XML", "HTML", "DTD")


Batch = tuple[np.ndarray, int, np.ndarray]
"""URL-Ids, the priority level they are queued at, and their scores (higher first)."""


class CrawlQueue(Protocol):
    """Where the refresh module hands pages to fetch (``xyleme.crawler.Crawler`` is one)."""

    async def submit_plan(self, batches: Sequence[Batch]) -> int:
        """Queue every batch in one call (one lookup for all its pages); how many queued.

        A coroutine: a queue on an event loop lets its other tasks run while it admits a
        large plan."""
        ...


def scan_due(next_refresh: np.ndarray, now: float) -> np.ndarray:
    """Positions of the pages whose refresh point has come (next_refresh ≤ now), §6.6 scan.

    NaN (no refresh planned) is never due.

    Examples
    --------
    >>> scan_due(np.array([5.0, np.nan, 10.0, 11.0]), 10.0).tolist()
    [0, 2]
    """
    return np.flatnonzero(np.asarray(next_refresh) <= now)


class FolderSchedule:
    """The folders alternative of §6.6: one folder of page positions per time unit.

    Folder k holds the pages due in ((k − 1)·unit, k·unit] after ``origin``; processing the
    folders up to now's unit gives the pages a scan at a unit boundary would give. A page that
    is rescheduled before its folder comes is not searched for: its old entry is dropped when
    the folder is processed (``folder_of`` remembers where each page currently belongs).

    Examples
    --------
    >>> folders = FolderSchedule(unit_s=10.0, n_pages=4)
    >>> folders.insert(np.array([0, 1, 2, 3]), np.array([5.0, 10.0, 15.0, 31.0]))
    >>> folders.pop_due(10.0).tolist(), folders.pop_due(20.0).tolist(), len(folders)
    ([0, 1], [2], 1)
    """

    def __init__(self, unit_s: float, n_pages: int, origin: float = 0.0) -> None:
        if not unit_s > 0:
            raise ValueError(f"unit_s must be positive, got {unit_s!r}")
        self.unit_s = unit_s
        self.origin = origin
        self.folder_of = np.full(n_pages, np.iinfo(np.int64).min, dtype=np.int64)
        self._folders: dict[int, list[np.ndarray]] = {}

    def _folder_index(self, when: np.ndarray) -> np.ndarray:
        return np.ceil((np.asarray(when, dtype=np.float64) - self.origin) / self.unit_s).astype(
            np.int64
        )

    def insert(self, positions: np.ndarray, next_refresh: np.ndarray) -> None:
        """Put pages in the folders of their next refresh (replacing any earlier placement)."""
        positions = np.asarray(positions, dtype=np.int64)
        when = np.asarray(next_refresh, dtype=np.float64)
        planned = np.isfinite(when)
        positions, index = positions[planned], self._folder_index(when[planned])
        self.folder_of[positions] = index
        order = np.argsort(index, kind="stable")
        index, positions = index[order], positions[order]
        keys, starts = np.unique(index, return_index=True)
        for key, chunk in zip(keys.tolist(), np.split(positions, starts[1:]), strict=True):
            self._folders.setdefault(key, []).append(chunk)

    def pop_due(self, now: float) -> np.ndarray:
        """Remove and return the pages of every folder up to now's unit (stale entries dropped)."""
        last = math.floor((now - self.origin) / self.unit_s)
        due = [k for k in self._folders if k <= last]
        out = []
        for key in sorted(due):
            chunk = np.concatenate(self._folders.pop(key))
            out.append(chunk[self.folder_of[chunk] == key])
        if not out:
            return np.empty(0, dtype=np.int64)
        positions = np.concatenate(out)
        self.folder_of[positions] = np.iinfo(np.int64).min
        return positions

    def __len__(self) -> int:
        """Pages currently placed in a folder."""
        return int(np.count_nonzero(self.folder_of != np.iinfo(np.int64).min))


def retry_delay_units(failures: np.ndarray, settings: RefreshSettings) -> np.ndarray:
    """Back-off before retrying a page in ERROR: base·factor^(failures − 1), capped (units)."""
    failures = np.maximum(np.asarray(failures, dtype=np.float64), 1.0)
    delay = settings.retry_backoff_units * settings.retry_backoff_factor ** (failures - 1)
    return np.minimum(delay, settings.max_retry_backoff_units)


@dataclass(frozen=True)
class UnitPlan:
    """One time unit's work, as URL-Ids per level, and the policy figures it was computed from.

    ``refresh`` are the pages already due, ``upcoming`` those due before the unit ends (at
    ``upcoming_at``, in due-time order, for a :class:`RefreshTimetable`).
    ``next_refresh`` (simulated seconds, NaN where no refresh is planned) is aligned with the
    view's rows, ready for ``Metadata.set_scores("next_refresh", ids, values)``; so are
    ``change_rate`` (λ per second, the prior filled in) and ``r``.
    """

    refresh: np.ndarray
    refresh_scores: np.ndarray
    upcoming: np.ndarray
    upcoming_at: np.ndarray
    upcoming_scores: np.ndarray
    retry: np.ndarray
    discovery: np.ndarray
    discovery_scores: np.ndarray
    background: np.ndarray
    make_dead: np.ndarray
    policy: RefreshPlan
    next_refresh: np.ndarray
    interval_units: np.ndarray
    change_rate: np.ndarray
    r: np.ndarray

    def batches(self) -> list[Batch]:
        """The unit's due work per level, for :meth:`CrawlQueue.submit_plan`: refreshes and
        retries (level 1), discoveries (2), re-checks (4). The ``upcoming`` pages are not due
        yet: a :class:`RefreshTimetable` releases them."""
        return [
            (self.refresh, REFRESH_LEVEL, self.refresh_scores),
            (self.retry, REFRESH_LEVEL, np.zeros(len(self.retry))),
            (self.discovery, DISCOVERY_LEVEL, self.discovery_scores),
            (self.background, BACKGROUND_LEVEL, np.zeros(len(self.background))),
        ]


def page_weights(
    columns: Mapping[str, np.ndarray], settings: RefreshSettings
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r, λ (per second, prior where missing) and w = r·λ per time unit for the view's rows."""
    page_type = type_names(columns["type"])
    r = normalise_importance(
        page_type,
        columns["importance"],
        columns["interest"],
        floor=settings.importance_floor,
        threshold=settings.importance_threshold,
    )
    rate = np.asarray(columns["change_rate"], dtype=np.float64)
    rate = np.where(np.isfinite(rate) & (rate > 0), rate, np.nan)
    prior = group_prior(
        rate,
        page_type,
        np.zeros(len(rate), dtype=np.int64),
        min_pages=settings.prior_min_pages,
        default=settings.default_change_rate_per_unit / settings.time_unit_s,
    )
    rate = np.where(np.isnan(rate), prior, rate)
    return r, rate, r * rate * settings.time_unit_s


def plan_time_unit(
    columns: Mapping[str, np.ndarray],
    now: float,
    settings: RefreshSettings,
    *,
    opic_cash: np.ndarray | None = None,
) -> UnitPlan:
    """What to fetch in the time unit starting at ``now``, from ``Metadata.refresh_view()``.

    Parameters
    ----------
    columns
        The refresh view: ``id``, ``type``, ``last_access``, ``change_rate`` (per second),
        ``importance``, ``interest``, ``failures`` (one array each, aligned).
    now
        The current simulated time (``clock.now()``).
    settings
        Bandwidth G, discovery share θ, time unit, floors, back-off.
    opic_cash
        OPIC cash per row (from the ranking module), to pick unread pages for discovery; rows
        in URL-Id order are used when it is None.

    Returns
    -------
    UnitPlan

    Notes
    -----
    A page's refresh point is last_access + t_i·unit with t_i from :func:`refresh_intervals`
    (eq. 22 with the one-unit floor, over the pages of types XML, HTML and DTD with r > 0). The
    refreshes are all the due pages (§6.6: "in equilibrium about G per time unit"), in
    decreasing obsolescence r·λ·(now − last_access), so a backlog is served most-stale first.
    Unread pages (type UNKNOWN, never accessed) fill the discovery share θ·G; pages queued in
    an earlier unit and not fetched yet are offered again (the queue deduplicates). Pages
    that answered with a redirect (accessed, still UNKNOWN) and DEAD pages are re-checked at
    the background level every ``dead_recheck_units``.
    """
    ids = np.asarray(columns["id"], dtype=np.int64)
    page_type = type_names(columns["type"])
    last = np.asarray(columns["last_access"], dtype=np.float64)
    failures = np.asarray(columns["failures"], dtype=np.float64)
    unit = settings.time_unit_s

    r, rate, weight = page_weights(columns, settings)
    refreshable = np.isin(page_type, REFRESHED_TYPES) & np.isfinite(last) & (weight > 0)
    plan = refresh_intervals(
        np.where(refreshable, weight, 0.0), settings.refresh_bandwidth_per_unit
    )
    next_refresh = np.where(refreshable, last + plan.interval * unit, np.nan)
    due = scan_due(next_refresh, now)
    score = weight[due] * (now - last[due]) / unit
    order = np.argsort(-score, kind="stable")
    upcoming = np.flatnonzero((next_refresh > now) & (next_refresh <= now + unit))
    upcoming = upcoming[np.argsort(next_refresh[upcoming], kind="stable")]

    error = page_type == "ERROR"
    make_dead = error & (failures >= settings.max_failures)
    retry_at = last + retry_delay_units(failures, settings) * unit
    retry = error & ~make_dead & ~(retry_at > now)
    dead = page_type == "DEAD"
    # A page read but still UNKNOWN answered with a redirect (its content is its target's).
    # Offered as a discovery every unit it would take the place of pages never read (it
    # holds OPIC cash like them): it is checked again at the background level, as DEAD is.
    unknown = page_type == "UNKNOWN"
    redirected = unknown & np.isfinite(last)
    background = (dead | redirected) & ~(last + settings.dead_recheck_units * unit > now)

    unread = np.flatnonzero(unknown & ~np.isfinite(last))
    n_discover = min(len(unread), math.floor(settings.discovery_bandwidth_per_unit))
    cash = np.zeros(len(ids)) if opic_cash is None else np.nan_to_num(np.asarray(opic_cash, float))
    if n_discover < len(unread):
        top = np.argpartition(-cash[unread], n_discover - 1)[:n_discover] if n_discover else []
        unread = unread[top]
    unread = unread[np.lexsort((ids[unread], -cash[unread]))]

    return UnitPlan(
        refresh=ids[due][order],
        refresh_scores=score[order],
        upcoming=ids[upcoming],
        upcoming_at=next_refresh[upcoming],
        upcoming_scores=weight[upcoming] * plan.interval[upcoming],
        retry=ids[retry],
        discovery=ids[unread],
        discovery_scores=cash[unread],
        background=ids[background],
        make_dead=ids[make_dead],
        policy=plan,
        next_refresh=next_refresh,
        interval_units=np.where(refreshable, plan.interval, np.inf),
        change_rate=rate,
        r=r,
    )


class RefreshTimetable:
    """One unit's upcoming refreshes, handed to the crawler each at its own moment (§6.6).

    The refresh pass runs once per unit; between two passes a light, frequent call of
    :meth:`pop_due` releases the pages whose moment has come, so refreshes are spread over
    the unit in due-time order instead of arriving at the crawler in one batch.

    Examples
    --------
    >>> table = RefreshTimetable(np.array([7, 8, 9]), np.array([30.0, 10.0, 20.0]))
    >>> table.pop_due(20.0)[0].tolist(), table.pop_due(25.0)[0].tolist(), len(table)
    ([8, 9], [], 1)
    """

    def __init__(
        self, url_ids: np.ndarray, due_at: np.ndarray, scores: np.ndarray | None = None
    ) -> None:
        order = np.argsort(np.asarray(due_at, dtype=np.float64), kind="stable")
        self._ids = np.asarray(url_ids, dtype=np.int64)[order]
        self._due_at = np.asarray(due_at, dtype=np.float64)[order]
        self._scores = np.zeros(len(order)) if scores is None else np.asarray(scores)[order]
        self._next = 0

    @classmethod
    def of_plan(cls, plan: UnitPlan) -> RefreshTimetable:
        """The timetable of a unit's upcoming refreshes."""
        return cls(plan.upcoming, plan.upcoming_at, plan.upcoming_scores)

    def pop_due(self, now: float) -> tuple[np.ndarray, np.ndarray]:
        """The URL-Ids whose moment is ≤ ``now`` and not released yet, with their scores."""
        end = int(np.searchsorted(self._due_at, now, side="right"))
        start, self._next = self._next, max(self._next, end)
        return self._ids[start : self._next], self._scores[start : self._next]

    def __len__(self) -> int:
        """Refreshes not released yet."""
        return len(self._ids) - self._next


async def submit_plan(plan: UnitPlan, queue: CrawlQueue) -> int:
    """Hand a unit's due pages to the crawler queue in one call (:meth:`UnitPlan.batches`);
    returns how many it queued. The ``upcoming`` pages are left to a :class:`RefreshTimetable`.
    """
    return await queue.submit_plan(plan.batches())


def refreshes_per_unit(
    next_refresh: np.ndarray, interval_units: np.ndarray, now: float, unit_s: float, units: int
) -> np.ndarray:
    """Refreshes expected in each of the next ``units`` time units, recurrences included.

    Overdue pages count in the first unit; a page of period t then recurs every t units.
    """
    start = np.maximum(np.asarray(next_refresh, dtype=np.float64), now)
    period = np.asarray(interval_units, dtype=np.float64) * unit_s
    planned = np.isfinite(start) & np.isfinite(period) & (period > 0)
    start, period = start[planned], period[planned]
    edges = now + unit_s * np.arange(1, units + 1)
    # refreshes at start + j·period (j ≥ 0) strictly before each edge, one edge at a time
    cumulative = [
        np.maximum(np.ceil((edge - start) / period), 0.0).sum() for edge in edges.tolist()
    ]
    return np.diff(np.concatenate([[0.0], cumulative])).astype(np.int64)
