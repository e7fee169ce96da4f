"""The dashboard's settings: documented defaults, built from plain values."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


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
    """Real seconds an XPath query may run before it is stopped."""
    max_xpath_length: int = 2000
    """Longer XPath expressions are refused."""
    max_neighbours: int = 200
    """Children and parents listed on a page view."""

    def __post_init__(self) -> None:
        for name in ("top_pages", "page_size", "max_page_size", "due_units", "growth_points"):
            if getattr(self, name) < 1:
                raise ValueError(f"dashboard setting {name} must be at least 1")
        if self.page_size > self.max_page_size:
            raise ValueError("dashboard setting page_size must not exceed max_page_size")


@dataclass(frozen=True, slots=True)
class PolicyFigures:
    """The crawl bandwidth the refresh figures are computed for (§6.4 of the acquisition paper).

    Read from the repository's ``xyleme.toml`` (``[bandwidth] G``, ``theta`` and
    ``[clock] time_unit``), with the daemon's defaults when a key is absent.
    """

    bandwidth_per_unit: float = 10_000.0
    discovery_share: float = 0.1
    time_unit_s: float = 86_400.0

    @property
    def refresh_bandwidth(self) -> float:
        """G_r = (1 − θ)·G: the share of the bandwidth that refreshes known pages."""
        return (1.0 - self.discovery_share) * self.bandwidth_per_unit

    @classmethod
    def from_repository(cls, repo_dir: Path) -> PolicyFigures:
        """The figures of ``repo_dir/xyleme.toml``; defaults when the file or a key is absent.

        A file that is not valid TOML raises :class:`ValueError` naming it.
        """
        path = Path(repo_dir) / "xyleme.toml"
        if not path.exists():
            return cls()
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: not valid TOML ({error})") from None
        bandwidth, clock = config.get("bandwidth", {}), config.get("clock", {})
        defaults = cls()
        return cls(
            bandwidth_per_unit=float(bandwidth.get("G", defaults.bandwidth_per_unit)),
            discovery_share=float(bandwidth.get("theta", defaults.discovery_share)),
            time_unit_s=float(clock.get("time_unit", defaults.time_unit_s)),
        )
