"""The figures behind every view, computed from the repository through public APIs only.

:class:`RepositoryFigures` opens the metadata read-only (``Metadata.open(readonly=True)``: a
WAL reader that sees each commit of a daemon writing at the same time) and answers one
JSON-ready dict per view. Every method is synchronous and may scan all pages, so the web
handlers run them in a worker thread, never on the event loop the daemon shares.

The refresh figures are the refresh module's (``refresh.report.schedule_report``, the same
computation as ``xyleme schedule``): λ estimated from the observations, r from the rankings,
t_i = K / sqrt(r_i·λ_i), S, K and Ω of the acquisition paper's §6 (eq. 18–22), for the
settings of the repository's ``[refresh]`` table. One report is shared by the requests of
``cache_seconds``, since it scans every page.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from metadata import PAGE_TYPE_CODE, InvalidURL, Metadata, PageRecord, PageType, UnknownPage
from refresh import RefreshSettings, ScheduleReport
from xyleme.dashboard.paging import Key, encode_cursor, next_cursor
from xyleme.dashboard.settings import DashboardSettings
from xyleme.dashboard.svg import log_bins, rank_sample
from xyleme.dashboard.warehouse import stored_versions
from xyleme.jobs import provenance, read_schedule
from xyleme.lock import holder_pid
from xyleme.status import read_status, repository_now

DATABASE = "metadata.db"
TYPE_NAMES = np.array([page_type.value for page_type in PAGE_TYPE_CODE], dtype=object)


class PageNotFound(LookupError):
    """The page view was asked for a URL or URL-Id the repository does not hold."""


class ScheduleUnavailable(RuntimeError):
    """The refresh module refused the repository's data; the message says why."""


def _finite(value: float | None) -> float | None:
    """JSON has no NaN nor infinity: unknown or unbounded numbers become null."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


class RepositoryFigures:
    """Read-only figures of one repository (see the module docstring)."""

    def __init__(
        self, repo_dir: Path, settings: DashboardSettings, refresh: RefreshSettings
    ) -> None:
        self.repo_dir = Path(repo_dir)
        self.settings = settings
        self.refresh = refresh
        self.md = Metadata.open(self.repo_dir / DATABASE, readonly=True)
        self._report: tuple[float, ScheduleReport, list[str]] | None = None
        self._report_lock = threading.Lock()

    def close(self) -> None:
        self.md.close()

    # ------------------------------------------------------------------ time

    def now(
        self, view: dict[str, np.ndarray] | None = None, live_now: float | None = None
    ) -> float:
        """Simulated now: the daemon's when it says, else the repository's
        (:func:`xyleme.status.repository_now`)."""
        if live_now is not None:
            return float(live_now)
        return repository_now(self.md, view)

    # ------------------------------------------------------------------ Overview

    def status(self, live: dict[str, Any] | None = None) -> dict[str, Any]:
        """Pages by type, the repository's growth, the refresh policy's G, S, K and Ω."""
        view = self.md.refresh_view()
        now = self.now(view, (live or {}).get("now"))
        try:
            policy = self._policy(self.report((live or {}).get("now"))[0])
        except ScheduleUnavailable as error:
            policy = {"error": str(error)}
        codes, counts = np.unique(view["type"], return_counts=True)
        by_type = {page_type.value: 0 for page_type in PageType}
        for code, count in zip(codes.tolist(), counts.tolist(), strict=True):
            by_type[TYPE_NAMES[code]] = count
        return {
            "now": now,
            "pages": by_type,
            "pages_total": len(view["id"]),
            "growth": self._growth(view, now),
            "policy": policy,
            "live": live,
            "daemon": self._daemon(),
        }

    def _daemon(self) -> dict[str, Any]:
        """What ``xyleme status`` knows of the daemon: whether one holds the repository
        (its pid), paused, seeds, the figures of its last checkpoint (None before any), and
        the crawl workers and coordinators sharing the store (``workers``)."""
        facts = read_status(self.md, holder_pid(self.repo_dir))
        return {
            "pid": facts["daemon"]["pid"],
            "paused": facts["paused"],
            "seeds": facts["seeds"],
            "checkpoint": facts["live"] or None,
            "workers": facts["workers"],
        }

    def _growth(self, view: dict[str, np.ndarray], now: float) -> dict[str, list[float]]:
        """Pages known (discovered) and read (first access) at evenly spaced times."""
        discovered = np.sort(view["discovered_at"][np.isfinite(view["discovered_at"])])
        read = np.sort(view["first_access"][np.isfinite(view["first_access"])])
        if not discovered.size:
            return {"at": [], "discovered": [], "read": []}
        start = float(min(discovered[0], read[0] if read.size else discovered[0]))
        at = np.linspace(start, max(now, start + 1.0), self.settings.growth_points)
        return {
            "at": at.tolist(),
            "discovered": np.searchsorted(discovered, at, side="right").tolist(),
            "read": np.searchsorted(read, at, side="right").tolist(),
        }

    def report(self, live_now: float | None = None) -> tuple[ScheduleReport, list[str]]:
        """The refresh module's schedule of every page at :meth:`now` and the pages' URLs;
        one report serves all requests for ``cache_seconds``."""
        with self._report_lock:
            if self._report is not None and time.monotonic() < self._report[0]:
                return self._report[1], self._report[2]
            try:
                schedule = read_schedule(
                    self.md, self.refresh, now=live_now, units=self.settings.due_units
                )
            except ValueError as error:  # e.g. observations out of time order
                raise ScheduleUnavailable(
                    f"the refresh schedule cannot be computed: {error}"
                ) from None
            report, urls = schedule.report, schedule.urls
            self._report = (time.monotonic() + self.settings.cache_seconds, report, urls)
            return report, urls

    @staticmethod
    def _policy(report: ScheduleReport) -> dict[str, Any]:
        """G, θ, G_r, S, K, Ω and this unit's work (``ScheduleReport.summary``), JSON-safe."""
        summary = report.summary()
        summary.pop("due_per_unit")
        return {k: _finite(v) if isinstance(v, float) else v for k, v in summary.items()}

    # ------------------------------------------------------------------ Refresh schedule

    def schedule(
        self,
        search: str = "",
        offset: int = 0,
        limit: int | None = None,
        live_now: float | None = None,
        start: Key | None = None,
    ) -> dict[str, Any]:
        """Due pages per coming unit, histograms of intervals and λ, and the table of next
        refreshes.

        The table lists the pages with a planned refresh, soonest first (then by URL-Id),
        whose URL contains ``search`` (case-insensitive): ``limit`` rows after the key
        ``start`` (``(next_refresh, url_id)`` of a cursor), else from ``offset``.
        """
        report, urls = self.report(live_now)
        unit = self.refresh.time_unit_s
        limit = self.settings.page_size if limit is None else limit
        planned = np.flatnonzero(np.isfinite(report.next_refresh))
        order = planned[np.argsort(report.next_refresh[planned], kind="stable")]
        if search:
            needle = search.lower()
            order = np.array(
                [row for row in order.tolist() if needle in urls[row].lower()], dtype=np.int64
            )
        matched = int(order.size)
        if start is not None:
            when, url_id = start
            times, ids = report.next_refresh[order], report.ids[order]
            order = order[(times > when) | ((times == when) & (ids > url_id))]
        else:
            order = order[offset:]
        rate_per_unit = report.change_rate * unit
        intervals = report.interval_units[np.isfinite(report.interval_units)]
        rates = rate_per_unit[report.r > 0]
        shown = order[:limit].tolist()
        return {
            "now": report.now,
            "policy": self._policy(report),
            "due_per_unit": report.due_per_unit.tolist(),
            "intervals_histogram": log_bins(intervals, self.settings.histogram_bins),
            "change_rates_histogram": log_bins(
                rates[np.isfinite(rates)], self.settings.histogram_bins
            ),
            "search": search,
            "offset": offset,
            "limit": limit,
            "matched": matched,
            "pages": [
                {
                    "url_id": int(report.ids[row]),
                    "url": urls[row],
                    "type": str(report.page_type[row]),
                    "next_refresh": _finite(report.next_refresh[row]),
                    "in_units": _finite((report.next_refresh[row] - report.now) / unit),
                    "interval_units": _finite(report.interval_units[row]),
                    "change_rate_per_unit": _finite(rate_per_unit[row]),
                    "method": str(report.method[row]),
                    "r": float(report.r[row]),
                }
                for row in shown
            ],
            "next_cursor": next_cursor(
                "schedule",
                shown,
                order.size > limit,
                lambda row: (float(report.next_refresh[row]), int(report.ids[row])),
            ),
        }

    # ------------------------------------------------------------------ Rankings

    def rankings(
        self, limit: int | None = None, start: tuple[str, Key] | None = None
    ) -> dict[str, Any]:
        """Top XML by importance, top HTML by interest, top pages by OPIC estimate, each
        score's rank distribution (at most ``distribution_points`` log-spaced ranks), and how
        the ranking module computed importance and interest (``provenance``, by kind).

        Each table is sorted by decreasing score, then URL-Id, and shows ``limit`` rows;
        ``start`` (a cursor's table and ``(score, url_id)``) continues that one table only.
        """
        limit = self.settings.top_pages if limit is None else limit
        view = self.md.refresh_view()
        xml = view["type"] == PAGE_TYPE_CODE[PageType.XML]
        html = view["type"] == PAGE_TYPE_CODE[PageType.HTML]
        tables = {
            "xml_importance": (xml, "importance"),
            "html_interest": (html, "interest"),
            "opic": (np.ones(len(xml), dtype=bool), "opic_importance"),
        }
        if start is not None:
            tables = {start[0]: tables[start[0]]}
        answer: dict[str, Any] = {
            "top": limit,
            "limit": limit,
            "provenance": provenance(self.repo_dir / "ranking"),
        }
        for name, (members, column) in tables.items():
            values, ids = view[column], view["id"]
            chosen = np.flatnonzero(members & np.isfinite(values))
            ranked = chosen[np.lexsort((ids[chosen], -values[chosen]))]
            first = 0
            if start is not None:
                score, url_id = start[1]
                scores, keys = values[ranked], ids[ranked]
                before = (scores > score) | ((scores == score) & (keys <= url_id))
                first = int(np.count_nonzero(before))
            best = ranked[first : first + limit]
            urls = self.md.urls_of(ids[best].tolist())
            ranks, distribution = rank_sample(values[ranked], self.settings.distribution_points)
            answer[name] = {
                "score": column,
                "ranked_pages": int(ranked.size),
                "pages": [
                    {
                        "rank": first + place + 1,
                        "url_id": int(ids[row]),
                        "url": url,
                        "type": TYPE_NAMES[view["type"][row]],
                        column: float(values[row]),
                    }
                    for place, (row, url) in enumerate(zip(best.tolist(), urls, strict=True))
                ],
                "next_cursor": encode_cursor(
                    "rankings", (name, float(values[best[-1]]), int(ids[best[-1]]))
                )
                if ranked.size > first + limit
                else None,
                "distribution": distribution,
                "distribution_ranks": ranks,
            }
        return answer

    # ------------------------------------------------------------------ Page view

    def page(
        self, url: str | None = None, url_id: int | None = None, live_now: float | None = None
    ) -> dict[str, Any]:
        """One page's record, its latest observations and stored XML versions (None when the
        warehouse holds none of it), its first children and parents, at most
        ``max_neighbours`` of each list with its total (``/api/page/LIST`` pages through
        them all), and its row of the refresh schedule.

        Raises :class:`PageNotFound` for a URL or id the repository does not hold (an
        invalid URL included).
        """
        record = self.record(url, url_id)
        cap = self.settings.max_neighbours
        children = self.children(record.url_id)
        parents = self.md.parents(record.url_id)
        fields = asdict(record)
        observations = fields.pop("observations")
        versions = stored_versions(self.repo_dir, record.url_id)
        status = self.md.status(record.url_id)
        return {
            "page": {key: _finite(v) if isinstance(v, float) else v for key, v in fields.items()},
            "observations": observations[-cap:],
            "observations_total": len(observations),
            "children_total": int(children.size) + self.md.extra_children(record.url_id),
            "children": self.neighbours(children[:cap]),
            "parents_total": int(parents.size),
            "parents": self.neighbours(parents[:cap]),
            "load_status": None if status is None else {"status": status[0], "detail": status[1]},
            "versions": None if versions is None else versions[-cap:],
            "versions_total": None if versions is None else len(versions),
            "schedule": self._page_schedule(record.url_id, live_now),
        }

    def record(self, url: str | None = None, url_id: int | None = None) -> PageRecord:
        """The metadata record of a URL or URL-Id; :class:`PageNotFound` if there is none."""
        try:
            return self.md.page(url_id) if url is None else self.md.page_by_url(url)
        except UnknownPage as error:
            raise PageNotFound(str(error)) from None
        except InvalidURL as error:
            raise PageNotFound(f"no page {url!r}: not a valid URL ({error.reason})") from None

    def children(self, url_id: int) -> np.ndarray:
        """A page's distinct stored children, by increasing URL-Id."""
        return np.unique(self.md.children(url_id))

    def _page_schedule(self, url_id: int, live_now: float | None) -> dict[str, Any] | None:
        """The page's row of the refresh schedule (None for a page newer than the report, or
        when the schedule cannot be computed)."""
        try:
            report, _ = self.report(live_now)
        except ScheduleUnavailable:
            return None
        row = int(np.searchsorted(report.ids, url_id))
        if row >= len(report.ids) or report.ids[row] != url_id:
            return None
        unit = self.refresh.time_unit_s
        return {
            "next_refresh": _finite(report.next_refresh[row]),
            "in_units": _finite((report.next_refresh[row] - report.now) / unit),
            "interval_units": _finite(report.interval_units[row]),
            "change_rate_per_unit": _finite(report.change_rate[row] * unit),
            "method": str(report.method[row]),
            "r": float(report.r[row]),
        }

    def neighbours(self, ids: np.ndarray) -> list[dict[str, Any]]:
        id_list = ids.tolist()
        return [
            {"url_id": url_id, "url": url}
            for url_id, url in zip(id_list, self.md.urls_of(id_list), strict=True)
        ]
