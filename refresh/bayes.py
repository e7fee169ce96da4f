"""Empirical-Bayes change rates from change observations: a population prior on a λ grid.

Why: at the sqrt rule's own intervals most pages change between two reads (λ·t ≫ 1), and then
eq. 9 only learns that λ ≳ log(2n + 1)/t: a fast page looks slow, is refreshed as if it were,
and keeps looking slow. The other pages of the repository know better: fitted to all pages'
change observations at once, the distribution of λ over the repository says how fast a page
that "changed every time we looked" is likely to be. This module estimates that distribution
non-parametrically on a log-spaced grid of rates (the NPMLE by EM) and gives each page its
posterior mean E[λ | its observations], which is what the sqrt rule needs: with λ uncertain,
the expected cost Σ r_i·E[λ_i]·t_i/2 is minimised by t_i = K / sqrt(r_i·E[λ_i]).

Everything is vectorised: one (pages × grid) log-likelihood matrix, built in one pass per grid
point over the padded interval arrays, and EM steps that are matrix-vector products.

References
----------
.. [1] N. Laird, "Nonparametric maximum likelihood estimation of a mixing distribution",
   JASA 73(364), 1978.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from refresh.observations import AccessIntervals

_BLOCK_PAGES = 1 << 15
FASTEST_QUANTILE = 0.001


def rate_grid(low: float, high: float, points: int = 48) -> np.ndarray:
    """``points`` change rates spaced evenly in log between ``low`` and ``high``."""
    if not 0 < low < high:
        raise ValueError(f"need 0 < low < high, got {low!r}, {high!r}")
    return np.geomspace(low, high, points)


def grid_log_likelihood(intervals: AccessIntervals, grid: np.ndarray) -> np.ndarray:
    """log f(observations | λ = grid[k]) of eq. 9's likelihood, shape (pages, grid points).

    Examples
    --------
    >>> iv = AccessIntervals.from_arrays([[1.0, 1.0]], [[True, False]])
    >>> grid_log_likelihood(iv, np.array([np.log(2)])).round(6).tolist()
    [[-1.386294]]
    """
    quiet = np.where(intervals.valid & ~intervals.changed, intervals.length, 0.0).sum(axis=1)
    out = np.empty((len(quiet), len(grid)))
    for start in range(0, len(quiet), _BLOCK_PAGES):  # bounded temporaries on big batches
        block = slice(start, start + _BLOCK_PAGES)
        change = np.where(intervals.changed[block], intervals.length[block], 0.0)
        with np.errstate(divide="ignore"):
            for k, rate in enumerate(np.asarray(grid, dtype=np.float64)):
                terms = np.where(change > 0, np.log(-np.expm1(-rate * change)), 0.0)
                out[block, k] = terms.sum(axis=1) - rate * quiet[block]
    return out


def fit_grid_prior(
    log_likelihood: np.ndarray, prior: np.ndarray | None = None, *, iterations: int = 50
) -> np.ndarray:
    """The NPMLE of the population's distribution of λ on the grid, by EM.

    Parameters
    ----------
    log_likelihood
        (pages × grid) from :func:`grid_log_likelihood`.
    prior
        A starting distribution (uniform on the grid by default); warm starts converge fast.
    iterations
        EM steps. Each one never lowers the marginal likelihood.

    Returns
    -------
    numpy.ndarray
        Probabilities on the grid points, summing to 1.
    """
    n_grid = log_likelihood.shape[1]
    weights = np.full(n_grid, 1.0 / n_grid) if prior is None else np.asarray(prior, float)
    if len(log_likelihood) == 0:
        return weights
    shifted = np.exp(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
    for _ in range(iterations):
        joint = shifted * weights
        posterior = joint / joint.sum(axis=1, keepdims=True)
        weights = posterior.mean(axis=0)
    return weights


def posterior_mean_rate(
    log_likelihood: np.ndarray, prior: np.ndarray, grid: np.ndarray
) -> np.ndarray:
    """E[λ | observations] per page under the grid prior (the prior mean without data).

    Examples
    --------
    >>> grid = np.array([0.1, 10.0])
    >>> ll = np.log(np.array([[0.5, 0.5], [0.9, 0.1]]))
    >>> posterior_mean_rate(ll, np.array([0.5, 0.5]), grid).round(2).tolist()
    [5.05, 1.09]
    """
    log_joint = log_likelihood + np.log(np.maximum(prior, 1e-300))
    log_post = log_joint - logsumexp(log_joint, axis=1, keepdims=True)
    return np.exp(log_post) @ np.asarray(grid, dtype=np.float64)


def resolvable_rate_grid(
    intervals: AccessIntervals, points: int = 32, *, fastest_quantile: float = FASTEST_QUANTILE
) -> np.ndarray | None:
    """The grid of rates the batch's change observations can resolve (``None`` without any).

    From 0.1 change over the longest history to 2 changes per the ``fastest_quantile``
    quantile of the lengths of the intervals in which a change was seen (of all intervals
    when no change was seen at all). Only a change seen within t supports rates of order 1/t:
    an interval without change only bounds a page's rate from above, so the many short
    intervals a daemon makes (a page read twice in a row, 70 s apart) must not stretch the
    grid for every page. Where no page's likelihood varies, EM never moves the prior's mass,
    and the posterior mean of the pages that changed at every read follows the grid's top
    (see Notes of :func:`empirical_bayes_rates`).
    """
    valid = intervals.valid
    if not valid.any():
        return None
    seen_changing = valid & intervals.changed
    lengths = intervals.length[seen_changing if seen_changing.any() else valid]
    span = float(intervals.length.sum(axis=1).max())
    fastest = float(np.quantile(lengths, fastest_quantile))
    return rate_grid(0.1 / span, 2.0 / fastest, points)


def empirical_bayes_rates(
    intervals: AccessIntervals,
    *,
    points: int = 32,
    iterations: int = 200,
    fastest_quantile: float = FASTEST_QUANTILE,
) -> np.ndarray:
    """E[λ | observations] for every page, under the prior fitted to all of them.

    Parameters
    ----------
    intervals
        The batch's access intervals; needs many pages, since the prior is learnt from them.
    points, iterations
        Grid points (:func:`resolvable_rate_grid`) and EM steps.
    fastest_quantile
        The quantile of the access intervals whose length sets the grid's top (2 changes
        per that length).

    Returns
    -------
    numpy.ndarray
        The posterior mean rate per page (the prior mean for pages without any interval,
        NaN for all when the batch has no interval at all).

    Notes
    -----
    Above a few changes per access interval, change observations cannot tell rates apart:
    the likelihood of a page that changed at every read is flat there, so the EM's prior
    keeps whatever mass it started with on that part of the grid, and the posterior mean of
    such pages grows almost linearly with the grid's top. The top is therefore where the
    population's data stop resolving rates: 2 changes per a low quantile of the access
    intervals, robust to the few very short intervals a daemon makes (reads in a row).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> length = rng.uniform(0.5, 1.5, (2000, 10))
    >>> rate = np.where(np.arange(2000) < 1000, 0.2, 5.0)[:, None]
    >>> changed = rng.random(length.shape) < -np.expm1(-rate * length)
    >>> est = empirical_bayes_rates(AccessIntervals.from_arrays(length, changed))
    >>> bool(abs(np.median(est[:1000]) / 0.2 - 1) < 0.2), bool(np.median(est[1000:]) > 2.5)
    (True, True)
    """
    grid = resolvable_rate_grid(intervals, points, fastest_quantile=fastest_quantile)
    if grid is None:
        return np.full(len(intervals.length), np.nan)
    log_likelihood = grid_log_likelihood(intervals, grid)
    prior = fit_grid_prior(log_likelihood, iterations=iterations)
    return posterior_mean_rate(log_likelihood, prior, grid)
