"""The Prometheus exposition of the dashboard's figures (``/metrics``), with prometheus-client.

The figures are the same dicts the views show: a fresh registry is filled per scrape from
them, so a scrape costs one read of the repository and nothing is kept between scrapes.
"""

from __future__ import annotations

import math
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, generate_latest

from xyleme.dashboard.live import counter_value

POLICY_GAUGES = {
    "bandwidth_G": ("xyleme_bandwidth_pages_per_unit", "Crawl bandwidth G in pages per unit"),
    "discovery_share_theta": ("xyleme_discovery_share", "Share θ of G given to discovery"),
    "S": ("xyleme_refresh_s", "S = sum over pages of sqrt(r·λ) (acquisition paper §6.4)"),
    "K": ("xyleme_refresh_k_units", "K = S / G_r: refresh intervals are K / sqrt(r·λ)"),
    "omega": ("xyleme_obsolescence_omega", "Expected obsolescence of the refresh plan Ω(G)"),
    "pages_at_floor": ("xyleme_refresh_pages_at_floor", "Pages refreshed every unit (t_i floor)"),
    "due_now": ("xyleme_refresh_due_now", "Refreshes due in the current time unit"),
    "discovery_now": ("xyleme_discovery_now", "Unread pages chosen for discovery this unit"),
}


def metrics_text(status: dict[str, Any], due_per_unit: list[int]) -> tuple[bytes, str]:
    """The exposition text of one scrape and its content type.

    ``status`` is :meth:`RepositoryFigures.status`'s answer (with the live figures when a
    daemon serves the dashboard), ``due_per_unit`` the schedule's refreshes per coming unit.
    """
    registry = CollectorRegistry()
    pages = Gauge("xyleme_pages", "Pages in the repository by type", ["type"], registry=registry)
    for page_type, count in status["pages"].items():
        pages.labels(type=page_type).set(count)
    for key, (name, documentation) in POLICY_GAUGES.items():
        value = status["policy"].get(key)
        Gauge(name, documentation, registry=registry).set(math.nan if value is None else value)
    due = Gauge(
        "xyleme_refresh_due_per_unit",
        "Refreshes expected in each coming time unit",
        ["unit"],
        registry=registry,
    )
    for unit, count in enumerate(due_per_unit):
        due.labels(unit=str(unit)).set(count)
    live = status.get("live")
    if live:
        queues = Gauge(
            "xyleme_queue_requests",
            "Requests waiting per crawler priority level",
            ["level"],
            registry=registry,
        )
        for level, size in (live.get("queues") or {}).items():
            queues.labels(level=str(level)).set(size)
        for key, documentation in (
            ("fetched", "Fetch results recorded since the daemon started"),
            ("errors", "Failed fetches (ERROR or DEAD) since the daemon started"),
        ):
            if key in live:
                value = counter_value(live[key])
                Gauge(f"xyleme_{key}", documentation, registry=registry).set(value)
        rates = live.get("rates") or {}
        if rates.get("fetch_rate"):
            Gauge(
                "xyleme_fetch_rate",
                "Fetches per real second over the last sample interval",
                registry=registry,
            ).set(rates["fetch_rate"][-1])
    return generate_latest(registry), CONTENT_TYPE_LATEST
