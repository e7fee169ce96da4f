"""The dashboard's settings: documented defaults, built from plain values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from refresh.settings import RefreshSettings
from xyleme.config import CONFIG_FILE, load_config


@dataclass(frozen=True, slots=True)
class DashboardSettings:
    """What the dashboard shows and how much of it; every field has a documented default."""

    top_pages: int = 20
    """Rows of each top-pages table of the Rankings view."""
    page_size: int = 50
    """Rows per page of the schedule table and of query results (``?limit=`` up to
    ``max_page_size``)."""
    max_page_size: int = 500
    """The largest ``limit`` a request may ask for."""
    due_units: int = 14
    """Coming time units shown in the "due per unit" chart."""
    growth_points: int = 40
    """Points of the repository's growth curves."""
    live_sample_seconds: float = 2.0
    """Real seconds between two samples of the daemon's live figures."""
    live_samples_kept: int = 300
    """Samples of live figures kept for the "over time" charts (10 minutes at 2 s)."""
    query_time_limit_s: float = 10.0
    """Real seconds (and CPU seconds) an XPath query may run before it is stopped."""
    query_memory_mb: int = 512
    """Memory an XPath query's worker process may allocate beyond the interpreter's own."""
    query_workers: int = 2
    """XPath queries run at once, each in a worker process of the lowest priority."""
    query_queue: int = 4
    """XPath queries that may wait for a worker; more are refused with 429 and Retry-After."""
    max_body_bytes: int = 64 * 1024
    """The largest request body (an admin action's); a larger one is refused with 413."""
    max_xpath_length: int = 2000
    """Longer XPath expressions are refused."""
    max_neighbours: int = 200
    """Children and parents listed on a page view."""
    cache_seconds: float = 2.0
    """Real seconds one refresh schedule (a scan of every page) serves all requests; the
    status figures are recomputed in the background when older."""

    def __post_init__(self) -> None:
        for name in ("top_pages", "page_size", "max_page_size", "due_units", "growth_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"dashboard setting {name} must be at least 1")
        for name in ("query_memory_mb", "query_workers", "max_body_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"dashboard setting {name} must be at least 1")
        if self.query_queue < 0 or not self.query_time_limit_s > 0:
            raise ValueError("dashboard settings query_queue ≥ 0 and query_time_limit_s > 0")
        if self.page_size > self.max_page_size:
            raise ValueError("dashboard setting page_size must not exceed max_page_size")


def refresh_settings(repo_dir: Path) -> RefreshSettings:
    """The refresh settings of ``repo_dir/xyleme.toml`` as the daemon and ``xyleme schedule``
    read them (``[refresh]``, with G, θ and the time unit from ``[bandwidth]`` and
    ``[clock]``); a bad file raises ``xyleme.config.ConfigError``, a :class:`ValueError`."""
    return load_config(Path(repo_dir) / CONFIG_FILE).refresh
