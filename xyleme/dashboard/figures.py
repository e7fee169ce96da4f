"""The figures behind every view, computed from the repository through public APIs only.

:class:`RepositoryFigures` opens the metadata read-only (``Metadata.open(readonly=True)``: a
WAL reader that sees each commit of a daemon writing at the same time) and answers one
JSON-ready dict per view. Every method is synchronous and may scan all pages, so the web
handlers run them in a worker thread, never on the event loop the daemon shares.

The refresh figures follow the acquisition paper's §6.4: r from the rankings (importance for
XML, interest for HTML, each normalised to mean 1 over its type, floored), λ from the stored
``change_rate``, S = Σ sqrt(r_i·λ_i), K = S / G_r and the optimal obsolescence
Ω(G) = S² / (2·G_r), with G_r = (1 − θ)·G (eq. 18–22).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from metadata import PAGE_TYPE_CODE, InvalidURL, Metadata, PageType, UnknownPage
from xyleme.dashboard.settings import DashboardSettings, PolicyFigures
from xyleme.dashboard.warehouse import stored_versions

DATABASE = "metadata.db"
TYPE_NAMES = np.array([page_type.value for page_type in PAGE_TYPE_CODE], dtype=object)
IMPORTANCE_FLOOR = 0.01
"""The least r a ranked page gets, so every page stays refreshable (§6.4)."""


class PageNotFound(LookupError):
    """The page view was asked for a URL or URL-Id the repository does not hold."""


def _finite(value: float | None) -> float | None:
    """JSON has no NaN: unknown numbers become null."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def refresh_weights(view: dict[str, np.ndarray]) -> np.ndarray:
    """r of every page of a refresh view (§6.4): XML and DTD pages by importance, HTML pages
    by interest, each divided by its type's mean (a page without a score gets 1), raised to
    :data:`IMPORTANCE_FLOOR`; other types (UNKNOWN, ERROR, DEAD) get 0."""
    types = view["type"]
    r = np.zeros(len(types))
    groups = (
        (
            np.isin(types, [PAGE_TYPE_CODE[PageType.XML], PAGE_TYPE_CODE[PageType.DTD]]),
            "importance",
        ),
        (types == PAGE_TYPE_CODE[PageType.HTML], "interest"),
    )
    for members, column in groups:
        scores = view[column][members]
        known = np.isfinite(scores) & (scores > 0)
        weight = np.ones(len(scores))
        if known.any():
            weight[known] = scores[known] / scores[known].mean()
        r[members] = np.maximum(weight, IMPORTANCE_FLOOR)
    return r


class RepositoryFigures:
    """Read-only figures of one repository (see the module docstring)."""

    def __init__(self, repo_dir: Path, settings: DashboardSettings, policy: PolicyFigures) -> None:
        self.repo_dir = Path(repo_dir)
        self.settings = settings
        self.policy = policy
        self.md = Metadata.open(self.repo_dir / DATABASE, readonly=True)

    def close(self) -> None:
        self.md.close()

    # ------------------------------------------------------------------ time

    def now(
        self, view: dict[str, np.ndarray] | None = None, live_now: float | None = None
    ) -> float:
        """Simulated now: the daemon's when it says, else the latest time the repository
        recorded (a read or a discovery; the wall clock for an empty repository). Simulated
        time may run ahead of the wall clock (the demo) or behind it (a replayed run)."""
        if live_now is not None:
            return float(live_now)
        view = self.md.refresh_view() if view is None else view
        latest = [
            float(values[np.isfinite(values)].max())
            for values in (view["last_access"], view["discovered_at"])
            if np.isfinite(values).any()
        ]
        return max(latest) if latest else time.time()

    # ------------------------------------------------------------------ Overview

    def status(self, live: dict[str, Any] | None = None) -> dict[str, Any]:
        """Pages by type, the repository's growth, the refresh policy's G, S, K and Ω."""
        view = self.md.refresh_view()
        now = self.now(view, (live or {}).get("now"))
        codes, counts = np.unique(view["type"], return_counts=True)
        by_type = {page_type.value: 0 for page_type in PageType}
        for code, count in zip(codes.tolist(), counts.tolist(), strict=True):
            by_type[TYPE_NAMES[code]] = count
        return {
            "now": now,
            "pages": by_type,
            "pages_total": len(view["id"]),
            "growth": self._growth(view, now),
            "policy": self._policy(view),
            "live": live,
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

    def _policy(self, view: dict[str, np.ndarray]) -> dict[str, float]:
        """G, θ, G_r, S, K and Ω (eq. 18–22) over the pages with a known λ and r > 0."""
        unit = self.policy.time_unit_s
        weight = refresh_weights(view) * view["change_rate"] * unit
        weight = weight[np.isfinite(weight) & (weight > 0)]
        s = float(np.sqrt(weight).sum())
        g_r = self.policy.refresh_bandwidth
        return {
            "G": self.policy.bandwidth_per_unit,
            "theta": self.policy.discovery_share,
            "G_r": g_r,
            "time_unit_s": unit,
            "S": s,
            "K": s / g_r if g_r > 0 else math.inf,
            "omega": s * s / (2 * g_r) if g_r > 0 else math.inf,
            "pages_with_rate": int(weight.size),
        }

    # ------------------------------------------------------------------ Refresh schedule

    def schedule(
        self, search: str = "", offset: int = 0, limit: int | None = None, now: float | None = None
    ) -> dict[str, Any]:
        """Due pages per coming unit, intervals and λ, and the table of next refreshes.

        The table lists the pages with a stored next refresh, soonest first, whose URL
        contains ``search`` (case-insensitive), ``limit`` rows from ``offset``.
        """
        view = self.md.refresh_view()
        now = self.now(view) if now is None else now
        unit = self.policy.time_unit_s
        limit = self.settings.page_size if limit is None else limit
        r = refresh_weights(view)
        rate_per_unit = view["change_rate"] * unit
        interval_units = (view["next_refresh"] - view["last_access"]) / unit
        planned = np.flatnonzero(np.isfinite(view["next_refresh"]))
        order = planned[np.argsort(view["next_refresh"][planned], kind="stable")]
        rows, matched = self._table_rows(view, order, search, offset, limit)
        return {
            "now": now,
            "policy": self._policy(view),
            "due_per_unit": self._due_per_unit(view, interval_units, now).tolist(),
            "intervals_units": [v for v in interval_units.tolist() if math.isfinite(v)],
            "change_rates_per_unit": [v for v in rate_per_unit.tolist() if math.isfinite(v)],
            "search": search,
            "offset": offset,
            "limit": limit,
            "matched": matched,
            "pages": [
                {
                    "url_id": int(view["id"][row]),
                    "url": url,
                    "type": TYPE_NAMES[view["type"][row]],
                    "next_refresh": _finite(view["next_refresh"][row]),
                    "in_units": _finite((view["next_refresh"][row] - now) / unit),
                    "interval_units": _finite(interval_units[row]),
                    "change_rate_per_unit": _finite(rate_per_unit[row]),
                    "r": float(r[row]),
                }
                for row, url in rows
            ],
        }

    def _table_rows(
        self, view: dict[str, np.ndarray], order: np.ndarray, search: str, offset: int, limit: int
    ) -> tuple[list[tuple[int, str]], int]:
        """The rows (index in the view, URL) of one table page, and how many rows match."""
        if not search:
            chosen = order[offset : offset + limit]
            urls = self.md.urls_of(view["id"][chosen].tolist())
            return list(zip(chosen.tolist(), urls, strict=True)), int(order.size)
        needle, found = search.lower(), []
        for start in range(0, order.size, 5000):  # URLs read in chunks, never all at once
            chunk = order[start : start + 5000]
            urls = self.md.urls_of(view["id"][chunk].tolist())
            found.extend(
                (row, url)
                for row, url in zip(chunk.tolist(), urls, strict=True)
                if needle in url.lower()
            )
        return found[offset : offset + limit], len(found)

    def _due_per_unit(
        self, view: dict[str, np.ndarray], interval_units: np.ndarray, now: float
    ) -> np.ndarray:
        """Refreshes falling in each of the coming units, a page counted at each recurrence.

        A page next due at n (overdue pages: now) with interval i is read at n, n + i, …;
        the reads before time T number ceil((T − n)/i) when T > n.
        """
        unit, units = self.policy.time_unit_s, self.settings.due_units
        next_refresh = view["next_refresh"]
        planned = np.isfinite(next_refresh)
        first = (np.maximum(next_refresh[planned], now) - now) / unit
        step = interval_units[planned]
        periodic = np.isfinite(step) & (step > 0)
        edges = np.arange(units + 1, dtype=np.float64)
        reads_before = np.zeros((units + 1, first.size))
        for k, edge in enumerate(edges):
            ahead = np.maximum(edge - first, 0.0)
            once = (ahead > 0).astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                repeated = np.ceil(ahead / np.where(periodic, step, 1.0))
            reads_before[k] = np.where(periodic, repeated, once)
        return np.diff(reads_before.sum(axis=1)).astype(np.int64)

    # ------------------------------------------------------------------ Rankings

    def rankings(self, top: int | None = None) -> dict[str, Any]:
        """Top XML by importance, top HTML by interest, top pages by OPIC estimate, and each
        score's values in decreasing order for the rank distributions."""
        top = self.settings.top_pages if top is None else top
        view = self.md.refresh_view()
        xml = view["type"] == PAGE_TYPE_CODE[PageType.XML]
        html = view["type"] == PAGE_TYPE_CODE[PageType.HTML]
        tables = {
            "xml_importance": (xml, "importance"),
            "html_interest": (html, "interest"),
            "opic": (np.ones(len(xml), dtype=bool), "opic_history"),
        }
        answer: dict[str, Any] = {"top": top}
        for name, (members, column) in tables.items():
            values = view[column]
            chosen = np.flatnonzero(members & np.isfinite(values))
            ranked = chosen[np.argsort(-values[chosen], kind="stable")]
            best = ranked[:top]
            urls = self.md.urls_of(view["id"][best].tolist())
            answer[name] = {
                "score": column,
                "ranked_pages": int(ranked.size),
                "pages": [
                    {
                        "rank": place + 1,
                        "url_id": int(view["id"][row]),
                        "url": url,
                        "type": TYPE_NAMES[view["type"][row]],
                        column: float(values[row]),
                    }
                    for place, (row, url) in enumerate(zip(best.tolist(), urls, strict=True))
                ],
                "distribution": values[ranked].tolist(),
            }
        return answer

    # ------------------------------------------------------------------ Page view

    def page(self, url: str | None = None, url_id: int | None = None) -> dict[str, Any]:
        """One page's record, observation history, children, parents and stored XML versions
        (None when the warehouse holds none of it).

        Raises :class:`PageNotFound` for a URL or id the repository does not hold (an
        invalid URL included).
        """
        try:
            record = self.md.page(url_id) if url is None else self.md.page_by_url(url)
        except (UnknownPage, InvalidURL) as error:
            raise PageNotFound(f"no page {url if url is not None else url_id!r}: {error}") from None
        cap = self.settings.max_neighbours
        children = self.md.children(record.url_id)
        parents = self.md.parents(record.url_id)
        fields = asdict(record)
        observations = fields.pop("observations")
        status = self.md.status(record.url_id)
        return {
            "page": {key: _finite(v) if isinstance(v, float) else v for key, v in fields.items()},
            "observations": observations,
            "children_total": int(children.size) + self.md.extra_children(record.url_id),
            "children": self._neighbours(children[:cap]),
            "parents_total": int(parents.size),
            "parents": self._neighbours(parents[:cap]),
            "load_status": None if status is None else {"status": status[0], "detail": status[1]},
            "versions": stored_versions(self.repo_dir, record.url_id),
        }

    def _neighbours(self, ids: np.ndarray) -> list[dict[str, Any]]:
        id_list = ids.tolist()
        return [
            {"url_id": url_id, "url": url}
            for url_id, url in zip(id_list, self.md.urls_of(id_list), strict=True)
        ]
