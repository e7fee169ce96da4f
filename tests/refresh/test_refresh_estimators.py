"""Change-rate estimators (§6.1): closed forms, simulated Poisson pages, degenerate cases."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from metadata import Observation as Obs
from refresh import (
    AccessIntervals,
    EstimateKind,
    ObservationBatch,
    RefreshSettings,
    change_observation_crlb,
    change_observation_mle,
    cho_improved_rate,
    estimate_change_rates,
    fill_with_prior,
    group_prior,
    last_modified_rate,
)


def regular(n: int, changes: int, period: float = 1.0) -> tuple[list[float], list[bool]]:
    return [period] * n, [True] * changes + [False] * (n - changes)


def test_eq9_matches_the_closed_form_for_regular_accesses():
    # With regular accesses of period I, eq. 9's maximum is λ = −log(1 − X/n) / I.
    rows = [regular(10, x, 2.0) for x in (1, 3, 5, 9)]
    intervals = AccessIntervals.from_arrays([r[0] for r in rows], [r[1] for r in rows])
    est = change_observation_mle(intervals)
    expected = [-math.log(1 - x / 10) / 2.0 for x in (1, 3, 5, 9)]
    np.testing.assert_allclose(est.rate, expected, rtol=1e-10)
    assert (est.kind == EstimateKind.CHANGE_MLE).all()


def test_eq9_batch_equals_a_per_page_root_of_the_score():
    rng = np.random.default_rng(1)
    pages, width = 200, 30
    length = rng.uniform(0.1, 5.0, (pages, width))
    valid = np.arange(width) < rng.integers(2, width, pages)[:, None]
    changed = rng.random((pages, width)) < 1 - np.exp(-0.4 * length)
    changed[:, 0], changed[:, 1] = True, False  # both kinds present in every page
    est = change_observation_mle(AccessIntervals.from_arrays(length, changed, valid))
    for i in range(pages):
        c = length[i][valid[i] & changed[i]]
        v = length[i][valid[i] & ~changed[i]].sum()
        root = brentq(lambda x, c=c, v=v: -v + np.sum(c / np.expm1(c * x)), 1e-9, 1e2, xtol=1e-14)
        assert est.rate[i] == pytest.approx(root, rel=1e-9)


def test_eq9_is_consistent_on_simulated_poisson_pages():
    rng = np.random.default_rng(2)
    rate, pages, width = 0.7, 400, 200
    length = rng.uniform(0.5, 1.5, (pages, width))
    changed = rng.random((pages, width)) < -np.expm1(-rate * length)
    est = change_observation_mle(AccessIntervals.from_arrays(length, changed))
    assert np.median(est.rate) == pytest.approx(rate, rel=0.03)
    crlb_sd = np.sqrt(change_observation_crlb(rate, AccessIntervals.from_arrays(length, changed)))
    assert np.std(est.rate) == pytest.approx(crlb_sd.mean(), rel=0.15)


def test_no_change_seen_gets_the_half_pseudo_change_rule():
    for n in (1, 5, 40):
        est = change_observation_mle(AccessIntervals.from_arrays(*regular(n, 0, 3.0)))
        assert est.kind[0] == EstimateKind.NO_CHANGE_SEEN
        assert est.rate[0] == pytest.approx(math.log(1 + 1 / (2 * n)) / 3.0, rel=1e-10)
        assert 0 < est.rate[0] < math.inf


def test_change_at_every_access_equals_cho_garcia_molina():
    for n in (1, 5, 40):
        est = change_observation_mle(AccessIntervals.from_arrays(*regular(n, n, 3.0)))
        assert est.kind[0] == EstimateKind.ALWAYS_CHANGED
        assert est.rate[0] == pytest.approx(cho_improved_rate(n, n, 3.0), rel=1e-10)
        assert est.rate[0] == pytest.approx(math.log(2 * n + 1) / 3.0, rel=1e-10)


def test_a_single_observation_asks_for_the_prior():
    batch = ObservationBatch.from_observations([[Obs(0.0, None)], []])
    est, _ = estimate_change_rates(batch)
    assert (est.kind == EstimateKind.PRIOR).all()
    assert np.isnan(est.rate).all()
    filled = fill_with_prior(est, np.array([0.1, 0.2]))
    assert filled.rate.tolist() == [0.1, 0.2]


def test_packing_observations():
    batch = ObservationBatch.from_observations(
        [[Obs(0, None, -5), Obs(10, True, 8), Obs(30, False, 8)], [Obs(3, None)]]
    )
    assert batch.count.tolist() == [3, 1]
    intervals = batch.intervals()
    assert intervals.length[0].tolist() == [10, 20]
    assert intervals.changed[0].tolist() == [True, False]
    assert intervals.valid.tolist() == [[True, True], [False, False]]


def test_intervals_reject_shape_mismatch_and_empty_intervals():
    with pytest.raises(ValueError, match="one shape"):
        AccessIntervals.from_arrays([[1.0, 2.0]], [[True]])
    with pytest.raises(ValueError, match="positive length"):
        AccessIntervals.from_arrays([[0.0]], [[True]], [[True]])


def test_eq10_paper_and_censored_closed_forms():
    # Accesses 0, 10, 20, 30; changes last dated −4, 7, 7, 26: change "intervals" l = 4, 3, 4
    # and one no-change interval of length 10; the censored estimate counts the first access
    # as half a change.
    batch = ObservationBatch.from_observations(
        [[Obs(0, None, -4), Obs(10, True, 7), Obs(20, False, 7), Obs(30, True, 26)]]
    )
    paper, _ = last_modified_rate(batch, censored=False)
    censored, usable = last_modified_rate(batch, censored=True)
    assert paper[0] == pytest.approx(3 / 11)
    assert censored[0] == pytest.approx(2.5 / 21)
    assert usable[0]


def simulated_last_modified(rate: float, pages: int, width: int, seed: int) -> ObservationBatch:
    """Poisson pages accessed at irregular times, with truthful Last-Modified dates."""
    rng = np.random.default_rng(seed)
    gaps = rng.uniform(0.5, 1.5, (pages, width - 1))
    at = np.concatenate([np.zeros((pages, 1)), np.cumsum(gaps, axis=1)], axis=1)
    changed = rng.random(gaps.shape) < -np.expm1(-rate * gaps)
    # age of the last change: truncated exponential inside a change interval
    u = rng.random(gaps.shape)
    age = -np.log1p(-u * -np.expm1(-rate * gaps)) / rate
    lm = np.empty_like(at)
    lm[:, 0] = -rng.exponential(1 / rate, pages)
    for j in range(1, width):
        lm[:, j] = np.where(changed[:, j - 1], at[:, j] - age[:, j - 1], lm[:, j - 1])
    codes = np.concatenate([np.full((pages, 1), -1), changed.astype(np.int8)], axis=1)
    return ObservationBatch(at, codes.astype(np.int8), lm, np.full(pages, width))


def test_censored_eq10_is_nearly_unbiased_and_the_paper_overestimates_slow_pages():
    rate = 0.1  # λ·I = 0.1: l_i is cut by the interval, so C/Σl is too high
    batch = simulated_last_modified(rate, pages=2000, width=40, seed=3)
    censored, _ = last_modified_rate(batch, censored=True)
    paper, _ = last_modified_rate(batch, censored=False)
    # These pages are old at their first read, so the first access's change is real: counting
    # it as half a change costs about ½ of the ~4.5 changes seen.
    assert np.mean(censored) == pytest.approx(rate, rel=0.12)
    assert np.mean(paper) > 3 * rate


def crawled_from_birth(pages: int, days: float, seed: int) -> tuple[ObservationBatch, np.ndarray]:
    """Pages born at day 0 and crawled like the demo's daemon crawls its simulated web.

    λ spreads log-uniformly over 1/40 .. 20 changes a day (the simulated web's 5-95 %
    range); the first read comes within 3 days, the next ones every 3/sqrt(λ) days (the sqrt
    rule's shape) ± 50 %; Last-Modified is the latest change, or the birth before the first.
    """
    rng = np.random.default_rng(seed)
    rate = np.exp(rng.uniform(np.log(1 / 40), np.log(20.0), pages))
    period = np.clip(3 / np.sqrt(rate), 0.5, 30)
    width = int(days / 0.5 * 1.6) + 2
    gaps = period[:, None] * rng.uniform(0.5, 1.5, (pages, width - 1))
    start = rng.uniform(0, 3, (pages, 1))
    at = start + np.concatenate([np.zeros((pages, 1)), np.cumsum(gaps, axis=1)], axis=1)
    count = (at <= days).sum(axis=1)
    last_modified = np.full(at.shape, np.nan)
    changed = np.full(at.shape, -1, dtype=np.int8)
    for page in range(pages):
        reads = at[page, : count[page]]
        changes = np.cumsum(rng.exponential(1 / rate[page], int(3 * rate[page] * days) + 20))
        seen = np.searchsorted(changes, reads, side="right")
        last_modified[page, : count[page]] = np.where(seen > 0, changes[seen - 1], 0.0)
        changed[page, 1 : count[page]] = np.diff(seen) > 0
    at = np.where(np.arange(width) < count[:, None], at, np.nan)
    return ObservationBatch(at, changed, last_modified, count), rate


def test_censored_eq10_is_not_biased_by_a_first_date_that_is_the_birth():
    # Pages read soon after their birth: their first Last-Modified is the birth, no change.
    # Counted as a whole change (footnote 5) it made the median estimate 1.13-1.15 × λ.
    batch, rate = crawled_from_birth(pages=2000, days=30, seed=1)
    estimate, usable = last_modified_rate(batch)
    assert usable.mean() > 0.99
    assert np.median(estimate[usable] / rate[usable]) == pytest.approx(1.0, abs=0.07)


def test_estimate_change_rates_prefers_a_reliable_last_modified():
    reliable = simulated_last_modified(0.5, pages=1, width=20, seed=4)
    obs = [
        Obs(float(t), None if c < 0 else bool(c), float(d))
        for t, c, d in zip(
            reliable.at[0], reliable.changed[0], reliable.last_modified[0], strict=True
        )
    ]
    no_lm = [Obs(o.at, o.changed) for o in obs]
    batch = ObservationBatch.from_observations([obs, no_lm])
    est, verdicts = estimate_change_rates(batch, RefreshSettings(clock_skew_s=0.0))
    assert est.kind.tolist() == [EstimateKind.LAST_MODIFIED, EstimateKind.CHANGE_MLE]
    assert verdicts.tolist()[1] != 0
    censored, _ = last_modified_rate(batch)
    assert est.rate[0] == pytest.approx(censored[0])
    paper_settings = RefreshSettings(clock_skew_s=0.0, last_modified_estimator="paper")
    assert estimate_change_rates(batch, paper_settings)[0].rate[0] > est.rate[0]


def test_group_prior_falls_back_from_host_to_type_to_default():
    rate = np.array([1.0, 4.0, 8.0, np.nan, np.nan, np.nan, np.nan])
    types = np.array(["XML", "XML", "XML", "XML", "XML", "HTML", "XML"])
    hosts = np.array([1, 1, 2, 1, 3, 1, 2])
    prior = group_prior(rate, types, hosts, min_pages=2, default=0.5)
    type_mean = (1.0 * 4.0 * 8.0) ** (1 / 3)
    np.testing.assert_allclose(prior, [2.0, 2.0, type_mean, 2.0, type_mean, 0.5, type_mean])


def test_degenerate_pseudo_intervals_take_the_most_plausible_length():
    # always changed, with one short interval: the pseudo no-change has the shortest length
    est = change_observation_mle(AccessIntervals.from_arrays([[10.0, 10.0, 1.0]], [[True] * 3]))
    x = est.rate[0]
    assert -0.5 * 1.0 + sum(c / math.expm1(c * x) for c in (10.0, 10.0, 1.0)) == pytest.approx(
        0.0, abs=1e-9
    )
    # no change, with one long interval: the pseudo change has the longest length
    est = change_observation_mle(AccessIntervals.from_arrays([[1.0, 1.0, 10.0]], [[False] * 3]))
    assert -12.0 + 0.5 * 10.0 / math.expm1(10.0 * est.rate[0]) == pytest.approx(0.0, abs=1e-9)
