"""The refresh module's settings: one typed dataclass of documented defaults.

Built from plain values (the daemon composes it into the TOML later); every field says what it
does and in which unit. Times are simulated seconds (``metadata.clock``) unless a name ends in
``_units``, which counts time units (``time_unit_s``, the paper's shortest refresh interval).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

DAY_S = 86_400.0


@dataclass(frozen=True)
class RefreshSettings:
    """Documented defaults of the refresh policy (paper §6).

    Attributes
    ----------
    time_unit_s
        The time unit in simulated seconds: the shortest interval between two refreshes of a
        page and the period of the scan (§6 "Time Unit"; 24 h in the paper).
    bandwidth_per_unit
        G, the pages the crawler can fetch per time unit (§6.3.1; 2.4 million in the paper).
    discovery_share
        θ of §6.5 as a fraction in [0, 1): the part of G given to pages never read; refreshes
        get G_r = (1 − θ)·G.
    importance_floor
        After normalising r to mean 1 per type, r is raised to at least this value so every
        page stays refreshable (§6.4).
    importance_threshold
        Pages whose normalised r is below this value are never read nor refreshed (r = 0);
        0 disables the threshold (§6.4).
    default_change_rate_per_unit
        The prior λ, in changes per time unit, for pages of a type and host with no estimate.
    prior_min_pages
        How many estimated pages a (type, host) group needs before its geometric-mean λ is used
        as the prior of its unread pages; smaller groups fall back to the type, then the default.
    last_modified_estimator
        "censored" (λ = C / (Σl + Σv), the maximum likelihood) or "paper" (eq. 10, λ = C / Σl).
        The default is the one ``benchmarks/bench_estimators.py`` shows closer to the truth.
    change_observation_estimator
        For pages without a reliable Last-Modified: "eq9" (each page's maximum likelihood,
        §6.1.1), "empirical_bayes" (its posterior mean under the distribution of λ fitted to
        all pages, ``refresh.bayes``), or "auto": empirical Bayes when at least
        ``empirical_bayes_min_pages`` pages of the batch have an access interval, eq. 9
        otherwise. The Bayes variant needs many pages to learn its prior, and then schedules
        much better (``bench_freshness.py``: 1.66 Ω against 2.74 Ω).
    empirical_bayes_min_pages
        The batch size from which "auto" uses empirical Bayes.
    clock_skew_s
        Tolerance for comparing a server's Last-Modified with our fetch time.
    max_lm_disagreement
        Largest fraction of access intervals where Last-Modified and the MD5 may disagree
        before the page's Last-Modified is declared unreliable.
    host_unreliable_share
        A host whose share of pages with unreliable Last-Modified exceeds this is unreliable as
        a whole: all its pages use change observations only.
    retry_backoff_units, retry_backoff_factor, max_retry_backoff_units
        A page in ERROR is retried retry_backoff_units·factor^(failures−1) units after its last
        attempt, capped at max_retry_backoff_units.
    max_failures
        Consecutive failures after which a page becomes DEAD.
    dead_recheck_units
        DEAD pages, and pages that answered with a redirect, are re-checked at the background
        level once every this many units.
    """

    time_unit_s: float = DAY_S
    bandwidth_per_unit: float = 2_400_000.0
    discovery_share: float = 0.1
    importance_floor: float = 0.01
    importance_threshold: float = 0.0
    default_change_rate_per_unit: float = 0.1
    prior_min_pages: int = 5
    last_modified_estimator: str = "censored"
    change_observation_estimator: str = "auto"
    empirical_bayes_min_pages: int = 1000
    clock_skew_s: float = 60.0
    max_lm_disagreement: float = 0.1
    host_unreliable_share: float = 0.5
    retry_backoff_units: float = 1.0
    retry_backoff_factor: float = 2.0
    max_retry_backoff_units: float = 30.0
    max_failures: int = 5
    dead_recheck_units: float = 30.0

    def __post_init__(self) -> None:
        if not self.time_unit_s > 0:
            raise ValueError(f"time_unit_s must be positive, got {self.time_unit_s!r}")
        if not self.bandwidth_per_unit > 0:
            raise ValueError(
                f"bandwidth_per_unit must be positive, got {self.bandwidth_per_unit!r}"
            )
        if not 0 <= self.discovery_share < 1:
            raise ValueError(f"discovery_share must be in [0, 1), got {self.discovery_share!r}")
        if self.importance_floor < 0 or self.importance_threshold < 0:
            raise ValueError("importance_floor and importance_threshold must be >= 0")
        if self.last_modified_estimator not in ("censored", "paper"):
            raise ValueError(
                "last_modified_estimator must be 'censored' or 'paper', "
                f"got {self.last_modified_estimator!r}"
            )
        if self.change_observation_estimator not in ("eq9", "empirical_bayes", "auto"):
            raise ValueError(
                "change_observation_estimator must be 'eq9', 'empirical_bayes' or 'auto', "
                f"got {self.change_observation_estimator!r}"
            )
        if self.max_failures < 1:
            raise ValueError(f"max_failures must be >= 1, got {self.max_failures!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RefreshSettings:
        """Settings from plain values (e.g. the ``[refresh]`` table of ``xyleme.toml``).

        Unknown names raise ValueError naming them, so a typo never passes silently.

        >>> RefreshSettings.from_mapping({"bandwidth_per_unit": 10}).bandwidth_per_unit
        10
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown refresh settings: {', '.join(unknown)}")
        return cls(**values)

    @property
    def refresh_bandwidth_per_unit(self) -> float:
        """G_r = (1 − θ)·G, the refreshes per time unit (§6.5)."""
        return (1.0 - self.discovery_share) * self.bandwidth_per_unit

    @property
    def discovery_bandwidth_per_unit(self) -> float:
        """θ·G, the first reads of unread pages per time unit (§6.5)."""
        return self.discovery_share * self.bandwidth_per_unit
