"""Choosing each page's λ: Last-Modified when reliable, change observations, else a prior (§6.1).

§6.1: "a priori, we use last date of change when available unless (i) it is not available or
(ii) Xyleme detects that the web server provides an unreliable last date of change." So per
page: eq. 10 (the variant ``settings.last_modified_estimator`` names) where the Last-Modified
passes the checks of :mod:`refresh.observations`, eq. 9 otherwise (or its empirical-Bayes
variant, ``settings.change_observation_estimator``), and for pages without a single access
interval (never read, or read once) the prior of their type and host.
"""

from __future__ import annotations

import numpy as np

from refresh.bayes import empirical_bayes_rates
from refresh.estimators import (
    EstimateKind,
    RateEstimates,
    change_observation_mle,
    last_modified_rate,
)
from refresh.observations import (
    LastModifiedVerdict,
    ObservationBatch,
    last_modified_verdicts,
    spread_host_verdicts,
)
from refresh.settings import RefreshSettings


def estimate_change_rates(
    batch: ObservationBatch,
    settings: RefreshSettings | None = None,
    *,
    host_ids: np.ndarray | None = None,
) -> tuple[RateEstimates, np.ndarray]:
    """λ of every page of ``batch`` (per simulated second) and its Last-Modified verdicts.

    Parameters
    ----------
    batch
        The pages' access histories (``Metadata.observations``, packed).
    settings
        Which eq. 10 variant, clock skew and disagreement tolerances.
    host_ids
        An integer host key per page; when given, hosts with mostly unreliable Last-Modified
        are distrusted as a whole.

    Returns
    -------
    estimates, verdicts
        ``estimates.rate`` is NaN (kind PRIOR) where no access interval exists: fill it with
        :func:`group_prior`. ``verdicts`` holds a :class:`LastModifiedVerdict` per page.

    Examples
    --------
    >>> from collections import namedtuple
    >>> O = namedtuple("O", "at changed last_modified", defaults=[None])
    >>> batch = ObservationBatch.from_observations(
    ...     [[O(0, None), O(1e4, True), O(2e4, False)], [O(0, None, -4e3), O(1e4, True, 6e3)]]
    ... )
    >>> est, verdicts = estimate_change_rates(batch)
    >>> [EstimateKind(k).label for k in est.kind], verdicts.tolist()
    (['change_mle', 'last_modified'], [1, 0])
    """
    settings = settings or RefreshSettings()
    intervals = batch.intervals()
    estimates = change_observation_mle(intervals)
    observed = estimates.kind != EstimateKind.PRIOR
    mode = settings.change_observation_estimator
    if mode == "empirical_bayes" or (
        mode == "auto" and observed.sum() >= settings.empirical_bayes_min_pages
    ):
        estimates = RateEstimates(
            np.where(observed, empirical_bayes_rates(intervals), estimates.rate),
            np.where(observed, np.int8(EstimateKind.EMPIRICAL_BAYES), estimates.kind),
        )
    verdicts = last_modified_verdicts(
        batch, clock_skew_s=settings.clock_skew_s, max_disagreement=settings.max_lm_disagreement
    )
    if host_ids is not None:
        verdicts = spread_host_verdicts(
            verdicts, host_ids, unreliable_share=settings.host_unreliable_share
        )
    lm_rate, usable = last_modified_rate(
        batch, censored=settings.last_modified_estimator == "censored"
    )
    use_lm = usable & (verdicts == LastModifiedVerdict.RELIABLE)
    rate = np.where(use_lm, lm_rate, estimates.rate)
    kind = np.where(use_lm, np.int8(EstimateKind.LAST_MODIFIED), estimates.kind).astype(np.int8)
    return RateEstimates(rate, kind), verdicts


def group_prior(
    rate: np.ndarray,
    type_keys: np.ndarray,
    host_keys: np.ndarray,
    *,
    min_pages: int = 5,
    default: float,
) -> np.ndarray:
    """A prior λ for every page: the geometric mean of the estimates of its type and host.

    Parameters
    ----------
    rate
        Each page's estimated λ, NaN where it has none.
    type_keys, host_keys
        Integer (or string) keys of each page's type and host.
    min_pages
        How many estimated pages a (type, host) group needs to give its prior; smaller groups
        use their type's geometric mean, and types with fewer pages ``default``.
    default
        The λ used when neither the group nor the type has enough estimates.

    Returns
    -------
    numpy.ndarray
        The prior of every page (also of pages that have an estimate).

    Notes
    -----
    Geometric, not arithmetic, means: change rates spread over orders of magnitude, and the
    sqrt rule's cost depends on log-scale errors (a page at 10× its λ costs as much as one at
    λ/10 up to a constant).

    Examples
    --------
    >>> rate = np.array([1.0, 4.0, np.nan, np.nan])
    >>> group_prior(rate, np.array([0, 0, 0, 1]), np.array([7, 7, 7, 7]), min_pages=2, default=0.5)
    array([2. , 2. , 2. , 0.5])
    """
    known = np.isfinite(rate) & (rate > 0)
    log_rate = np.where(known, np.log(np.where(known, rate, 1.0)), 0.0)

    def group_means(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, inverse = np.unique(keys, return_inverse=True, axis=0)
        inverse = inverse.ravel()
        n = np.bincount(inverse, weights=known)
        total = np.bincount(inverse, weights=log_rate)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.exp(total / n)
        return mean[inverse], n[inverse]

    type_keys, host_keys = np.asarray(type_keys), np.asarray(host_keys)
    pair = np.stack(
        [
            np.unique(type_keys, return_inverse=True)[1].ravel(),
            np.unique(host_keys, return_inverse=True)[1].ravel(),
        ],
        axis=1,
    )
    pair_mean, pair_n = group_means(pair)
    type_mean, type_n = group_means(type_keys)
    prior = np.full(len(rate), float(default))
    prior = np.where(type_n >= min_pages, type_mean, prior)
    return np.where(pair_n >= min_pages, pair_mean, prior)


def fill_with_prior(estimates: RateEstimates, prior: np.ndarray) -> RateEstimates:
    """Give the pages without an estimate (kind PRIOR) their prior λ."""
    missing = estimates.kind == EstimateKind.PRIOR
    return RateEstimates(np.where(missing, prior, estimates.rate), estimates.kind)
