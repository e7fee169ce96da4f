"""The refresh module's settings: one typed dataclass of documented defaults and ranges.

Written in the convention of every package's settings (``conventions``); the daemon
composes it into ``xyleme.toml``. Times are simulated seconds (``metadata.clock``) unless a
name ends in ``_units``, which counts time units (``time_unit_s``, the paper's shortest
refresh interval).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

DAY_S = 86_400.0
YEAR_S = 366 * DAY_S
TimeUnitSeconds = Annotated[float, Field(ge=1.0, le=YEAR_S)]
"""A time unit in simulated seconds: one second to a year (also ``[clock] time_unit``)."""
Bandwidth = Annotated[float, Field(gt=0.0, le=1e12)]
"""G in pages per time unit (also ``[bandwidth] G``)."""
DiscoveryShare = Annotated[float, Field(ge=0.0, lt=1.0)]
"""θ (also ``[bandwidth] theta``)."""
Units = Annotated[float, Field(ge=0.0, le=1e6)]
"""A span in time units (a million units is millennia at the paper's daily unit)."""
Share = Annotated[float, Field(ge=0.0, le=1.0)]


@dataclass(frozen=True, config=SETTINGS)
class RefreshSettings:
    """Documented defaults of the refresh policy (paper §6)."""

    time_unit_s: TimeUnitSeconds = DAY_S
    """The time unit in simulated seconds: the shortest interval between two refreshes of a
    page and the period of the scan (§6 "Time Unit"; 24 h in the paper)."""
    bandwidth_per_unit: Bandwidth = 2_400_000.0
    """G, the pages the crawler can fetch per time unit (§6.3.1; 2.4 million in the paper)."""
    discovery_share: DiscoveryShare = 0.1
    """θ of §6.5 as a fraction in [0, 1): the part of G given to pages never read; refreshes
    get G_r = (1 − θ)·G."""
    importance_floor: Annotated[float, Field(ge=0.0, le=1000.0)] = 0.01
    """After normalising r to mean 1 per type, r is raised to at least this value so every
    page stays refreshable (§6.4)."""
    importance_threshold: Annotated[float, Field(ge=0.0, le=1000.0)] = 0.0
    """Pages whose normalised r is below this value are never read nor refreshed (r = 0);
    0 disables the threshold (§6.4)."""
    default_change_rate_per_unit: Annotated[float, Field(gt=0.0, le=1e6)] = 0.1
    """The prior λ, in changes per time unit, for pages of a type and host with no estimate."""
    prior_min_pages: Annotated[int, Field(ge=1, le=1_000_000_000)] = 5
    """How many estimated pages a (type, host) group needs before its geometric-mean λ is used
    as the prior of its unread pages; smaller groups fall back to the type, then the default."""
    last_modified_estimator: Literal["censored", "paper"] = "censored"
    """"censored" (λ = C / (Σl + Σv), the maximum likelihood) or "paper" (eq. 10, λ = C / Σl).
    The default is the one ``benchmarks/bench_estimators.py`` shows closer to the truth."""
    change_observation_estimator: Literal["eq9", "empirical_bayes", "auto"] = "auto"
    """For pages without a reliable Last-Modified: "eq9" (each page's maximum likelihood,
    §6.1.1), "empirical_bayes" (its posterior mean under the distribution of λ fitted to
    all pages, ``refresh.bayes``), or "auto": empirical Bayes when at least
    ``empirical_bayes_min_pages`` pages of the batch have an access interval, eq. 9
    otherwise. The Bayes variant needs many pages to learn its prior, and then schedules
    much better (``bench_freshness.py``: 1.66 Ω against 2.74 Ω)."""
    empirical_bayes_min_pages: Annotated[int, Field(ge=1, le=1_000_000_000_000)] = 1000
    """The batch size from which "auto" uses empirical Bayes."""
    clock_skew_s: Annotated[float, Field(ge=0.0, le=7 * DAY_S)] = 60.0
    """Tolerance for comparing a server's Last-Modified with our fetch time."""
    max_lm_disagreement: Share = 0.1
    """Largest fraction of access intervals where Last-Modified and the MD5 may disagree
    before the page's Last-Modified is declared unreliable."""
    host_unreliable_share: Share = 0.5
    """A host whose share of pages with unreliable Last-Modified exceeds this is unreliable as
    a whole: all its pages use change observations only."""
    retry_backoff_units: Units = 1.0
    """A page in ERROR is retried retry_backoff_units·factor^(failures−1) units after its last
    attempt, capped at max_retry_backoff_units."""
    retry_backoff_factor: Annotated[float, Field(ge=1.0, le=100.0)] = 2.0
    """The factor of the ERROR retries' back-off (see retry_backoff_units)."""
    max_retry_backoff_units: Units = 30.0
    """The cap of the ERROR retries' back-off (see retry_backoff_units)."""
    max_failures: Annotated[int, Field(ge=1, le=1000)] = 5
    """Consecutive failures after which a page becomes DEAD."""
    dead_recheck_units: Annotated[float, Field(gt=0.0, le=1e6)] = 30.0
    """DEAD pages, and pages that answered with a redirect, are re-checked at the background
    level once every this many units."""

    @property
    def refresh_bandwidth_per_unit(self) -> float:
        """G_r = (1 − θ)·G, the refreshes per time unit (§6.5)."""
        return (1.0 - self.discovery_share) * self.bandwidth_per_unit

    @property
    def discovery_bandwidth_per_unit(self) -> float:
        """θ·G, the first reads of unread pages per time unit (§6.5)."""
        return self.discovery_share * self.bandwidth_per_unit
