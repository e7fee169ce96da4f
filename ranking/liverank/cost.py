"""The LiveRank cost function of §2.1: fetches spent per live page found.

Used where the truth is known (the simulated web, benchmarks); a real re-check reports the
fraction of live pages found against fetches instead, since n_a is unknown there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from ranking.liverank.errors import InvalidAnswer, NoLivePages

BENCHMARK_ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The fractions α at which §4 reads the cost curves."""


def fetches_needed(order: np.ndarray, alive: np.ndarray, alpha: float) -> int | None:
    """i(L, α): the length of the shortest prefix of ``order`` holding a fraction α of live pages.

    α is read as the decimal it prints as (``0.1`` is exactly 1/10), so i(L, 0.1) with 10 live
    pages is reached at the first live page, not the second. Returns None when ``order`` (a
    partial ordering, e.g. a budget) never reaches α. Raises :class:`NoLivePages` when n_a = 0.
    """
    alive = np.asarray(alive, dtype=bool)
    return _fetches_needed_many(_checked_order(order, alive), alive, (alpha,))[0]


def cost(order: np.ndarray, alive: np.ndarray, alpha: float) -> float:
    """cost(L, α) = i(L, α) / (α·n_a) (§2.1): at least 1, n/n_a on average for a random L.

    Parameters
    ----------
    order : numpy.ndarray
        The LiveRank L: distinct page ids, in the order they are tested (possibly not all).
    alive : numpy.ndarray
        The truth a: one boolean per page.
    alpha : float
        The fraction of the n_a live pages to find, 0 < α ≤ 1.

    Returns
    -------
    float
        The cost; ``inf`` when ``order`` stops before finding α·n_a live pages.

    Examples
    --------
    >>> alive = np.array([False, True, True, False])
    >>> cost(np.array([0, 1, 2, 3]), alive, 0.5)   # 2 fetches for 1 live page
    2.0
    >>> cost(np.array([1, 2, 0, 3]), alive, 1.0)   # the ideal LiveRank
    1.0

    References
    ----------
    .. [1] T. D. Huynh, F. Mathieu, L. Viennot. LiveRank: How to Refresh Old Datasets.
       Internet Mathematics, 2015, §2.1 (after Dasgupta et al., WWW 2007).
    """
    return cost_curve(order, alive, (alpha,))[alpha]


def cost_curve(
    order: np.ndarray, alive: np.ndarray, alphas: Iterable[float] = BENCHMARK_ALPHAS
) -> dict[float, float]:
    """cost(L, α) for several α at once, in one pass over the ordering."""
    alive = np.asarray(alive, dtype=bool)
    order = _checked_order(order, alive)
    alphas = tuple(alphas)
    n_alive = int(alive.sum())
    needed = _fetches_needed_many(order, alive, alphas)
    return {
        alpha: math.inf if count is None else count / (alpha * n_alive)
        for alpha, count in zip(alphas, needed, strict=True)
    }


def _fetches_needed_many(
    order: np.ndarray, alive: np.ndarray, alphas: tuple[float, ...]
) -> list[int | None]:
    n_alive = int(np.count_nonzero(alive))
    if n_alive == 0:
        raise NoLivePages("no page is alive, so cost(L, α) is undefined (n_a = 0)")
    found = np.cumsum(alive[order])
    result: list[int | None] = []
    for alpha in alphas:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"α must lie in (0, 1], not {alpha}")
        target = math.ceil(Fraction(repr(float(alpha))) * n_alive)
        position = int(np.searchsorted(found, target, side="left"))
        result.append(position + 1 if position < found.size else None)
    return result


def _checked_order(order: np.ndarray, alive: np.ndarray) -> np.ndarray:
    order = np.asarray(order)
    if order.size and not np.issubdtype(order.dtype, np.integer):
        raise InvalidAnswer("an ordering holds integer page ids")
    order = order.astype(np.int64, copy=False)
    if order.size and (order.min() < 0 or order.max() >= len(alive)):
        raise InvalidAnswer(f"the ordering names a page outside 0…{len(alive) - 1}")
    if np.bincount(order, minlength=len(alive)).max(initial=0) > 1:
        raise InvalidAnswer("the ordering names a page twice")
    return order
