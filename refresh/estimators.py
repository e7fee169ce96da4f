"""Change-rate (λ) estimators of §6.1, vectorised over many pages at once.

A page's changes are a Poisson process of rate λ. Two kinds of evidence exist:

* **change observations** (§6.1.1, eq. 9): for each access interval, whether the page
  changed. The likelihood of C change intervals of lengths c_j and V no-change intervals of
  lengths v_i is f(x) = e^{−x·Σv_i} · Π_j (1 − e^{−c_j·x}); its maximum is the root of the score
  −Σv_i + Σ_j c_j / (e^{c_j·x} − 1), which decreases strictly from +∞ to −Σv, so the root is
  unique. :func:`change_observation_mle` finds it for every page at once by a safeguarded
  Newton iteration inside the bracket [C / (Σv + Σc/2), C / Σv] (from
  1/x − c/2 ≤ c / (e^{cx} − 1) ≤ 1/x).
* **last date of change** (§6.1.2, eq. 10): the server's Last-Modified d_i at each access.
  With l_i = t_i − d_i for the C change intervals, the paper's estimate is λ = C / Σl_i. The
  likelihood of the same data, counting the no-change intervals as censored observations
  (no change during v_j), is λ^C·e^{−λ(Σl + Σv)}, whose maximum is λ = C / (Σl + Σv):
  :func:`last_modified_rate` computes both (the censored one with the first access's half
  change, below).

Degenerate cases, for change observations (never 0 nor ∞):

* no change seen (C = 0): half a pseudo change interval is added, as long as the longest
  interval observed (where a change was the most likely to be seen). With regular accesses of
  length I over n intervals this gives λ·I = log(1 + 1/(2n)) ≈ 1/(2T), the posterior mean
  under Jeffreys' prior with no event in time T;
* a change at every access (V = 0): half a pseudo no-change interval is added, as long as the
  shortest interval observed (where no change was the most likely). With regular accesses this
  gives λ·I = log(2n + 1), exactly Cho & Garcia-Molina's improved estimator
  −log((n − X + 0.5)/(n + 0.5)) at X = n; with irregular ones, a change seen within a short
  interval counts as the evidence of a fast page that it is;
* no access interval at all (one observation, or none): no estimate; the page gets the prior
  of its type and host (:func:`group_prior`).

For Last-Modified, the first access counts as a change (footnote 5 of §6.1), so C ≥ 1; when
Σl (paper) or Σl + Σv (censored) is 0 the estimate falls back to change observations. The
footnote holds for a page that existed long before its first read: its last change before
that read is a Poisson event, l_0 ~ Exp(λ). When the date is the page's creation instead (a
page found soon after it appeared, or every page of a web crawled from its beginning, like
the demo's simulated one) it is a change that never happened, and with the few accesses of
a month it doubles a slow page's rate (measured in the demo: median estimate/true 2.7 over
the 45 % of pages whose first Last-Modified was their birth, 1.2 over the others; see
docs/refresh.md, "Bias of the Last-Modified estimate"). Which case holds is unknown, so the
censored estimator counts the first access as half a change: the first date is then an
origin from which λ is observed for l_0 + Σl + Σv, and (C' + ½) / (l_0 + Σl + Σv), with C'
the changes after the first access, is the posterior mean under Jeffreys' prior λ^{−½} [3]_ —
the same half pseudo-change as the no-change rule above and Cho & Garcia-Molina's +0.5 [2]_.

References
----------
.. [1] Marian, Abiteboul, Cobéna, Mignet, "Change-centric management of versions in an XML
   warehouse" / the Xyleme acquisition paper, §6.1 (``seeds/002``).
.. [2] J. Cho, H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003.
.. [3] H. Jeffreys, "Theory of Probability", 3rd ed., Oxford 1961, §3.3 (the prior λ^{−½}
   of a Poisson rate; with C events in exposure T the posterior is Gamma(C + ½, T)).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from refresh.observations import AccessIntervals, ObservationBatch

_NEWTON_MAX_ITER = 100
_NEWTON_RTOL = 1e-12
PSEUDO_WEIGHT = 0.5


class EstimateKind(enum.IntEnum):
    """How a page's λ was obtained (stored next to the rate, shown by ``xyleme schedule``)."""

    CHANGE_MLE = 0
    NO_CHANGE_SEEN = 1
    ALWAYS_CHANGED = 2
    LAST_MODIFIED = 3
    PRIOR = 4
    EMPIRICAL_BAYES = 5

    @property
    def label(self) -> str:
        """A short lower-case name for tables and JSON."""
        return self.name.lower()


@dataclass(frozen=True)
class RateEstimates:
    """λ per page (changes per unit of the observations' time) and how it was obtained."""

    rate: np.ndarray
    kind: np.ndarray


def _score_terms(c: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """c / (e^{cx} − 1) and its derivative in x, 0 where c = 0 (padding)."""
    cx = c * x
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        em1 = np.expm1(cx)
        term = np.where(c > 0, c / em1, 0.0)
        slope = np.where(c > 0, -(c * c) / (em1 * -np.expm1(-cx)), 0.0)
    return term, slope


def change_observation_mle(intervals: AccessIntervals) -> RateEstimates:
    """Maximum-likelihood λ from change / no-change intervals (§6.1.1, eq. 9), all pages at once.

    Parameters
    ----------
    intervals
        Access intervals of P pages, padded to a common width.

    Returns
    -------
    RateEstimates
        ``rate`` in changes per unit of ``intervals.length`` (NaN for a page with no valid
        interval) and ``kind``: CHANGE_MLE, NO_CHANGE_SEEN or ALWAYS_CHANGED (see the module
        docstring for the degenerate-case rules), PRIOR where no interval exists.

    Examples
    --------
    One change interval of length 1 and one no-change interval of length 1: the score is
    −1 + 1/(e^x − 1), so λ = log 2.

    >>> from refresh.observations import AccessIntervals
    >>> est = change_observation_mle(AccessIntervals.from_arrays([[1.0, 1.0]], [[True, False]]))
    >>> round(float(est.rate[0]), 12)
    0.69314718056

    Notes
    -----
    A safeguarded Newton iteration on the score function, run on all pages in lock-step over
    the padded (pages × intervals) arrays: each step costs one pass over the arrays, the
    bracket shrinks on every step and a Newton step leaving it is replaced by the geometric
    mid-point, so the iteration always converges (quadratically near the root).
    """
    valid, length = intervals.valid, intervals.length
    c = np.where(intervals.changed, length, 0.0)
    n_change = intervals.changed.sum(axis=1).astype(np.float64)
    n_valid = valid.sum(axis=1)
    v_sum = np.where(valid & ~intervals.changed, length, 0.0).sum(axis=1)
    longest = np.where(valid, length, 0.0).max(axis=1, initial=0.0)
    shortest = np.where(valid, length, np.inf).min(axis=1, initial=np.inf)
    has_data = n_valid > 0
    no_change = has_data & (n_change == 0)
    all_change = has_data & (v_sum == 0)

    extra_weight = np.where(no_change, PSEUDO_WEIGHT, 0.0)
    extra_c = np.where(no_change, longest, 0.0)
    v_sum = v_sum + np.where(all_change, PSEUDO_WEIGHT * shortest, 0.0)
    weight_c = c.sum(axis=1) + extra_weight * extra_c
    events = n_change + extra_weight

    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(has_data, events / (v_sum + weight_c / 2), np.nan)
        hi = np.where(has_data, events / v_sum, np.nan)
    x = np.sqrt(lo * hi)
    active = has_data.copy()
    for _ in range(_NEWTON_MAX_ITER):
        if not active.any():
            break
        term, slope = _score_terms(c[active], x[active, None])
        extra_term, extra_slope = _score_terms(extra_c[active], x[active])
        score = -v_sum[active] + term.sum(axis=1) + extra_weight[active] * extra_term
        d_score = slope.sum(axis=1) + extra_weight[active] * extra_slope
        xa, loa, hia = x[active], lo[active], hi[active]
        loa = np.where(score > 0, xa, loa)
        hia = np.where(score > 0, hia, xa)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = xa - score / d_score
        inside = (newton >= loa) & (newton <= hia)
        new_x = np.where(inside, newton, np.sqrt(loa * hia))
        done = (inside & (np.abs(newton - xa) <= _NEWTON_RTOL * xa)) | (
            hia - loa <= _NEWTON_RTOL * hia
        )
        x[active], lo[active], hi[active] = new_x, loa, hia
        active[np.flatnonzero(active)[done]] = False

    kind = np.full(len(x), EstimateKind.CHANGE_MLE, dtype=np.int8)
    kind[no_change] = EstimateKind.NO_CHANGE_SEEN
    kind[all_change] = EstimateKind.ALWAYS_CHANGED
    kind[~has_data] = EstimateKind.PRIOR
    return RateEstimates(x, kind)


def last_modified_rate(
    batch: ObservationBatch, *, censored: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """λ from the server's last date of change (§6.1.2, eq. 10), all pages at once.

    Parameters
    ----------
    batch
        The pages' access histories, with Last-Modified dates (check them first with
        :func:`refresh.observations.last_modified_verdicts`).
    censored
        True: λ = (C − ½) / (Σl + Σv), the likelihood that also counts the no-change
        intervals, with the first access worth half a change (Jeffreys' posterior mean, see
        the module docstring). False: the paper's eq. 10, λ = C / Σl, the first access a
        whole change (footnote 5).

    Returns
    -------
    rate, usable
        λ per page, and a mask of the pages where it is defined (at least one access
        interval and a positive denominator); elsewhere ``rate`` is NaN.

    Examples
    --------
    Accesses at 0, 10, 20; the server says the page last changed at −4, 6 and 6: two change
    "intervals" (the first access, l = 4, and [0, 10], l = 4) and one no-change interval (10):
    eq. 10 gives 2 / 8, the censored estimate 1.5 / 18.

    >>> from collections import namedtuple
    >>> O = namedtuple("O", "at changed last_modified", defaults=[None])
    >>> b = ObservationBatch.from_observations([[O(0, None, -4), O(10, True, 6), O(20, False, 6)]])
    >>> last_modified_rate(b, censored=False)[0].tolist(), last_modified_rate(b)[0].tolist()
    ([0.25], [0.08333333333333333])
    """
    moved, age = batch.last_change_ages()
    n_changes = moved.sum(axis=1).astype(np.float64)
    if censored:  # the first access's date is an origin worth half a change, not a whole one
        n_changes -= np.where(moved[:, 0], 1.0 - PSEUDO_WEIGHT, 0.0)
    sum_age = np.where(moved, age, 0.0).sum(axis=1)
    intervals = batch.intervals()
    lm_known = np.isfinite(batch.last_modified[:, 1:])
    quiet = intervals.valid & lm_known & ~moved[:, 1:]
    exposure = sum_age + (np.where(quiet, intervals.length, 0.0).sum(axis=1) if censored else 0.0)
    usable = (batch.count >= 2) & (exposure > 0) & (n_changes > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(usable, n_changes / exposure, np.nan)
    return rate, usable


def naive_rate(n_changes: np.ndarray, total_time: np.ndarray) -> np.ndarray:
    """The naive estimate X / T: changes detected per unit of observed time."""
    return np.asarray(n_changes, dtype=np.float64) / np.asarray(total_time, dtype=np.float64)


def cho_improved_rate(
    n_changes: np.ndarray, n_intervals: np.ndarray, mean_interval: np.ndarray
) -> np.ndarray:
    """Cho & Garcia-Molina's improved estimator −log((n − X + 0.5)/(n + 0.5)) / I.

    It estimates λ·I for regular accesses of period I; dividing by the mean interval gives λ.
    """
    n = np.asarray(n_intervals, dtype=np.float64)
    x = np.asarray(n_changes, dtype=np.float64)
    return -np.log((n - x + 0.5) / (n + 0.5)) / np.asarray(mean_interval, dtype=np.float64)


def change_observation_crlb(rate: float | np.ndarray, intervals: AccessIntervals) -> np.ndarray:
    """The Cramér-Rao bound on the variance of an unbiased λ from change observations.

    The Fisher information of one interval of length I is I² / (e^{λI} − 1) (a Bernoulli
    outcome with p = 1 − e^{−λI}); it adds over independent intervals, and the bound is its
    inverse. Returns one variance per page.
    """
    rate = np.asarray(rate, dtype=np.float64)
    length = intervals.length
    with np.errstate(over="ignore"):
        info = np.where(
            intervals.valid, length * length / np.expm1(np.reshape(rate, (-1, 1)) * length), 0.0
        ).sum(axis=1)
    return 1.0 / info
