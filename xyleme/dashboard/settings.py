"""The dashboard's settings: documented defaults and ranges (``conventions``'s convention)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS
from refresh.settings import RefreshSettings
from xyleme.config import CONFIG_FILE, load_config


@dataclass(frozen=True, slots=True, config=SETTINGS)
class DashboardSettings:
    """What the dashboard shows and how much of it; every field has a documented default."""

    top_pages: Annotated[int, Field(ge=1, le=10_000)] = 20
    """Rows of each top-pages table of the Rankings view (``/api/rankings``' default
    ``limit``)."""
    page_size: Annotated[int, Field(ge=1, le=100_000)] = 50
    """Rows per page of every other paged list of the API and the views, unless ``?limit=``
    asks for another number up to ``max_page_size``."""
    max_page_size: Annotated[int, Field(ge=1, le=100_000)] = 500
    """The largest ``limit`` a request may ask for."""
    histogram_bins: Annotated[int, Field(ge=1, le=1_000)] = 24
    """Logarithmic bins of the schedule's histograms of intervals and change rates."""
    distribution_points: Annotated[int, Field(ge=2, le=100_000)] = 200
    """Log-spaced ranks sampled from each rank distribution of the Rankings view."""
    due_units: Annotated[int, Field(ge=1, le=10_000)] = 14
    """Coming time units shown in the "due per unit" chart."""
    growth_points: Annotated[int, Field(ge=1, le=10_000)] = 40
    """Points of the repository's growth curves."""
    live_sample_seconds: Annotated[float, Field(ge=0.01, le=3600.0)] = 2.0
    """Real seconds between two samples of the daemon's live figures."""
    live_samples_kept: Annotated[int, Field(ge=1, le=1_000_000)] = 300
    """Samples of live figures kept for the "over time" charts (10 minutes at 2 s)."""
    query_time_limit_s: Annotated[float, Field(gt=0.0, le=3600.0)] = 10.0
    """Real seconds (and CPU seconds) an XPath query may run before it is stopped."""
    query_memory_mb: Annotated[int, Field(ge=16, le=1_048_576)] = 512
    """Memory an XPath query's worker process may allocate beyond the interpreter's own."""
    query_workers: Annotated[int, Field(ge=1, le=64)] = 2
    """XPath queries run at once, each in a worker process of the lowest priority."""
    query_queue: Annotated[int, Field(ge=0, le=1_000)] = 4
    """XPath queries that may wait for a worker; more are refused with 429 and Retry-After."""
    max_body_bytes: Annotated[int, Field(ge=1_024, le=64 * 2**20)] = 64 * 1024
    """The largest request body (an admin action's); a larger one is refused with 413."""
    max_xpath_length: Annotated[int, Field(ge=1, le=1_000_000)] = 2000
    """Longer XPath expressions are refused."""
    max_neighbours: Annotated[int, Field(ge=1, le=100_000)] = 200
    """Children, parents, observations and versions shown on a page view (``/api/page/LIST``
    pages through them all)."""
    cache_seconds: Annotated[float, Field(ge=0.0, le=3600.0)] = 2.0
    """Real seconds one refresh schedule (a scan of every page) serves all requests; the
    status figures are recomputed in the background when older."""

    def __post_init__(self) -> None:
        if max(self.page_size, self.top_pages) > self.max_page_size:
            raise ValueError(
                "dashboard settings page_size and top_pages must not exceed max_page_size"
            )


def refresh_settings(repo_dir: Path) -> RefreshSettings:
    """The refresh settings of ``repo_dir/xyleme.toml`` as the daemon and ``xyleme schedule``
    read them (``[refresh]``, with G, θ and the time unit from ``[bandwidth]`` and
    ``[clock]``); a bad file raises ``xyleme.config.ConfigError``, a :class:`ValueError`."""
    return load_config(Path(repo_dir) / CONFIG_FILE).refresh
