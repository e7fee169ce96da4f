"""The sqrt(r·λ) policy (§6.3–6.4): optimality, the one-unit floor, S, r, general penalty."""

import numpy as np
import pytest

from refresh.policy import (
    IncrementalPolicy,
    SqrtWeightSum,
    average_obsolescence,
    normalise_importance,
    optimal_obsolescence,
    penalty_cost,
    penalty_intervals,
    refresh_intervals,
    type_names,
)


def random_weights(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rate = np.exp(rng.uniform(np.log(0.01), np.log(100), n))
    r = rng.pareto(1.5, n) + 1
    return r / r.mean() * rate


def feasible_perturbations(interval, rng, n_trials, size, min_interval=0.0):
    """Interval vectors with the same Σ 1/t, moved in random directions, none under the floor.

    Pages at the floor may only slow down; the free pages absorb the difference.
    """
    freq = 1.0 / interval
    at_floor = interval <= min_interval
    free = ~at_floor
    for _ in range(n_trials):
        direction = rng.normal(size=len(freq))
        direction[at_floor] = -np.abs(direction[at_floor])
        direction[free] -= np.dot(direction, freq) / freq[free].sum()  # keeps Σ 1/t fixed
        moved = freq * (1 + size * direction)
        if np.all(moved > 0) and np.all(1.0 / moved >= min_interval):
            yield 1.0 / moved


def test_sqrt_rule_spends_the_bandwidth_and_reaches_omega():
    w = random_weights(1000, 1)
    plan = refresh_intervals(w, bandwidth=50.0, min_interval=0.0)
    assert plan.floored == 0
    assert np.sum(1 / plan.interval) == pytest.approx(50.0)
    np.testing.assert_allclose(plan.interval, plan.k / np.sqrt(w))
    assert plan.k == pytest.approx(np.sqrt(w).sum() / 50.0)
    omega = optimal_obsolescence(plan.s, 50.0)
    assert plan.obsolescence == pytest.approx(omega)
    assert average_obsolescence(w, plan.interval) == pytest.approx(omega)


def test_no_perturbation_under_the_bandwidth_constraint_lowers_the_cost():
    rng = np.random.default_rng(2)
    w = random_weights(200, 3)
    plan = refresh_intervals(w, bandwidth=20.0, min_interval=0.0)
    best = average_obsolescence(w, plan.interval)
    for size in (1e-3, 1e-2, 0.2):
        for moved in feasible_perturbations(plan.interval, rng, 200, size):
            assert np.sum(1 / moved) == pytest.approx(20.0)
            assert average_obsolescence(w, moved) >= best * (1 - 1e-12)


def test_the_one_unit_floor_resolves_k_for_the_other_pages():
    w = np.array([400.0, 100.0, 1.0, 0.25, 0.01, 0.0])
    plan = refresh_intervals(w, bandwidth=3.0, min_interval=1.0)
    # without the floor K = S/G = 32.6/3 gives intervals below 1 for the two fastest pages
    assert plan.floored == 2
    assert plan.interval[:2].tolist() == [1.0, 1.0]
    root = np.sqrt(w[2:5])
    assert plan.k == pytest.approx(root.sum() / (3.0 - 2))
    np.testing.assert_allclose(plan.interval[2:5], plan.k / root)
    assert np.all(plan.interval[2:5] >= 1.0)
    assert plan.interval[5] == np.inf
    assert plan.bandwidth == pytest.approx(3.0)


def test_the_floored_plan_is_optimal_among_feasible_plans():
    rng = np.random.default_rng(4)
    w = random_weights(300, 5)
    plan = refresh_intervals(w, bandwidth=60.0, min_interval=1.0)
    assert plan.floored > 0
    best = average_obsolescence(w, plan.interval)
    trials = 0
    for moved in feasible_perturbations(plan.interval, rng, 300, 0.05, min_interval=1.0):
        assert np.sum(1 / moved) == pytest.approx(60.0)
        assert average_obsolescence(w, moved) >= best * (1 - 1e-12)
        trials += 1
    assert trials > 100


def test_more_bandwidth_than_pages_floors_everything():
    plan = refresh_intervals(np.array([1.0, 2.0]), bandwidth=5.0)
    assert plan.interval.tolist() == [1.0, 1.0]
    assert plan.bandwidth == 2.0


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="finite"):
        refresh_intervals(np.array([1.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match="positive"):
        refresh_intervals(np.array([1.0]), 0.0)


def test_incremental_s_equals_a_full_recomputation():
    rng = np.random.default_rng(6)
    w = random_weights(10_000, 7)
    s = SqrtWeightSum(w)
    for _ in range(2000):
        ids = rng.choice(len(w), size=rng.integers(1, 50), replace=False)
        new = w[ids] * rng.lognormal(0, 1, len(ids))
        s.update(ids, new)
        w[ids] = new
    assert s.value == pytest.approx(np.sqrt(w).sum(), rel=1e-13)
    assert s.value == pytest.approx(s.recompute(), rel=1e-13)
    plan = refresh_intervals(w, 100.0, s=s.value)
    assert plan.s == pytest.approx(refresh_intervals(w, 100.0).s, rel=1e-13)


def test_incremental_s_grows_for_new_pages_and_rejects_duplicates():
    s = SqrtWeightSum(np.array([4.0]))
    s.grow(3)
    s.update(np.array([2]), np.array([9.0]))
    assert s.value == 5.0
    with pytest.raises(ValueError, match="at most once"):
        s.update(np.array([0, 0]), np.array([1.0, 1.0]))


def test_importance_is_normalised_per_type_with_floor_and_threshold():
    types = np.array(["XML"] * 4 + ["HTML"] * 3 + ["UNKNOWN", "ERROR"])
    importance = np.array([4.0, 2.0, 2.0, 0.0, 50.0, 50.0, 50.0, 1.0, 1.0])
    interest = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 2.0, np.nan, 1.0, 1.0])
    r = normalise_importance(types, importance, interest, floor=0.05)
    assert r.tolist() == [
        2.0,
        1.0,
        1.0,
        0.05,
        pytest.approx(2 / 3),
        pytest.approx(4 / 3),
        1.0,
        0,
        0,
    ]
    assert r[:3].sum() + 0 == pytest.approx(4.0)  # the XML mean is 1 before the floor
    cut = normalise_importance(types, importance, interest, floor=0.05, threshold=0.9)
    assert cut.tolist()[:4] == [2.0, 1.0, 1.0, 0.0]
    assert cut[4] == 0.0


def test_general_penalty_with_beta_zero_is_the_sqrt_rule():
    rng = np.random.default_rng(8)
    r = rng.pareto(1.5, 500) + 0.2
    rate = np.exp(rng.uniform(-4, 4, 500))
    t, _ = penalty_intervals(r, rate, bandwidth=40.0, alpha=1.0, beta=0.0)
    np.testing.assert_allclose(
        t, refresh_intervals(r * rate, 40.0, min_interval=0.0).interval, rtol=1e-9
    )
    floored, _ = penalty_intervals(r, rate, 40.0, beta=0.0, min_interval=1.0)
    np.testing.assert_allclose(floored, refresh_intervals(r * rate, 40.0).interval, rtol=1e-9)


def test_general_penalty_with_beta_is_a_constrained_optimum():
    rng = np.random.default_rng(9)
    r = rng.pareto(1.5, 100) + 0.2
    rate = np.exp(rng.uniform(-3, 3, 100))
    t, mu = penalty_intervals(r, rate, bandwidth=10.0, alpha=1.0, beta=5.0)
    assert mu > 0
    assert np.sum(1 / t) == pytest.approx(10.0, rel=1e-9)
    best = penalty_cost(r, rate, t, 1.0, 5.0)
    for moved in feasible_perturbations(t, rng, 300, 0.02):
        assert penalty_cost(r, rate, moved, 1.0, 5.0) >= best * (1 - 1e-12)
    sqrt_rule = refresh_intervals(r * rate, 10.0, min_interval=0.0).interval
    assert penalty_cost(r, rate, sqrt_rule, 1.0, 5.0) > best


def test_pure_staleness_abandons_pages_too_fast_to_keep_fresh():
    r = np.ones(3)
    rate = np.array([0.1, 1.0, 1000.0])
    t, _ = penalty_intervals(r, rate, bandwidth=0.5, alpha=0.0, beta=1.0)
    assert t[2] == np.inf
    assert np.all(np.isfinite(t[:2]))


def test_general_penalty_rejects_bad_parameters():
    with pytest.raises(ValueError, match="r > 0"):
        penalty_intervals(np.array([0.0]), np.array([1.0]), 1.0)
    with pytest.raises(ValueError, match="not both 0"):
        penalty_intervals(np.array([1.0]), np.array([1.0]), 1.0, alpha=0.0, beta=0.0)


def test_incremental_policy_tracks_a_full_solve():
    rng = np.random.default_rng(10)
    w = random_weights(5000, 11)
    policy = IncrementalPolicy(w, bandwidth=400.0, min_interval=1.0)
    assert policy.resolve().floored > 0
    for _ in range(200):
        ids = rng.choice(len(w), size=20, replace=False)
        new = w[ids] * rng.lognormal(0, 0.3, 20)
        policy.update(ids, new)
        w[ids] = new
    full = refresh_intervals(w, 400.0, min_interval=1.0)
    assert policy.s == pytest.approx(full.s, rel=1e-13)
    # same floored set: the incremental K is the full solve's K
    assert policy.k == pytest.approx(full.k, rel=1e-3)
    assert policy.resolve().k == pytest.approx(full.k, rel=1e-12)
    assert policy.k == pytest.approx(full.k, rel=1e-12)
    np.testing.assert_allclose(policy.interval(np.arange(len(w))), full.interval, rtol=1e-12)
    with pytest.raises(ValueError, match="finite"):
        policy.update(np.array([0]), np.array([np.nan]))


def test_page_types_are_names_and_the_stores_codes_are_refused():
    assert type_names(np.array(["XML", "DEAD"], dtype=object)).tolist() == ["XML", "DEAD"]
    with pytest.raises(TypeError, match="not the store's integer codes"):
        type_names(np.array([1, 0], dtype=np.int8))
