"""Empirical-Bayes change rates: the grid likelihood, the EM prior, the posterior mean."""

import numpy as np
import pytest

from refresh import (
    AccessIntervals,
    EstimateKind,
    ObservationBatch,
    RefreshSettings,
    change_observation_mle,
    estimate_change_rates,
)
from refresh.bayes import (
    empirical_bayes_rates,
    fit_grid_prior,
    grid_log_likelihood,
    posterior_mean_rate,
    rate_grid,
    resolvable_rate_grid,
)


def two_populations(seed: int, slow: float, fast: float, period: float, n: int = 3000):
    rng = np.random.default_rng(seed)
    length = rng.uniform(0.5, 1.5, (n, 12)) * period
    rate = np.where(np.arange(n) < n // 2, slow, fast)
    changed = rng.random(length.shape) < -np.expm1(-rate[:, None] * length)
    return AccessIntervals.from_arrays(length, changed), rate


def test_grid_likelihood_is_eq9s_likelihood():
    intervals = AccessIntervals.from_arrays([[2.0, 1.0, 3.0]], [[True, False, True]])
    grid = np.array([0.1, 0.5, 2.0])
    expected = [np.log(-np.expm1(-x * 2)) + np.log(-np.expm1(-x * 3)) - x * 1.0 for x in grid]
    np.testing.assert_allclose(grid_log_likelihood(intervals, grid)[0], expected)
    # its maximum on a fine grid is eq. 9's estimate
    fine = rate_grid(0.01, 10, 4000)
    best = fine[np.argmax(grid_log_likelihood(intervals, fine)[0])]
    assert best == pytest.approx(change_observation_mle(intervals).rate[0], rel=2e-3)


def test_em_recovers_a_two_point_population():
    intervals, _ = two_populations(1, slow=0.05, fast=1.0, period=1.0)
    grid = rate_grid(0.005, 20, 40)
    prior = fit_grid_prior(grid_log_likelihood(intervals, grid), iterations=300)
    assert prior.sum() == pytest.approx(1.0)
    slow_mass = prior[(grid > 0.02) & (grid < 0.12)].sum()
    fast_mass = prior[(grid > 0.5) & (grid < 2.0)].sum()
    assert slow_mass == pytest.approx(0.5, abs=0.1)
    assert fast_mass == pytest.approx(0.5, abs=0.1)


def test_posterior_mean_is_the_prior_mean_without_data():
    grid = np.array([1.0, 3.0])
    rate = posterior_mean_rate(np.zeros((2, 2)), np.array([0.25, 0.75]), grid)
    assert rate.tolist() == [2.5, 2.5]


def test_saturated_pages_are_pulled_up_by_the_population():
    # fast pages read at long intervals change every time: eq. 9 sees only λ ≳ log(2n+1)/t;
    # other fast pages, read often, tell the population's prior how fast "fast" is
    rng = np.random.default_rng(2)
    n = 3000
    rate = np.where(np.arange(n) < n // 2, 0.02, 3.0)
    period = np.where(np.arange(n) % 4 == 3, 0.2, 5.0)
    length = rng.uniform(0.5, 1.5, (n, 12)) * period[:, None]
    changed = rng.random(length.shape) < -np.expm1(-rate[:, None] * length)
    intervals = AccessIntervals.from_arrays(length, changed)
    eb = empirical_bayes_rates(intervals)
    mle = change_observation_mle(intervals)
    saturated = (rate == 3.0) & (period == 5.0)
    assert np.all(mle.kind[saturated] == EstimateKind.ALWAYS_CHANGED)
    log_error_eb = np.abs(np.log(eb[saturated] / 3.0)).mean()
    log_error_mle = np.abs(np.log(mle.rate[saturated] / 3.0)).mean()
    assert log_error_eb < log_error_mle / 3
    slow = rate == 0.02
    assert np.median(eb[slow]) == pytest.approx(0.02, rel=0.5)


def daemon_like(pages: int, days: float, seed: int, read_twice: float):
    """Change observations of pages born at day 0 and read like the demo's daemon reads them.

    As ``crawled_from_birth`` in test_refresh_estimators (λ log-uniform over 1/40 .. 20 a
    day, sqrt-rule intervals 3/sqrt(λ) ± 50 %, first read within 3 days, 30 days), without
    Last-Modified; a share ``read_twice`` of the pages was read twice in a row (70 s apart).
    """
    rng = np.random.default_rng(seed)
    rate = np.exp(rng.uniform(np.log(1 / 40), np.log(20.0), pages))
    period = np.clip(3 / np.sqrt(rate), 0.5, 30)
    width = int(days / 0.5 * 1.6) + 1
    gaps = period[:, None] * rng.uniform(0.5, 1.5, (pages, width))
    twice = rng.random(pages) < read_twice
    gaps[twice, rng.integers(0, 3, twice.sum())] = 70 / 86400
    first = rng.uniform(0, 3, (pages, 1))
    valid = first + np.cumsum(gaps, axis=1) <= days
    changed = valid & (rng.random(gaps.shape) < -np.expm1(-rate[:, None] * gaps))
    return AccessIntervals(np.where(valid, gaps, 0.0), changed, valid), rate


def test_a_few_reads_in_a_row_do_not_inflate_the_estimates():
    # the grid used to reach 2 changes per the shortest interval: one 70 s interval took it to
    # ~2,500 a day, and pages that changed at every read followed (median estimate/true 10)
    intervals, rate = daemon_like(pages=2000, days=30, seed=1, read_twice=0.02)
    seen = intervals.valid.any(axis=1)
    ratio = empirical_bayes_rates(intervals)[seen] / rate[seen]
    assert np.median(ratio) == pytest.approx(1.0, abs=0.25)
    assert resolvable_rate_grid(intervals)[-1] < 20.0  # changes a day
    empty = AccessIntervals.from_arrays([[1.0]], [[False]], [[False]])
    assert resolvable_rate_grid(empty) is None


def test_estimate_change_rates_can_use_empirical_bayes():
    intervals, _ = two_populations(3, slow=0.05, fast=1.0, period=1.0, n=400)
    at = np.concatenate([np.zeros((400, 1)), np.cumsum(intervals.length, axis=1)], axis=1)
    codes = np.concatenate([np.full((400, 1), -1), intervals.changed], axis=1).astype(np.int8)
    batch = ObservationBatch(at, codes, np.full(at.shape, np.nan), np.full(400, 13))
    settings = RefreshSettings(change_observation_estimator="empirical_bayes")
    est, _ = estimate_change_rates(batch, settings)
    assert np.all(est.kind == EstimateKind.EMPIRICAL_BAYES)
    np.testing.assert_allclose(est.rate, empirical_bayes_rates(intervals))
    small = RefreshSettings(change_observation_estimator="auto", empirical_bayes_min_pages=401)
    assert not np.any(estimate_change_rates(batch, small)[0].kind == EstimateKind.EMPIRICAL_BAYES)
    large = RefreshSettings(change_observation_estimator="auto", empirical_bayes_min_pages=400)
    assert np.all(estimate_change_rates(batch, large)[0].kind == EstimateKind.EMPIRICAL_BAYES)
    with pytest.raises(ValueError, match="change_observation_estimator"):
        RefreshSettings(change_observation_estimator="magic")


def test_no_interval_at_all_gives_nan_and_bad_grids_raise():
    empty = AccessIntervals.from_arrays(
        np.zeros((2, 1)), np.zeros((2, 1), bool), np.zeros((2, 1), bool)
    )
    assert np.isnan(empirical_bayes_rates(empty)).all()
    with pytest.raises(ValueError, match="low < high"):
        rate_grid(1.0, 0.5)
