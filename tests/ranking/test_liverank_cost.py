"""cost(L, α) of §2.1 against a brute-force count, and its edge cases."""

import math
from fractions import Fraction

import numpy as np
import pytest

from ranking.liverank import InvalidAnswer, NoLivePages, cost, cost_curve, fetches_needed


def brute_force_cost(order, alive, alpha):
    """The definition read literally: walk L until |a(L_i)|/n_a ≥ α."""
    n_alive = sum(bool(a) for a in alive)
    found = 0
    for i, page in enumerate(order, start=1):
        found += bool(alive[page])
        if Fraction(found, n_alive) >= Fraction(str(alpha)):
            return i / (alpha * n_alive)
    return math.inf


def test_matches_brute_force_on_random_orderings():
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 40))
        alive = rng.random(n) < rng.random()
        if not alive.any():
            alive[rng.integers(n)] = True
        order = rng.permutation(n)[: int(rng.integers(1, n + 1))]
        alphas = (0.1, 0.25, 0.3, 0.5, 0.7, 0.9, 1.0)
        curve = cost_curve(order, alive, alphas)
        for alpha in alphas:
            assert curve[alpha] == pytest.approx(brute_force_cost(order, alive, alpha))


def test_hand_checked_values():
    alive = np.array([False, True, True, False])
    assert cost(np.array([0, 1, 2, 3]), alive, 0.5) == 2.0
    assert cost(np.array([0, 3, 1, 2]), alive, 1.0) == 2.0
    assert cost(np.array([1, 2, 0, 3]), alive, 1.0) == 1.0


def test_alpha_is_read_as_a_decimal():
    alive = np.ones(10, dtype=bool)
    assert fetches_needed(np.arange(10), alive, 0.1) == 1
    assert fetches_needed(np.arange(10), alive, 0.3) == 3
    assert cost(np.arange(10), alive, 0.7) == 1.0


def test_a_partial_ordering_that_stops_short_costs_infinity():
    alive = np.array([True, True, False])
    assert cost(np.array([2, 0]), alive, 1.0) == math.inf
    assert fetches_needed(np.array([2, 0]), alive, 1.0) is None


def test_random_ordering_costs_about_n_over_n_a():
    rng = np.random.default_rng(3)
    alive = rng.random(20_000) < 0.2
    value = cost(rng.permutation(20_000), alive, 0.9)
    assert value == pytest.approx(20_000 / alive.sum(), rel=0.05)


def test_bad_inputs_are_named_errors():
    alive = np.array([True, False])
    with pytest.raises(NoLivePages):
        cost(np.array([0, 1]), np.zeros(2, dtype=bool), 0.5)
    with pytest.raises(InvalidAnswer, match="twice"):
        cost(np.array([0, 0]), alive, 0.5)
    with pytest.raises(InvalidAnswer, match="outside"):
        cost(np.array([0, 5]), alive, 0.5)
    with pytest.raises(ValueError, match="α"):
        cost(np.array([0, 1]), alive, 0.0)
