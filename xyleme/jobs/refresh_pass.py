"""The refresh pass of each time unit (paper §6.5–6.6): the store read, the policy applied,
the schedule written back, the unit's work handed to the crawler.

λ is estimated from every page's observations, the sqrt(r·λ) policy gives each page its next
refresh (:func:`xyleme.jobs.schedule.read_schedule`), and the unit's work goes to the crawler
in one batched call (:meth:`refresh.scheduler.CrawlQueue.submit_plan`): the due refreshes
and retries (level 1), θ·G unread pages by OPIC cash (level 2), DEAD re-checks (level 4).
The refreshes due before the next pass wait in a :class:`~refresh.scheduler.RefreshTimetable`
that :meth:`RefreshPass.release` empties as their moments come.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Protocol

import numpy as np

from metadata import Clock, Metadata, PageType
from ranking.opic import OPIC
from refresh import (
    REFRESH_LEVEL,
    CrawlQueue,
    RefreshSettings,
    RefreshTimetable,
    ScheduleReport,
    time_averaged_obsolescence,
)
from xyleme import signals
from xyleme.jobs.schedule import read_schedule

if TYPE_CHECKING:
    from xyleme.crawler import Crawler, CrawlEvent

log = logging.getLogger(__name__)

POLICY_FIGURES = ("S", "K", "omega", "obsolescence", "due_now", "refreshed_pages")
"""The refresh policy's figures kept for ``xyleme status`` and the demo."""


class Parking(Protocol):
    """The loader's documents waiting for a DTD or entity (the crawler's ``lane``)."""

    async def expire_waiting(self) -> int: ...


class RefreshPass:
    """The refresh job: :meth:`run` once per time unit, :meth:`release` many times a unit.

    Parameters
    ----------
    md : Metadata
        Read in one snapshot, written with the λ, next refreshes and new DEAD pages.
    settings : RefreshSettings
        Bandwidth, discovery share, estimators (the ``[refresh]`` table).
    clock : Clock
        Simulated time.
    crawler : Crawler
        Takes a plan in one call (its :class:`~refresh.scheduler.CrawlQueue`); the refreshes
        it reads in a unit are counted from its events.
    opic : OPIC
        The live OPIC, whose cash picks the pages to discover.
    parking : Parking
        The loader, whose documents waiting too long for a DTD fail at each pass.
    """

    def __init__(
        self,
        md: Metadata,
        settings: RefreshSettings,
        clock: Clock,
        crawler: Crawler,
        opic: OPIC,
        parking: Parking,
    ) -> None:
        self.md = md
        self.settings = settings
        self.clock = clock
        self.queue: CrawlQueue = crawler
        self.opic = opic
        self.parking = parking
        self.last: float | None = None
        """Simulated time of the last pass."""
        self.policy: dict[str, float] = {}
        self.refreshes_per_unit: list[int] = []
        self.obsolescence_history: list[tuple[float, float, float]] = []
        """(pass time, obsolescence averaged over the unit before it, Ω(G)) per pass."""
        self._timetable = RefreshTimetable(np.empty(0, np.int64), np.empty(0))
        self._refreshes = 0
        crawler.signals.connect(signals.page_fetched, self._count_refresh)

    async def run(self) -> None:
        """The pass of one time unit; the heavy part runs in a thread, queueing on the loop."""
        now, started = self.clock.now(), time.monotonic()
        unit = self.settings.time_unit_s
        since = self.last if self.last is not None and self.last < now else now - unit
        report, obsolescence = await asyncio.to_thread(self._plan, now, self.opic.cash(), since)
        plan = report.plan
        self._timetable = RefreshTimetable.of_plan(plan)
        await self.queue.submit_plan(plan.batches())
        expired = await self.parking.expire_waiting()
        if expired:
            log.info("%d documents waited too long for a DTD or entity: failed", expired)
        self.refreshes_per_unit.append(self._refreshes)
        self._refreshes = 0
        self.last = now
        self.policy = {**report.summary(), "obsolescence": obsolescence}
        self.obsolescence_history.append((now, obsolescence, self.policy["omega"]))
        log.info(
            "refresh pass in %.1f s: %d due, %d more in this unit, %d retries, %d discoveries, "
            "%d re-checks; S %.4g, K %.4g, Ω(G) %.4g, obsolescence over the last unit %.4g",
            time.monotonic() - started,
            len(plan.refresh),
            len(plan.upcoming),
            len(plan.retry),
            len(plan.discovery),
            len(plan.background),
            self.policy["S"],
            self.policy["K"],
            self.policy["omega"],
            self.policy["obsolescence"],
        )

    async def release(self) -> int:
        """Hand the crawler the refreshes whose moment has come since the last call (§6.6).

        Each page is then read about when its interval t_i ends, not at the next unit's
        boundary: a pass once per unit with every refresh at its start reads a page read just
        after a pass only two passes later (the floored pages every 2 units instead of 1).
        Returns how many were released.
        """
        url_ids, scores = self._timetable.pop_due(self.clock.now())
        if len(url_ids):
            await self.queue.submit_plan([(url_ids, REFRESH_LEVEL, scores)])
        return len(url_ids)

    def figures(self) -> dict[str, float]:
        """The policy's figures of the last pass (:data:`POLICY_FIGURES`)."""
        return {key: self.policy[key] for key in POLICY_FIGURES if key in self.policy}

    def _plan(self, now: float, cash: np.ndarray, since: float) -> tuple[ScheduleReport, float]:
        """In a thread: the schedule, its λ and next refreshes stored, and the repository's
        obsolescence Σ r·λ·(t − last read) over the refreshed pages (eq. 21) averaged over
        [since, now], the quantity the policy keeps at Ω(G) (same λ and r as this Ω). An
        instant's value would not do: it swings with where the instant falls in the pages'
        refresh cycles."""
        schedule = read_schedule(self.md, self.settings, now=now, units=1, opic_cash=cash)
        report = schedule.report
        ids = report.ids
        estimated = ~np.isin(report.method, ["prior", "stored"])
        if estimated.any():
            self.md.set_scores("change_rate", ids[estimated], report.change_rate[estimated])
        self.md.set_scores("next_refresh", ids, report.next_refresh)
        for url_id in report.plan.make_dead.tolist():
            failures = self.settings.max_failures
            self.md.set_type(url_id, PageType.DEAD, f"{failures} failed fetches in a row")
        weight = np.where(np.isfinite(report.interval_units), report.r * report.change_rate, 0.0)
        return report, time_averaged_obsolescence(schedule.history, ids, weight, since, now)

    def _count_refresh(self, event: CrawlEvent) -> None:
        if event.level == REFRESH_LEVEL:
            self._refreshes += 1
