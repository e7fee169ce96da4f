"""The refresh policy of §6.2–6.4: t_i = K / sqrt(r_i·λ_i), K = S / G_r, and its optimum Ω.

Page i, refreshed every t_i time units, has obsolescence r_i·λ_i·(t − t0) (eq. 21), whose time
average over a period is r_i·λ_i·t_i / 2 (eq. 16 gives the integral r·λ·t²/2; dividing by the
period t gives the average). Minimising the repository's average Σ r_i·λ_i·t_i / 2 under the
bandwidth constraint Σ 1/t_i = G_r (eq. 15) by a Lagrange multiplier gives

    t_i = K / sqrt(r_i·λ_i),   K = S / G_r,   S = Σ_j sqrt(r_j·λ_j)          (eq. 18–22)

and the optimum Ω = Σ r_i·λ_i·t_i / 2 = S² / (2·G_r). (The paper's eq. 16–17 write the
integral r·λ·t²/2 as the "average"; minimising Σ λ_i·t_i²/2 instead would give t_i ∝ λ_i^{−1/3}.
Eq. 18 and the Ω(G) after eq. 20 are right for the time average.)

The time unit is the shortest refresh interval (§6): pages whose t_i would fall below one unit
are refreshed once per unit, and K is solved again over the other pages with the bandwidth that
is left (:func:`refresh_intervals`).

The general penalty α·r·λ·(t − t0) + β·r·P(stale) of §6.2 has no closed form for β > 0:
:func:`penalty_intervals` solves it numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq


def type_names(page_type: np.ndarray) -> np.ndarray:
    """Page types as ``str`` names (XML, HTML, DTD, UNKNOWN, ERROR, DEAD…).

    The store's small integer codes are not understood here (the refresh module knows no
    store): the caller converts them first (``metadata.PAGE_TYPE_NAMES``, indexed by code).

    >>> type_names(np.array(["XML", "HTML"], dtype=object)).tolist()
    ['XML', 'HTML']
    """
    page_type = np.asarray(page_type)
    if np.issubdtype(page_type.dtype, np.integer):
        raise TypeError("page types must be names (XML, HTML…), not the store's integer codes")
    return page_type.astype(str)


# Types whose r is their XML importance; HTML pages use their interest (§5, ARCHITECTURE).
IMPORTANCE_TYPES = ("XML", "DTD")
INTEREST_TYPES = ("HTML",)


def normalise_importance(
    page_type: np.ndarray,
    importance: np.ndarray,
    interest: np.ndarray,
    *,
    floor: float = 0.01,
    threshold: float = 0.0,
) -> np.ndarray:
    """r_i for the refresh rule (§6.4): importance for XML, interest for HTML, mean 1 per type.

    Parameters
    ----------
    page_type
        Each page's type by name ("XML", "HTML", "DTD", "UNKNOWN", "ERROR", "DEAD").
    importance, interest
        The ranking module's scores (NaN where not computed yet).
    floor
        After normalisation r is raised to at least ``floor`` so every page stays refreshable.
    threshold
        Pages whose normalised r is below ``threshold`` get r = 0: never read nor refreshed.

    Returns
    -------
    numpy.ndarray
        r per page; 0 for pages that are not refreshed by the policy (types other than XML,
        DTD and HTML, and pages under the threshold). A page with no score yet gets r = 1, the
        mean of its type.

    Examples
    --------
    >>> normalise_importance(
    ...     np.array(["XML", "XML", "HTML", "DEAD"]),
    ...     np.array([3.0, 1.0, 9.0, 1.0]),
    ...     np.array([0.0, 0.0, 2.0, 0.0]),
    ... )
    array([1.5, 0.5, 1. , 0. ])
    """
    page_type = type_names(page_type)
    r = np.zeros(len(page_type))
    for types, score in ((IMPORTANCE_TYPES, importance), (INTEREST_TYPES, interest)):
        for name in types:
            mask = page_type == name
            values = np.asarray(score, dtype=np.float64)[mask]
            values = np.where(np.isfinite(values) & (values >= 0), values, np.nan)
            mean = np.nanmean(values) if np.isfinite(values).any() else np.nan
            r[mask] = np.where(np.isfinite(values), values / mean, 1.0) if mean > 0 else 1.0
    keep = np.isin(page_type, IMPORTANCE_TYPES + INTEREST_TYPES)
    if threshold > 0:
        keep &= r >= threshold
    return np.where(keep, np.maximum(r, floor), 0.0)


@dataclass(frozen=True)
class RefreshPlan:
    """Refresh intervals (in time units) for a set of pages and the figures of the solution.

    ``interval`` is inf for pages with r·λ = 0. ``k`` is the K of eq. 19 for the pages above
    the one-unit floor, ``s`` the full S = Σ sqrt(r·λ), ``floored`` how many pages are at the
    floor, ``bandwidth`` the G_r the plan spends (refreshes per unit) and ``obsolescence`` the
    expected time-averaged obsolescence Σ r·λ·t / 2 of the plan (Ω when no page is floored).
    """

    interval: np.ndarray
    k: float
    s: float
    floored: int
    bandwidth: float
    obsolescence: float


def refresh_intervals(
    weight: np.ndarray, bandwidth: float, *, min_interval: float = 1.0, s: float | None = None
) -> RefreshPlan:
    """The optimal intervals t_i = K / sqrt(w_i) for w_i = r_i·λ_i, with a one-unit floor.

    Parameters
    ----------
    weight
        r_i·λ_i per page, λ in changes per time unit (0 for pages never refreshed).
    bandwidth
        G_r, the refreshes available per time unit.
    min_interval
        The shortest interval (one time unit, §6).
    s
        S = Σ sqrt(w), when the caller maintains it incrementally (:class:`SqrtWeightSum`);
        computed from ``weight`` otherwise.

    Returns
    -------
    RefreshPlan

    Notes
    -----
    Floored pages (K / sqrt(w_i) < min_interval) take 1/min_interval each; K is solved again
    over the others, K' = (S − S_floored) / (G_r − n_floored / min_interval), which is smaller,
    so more pages may fall under the floor: the loop runs until the floored set is stable
    (it only grows, so it ends; in practice after two or three passes over the array). This is
    the KKT solution of the problem with the box constraint t_i ≥ min_interval. When the
    bandwidth exceeds what refreshing every page every unit needs, every page is floored and
    the spare bandwidth is left unused.

    Examples
    --------
    >>> plan = refresh_intervals(np.array([1.0, 4.0, 0.0]), bandwidth=0.3)
    >>> plan.interval.round(3).tolist(), round(plan.k, 3), round(plan.obsolescence, 3)
    ([10.0, 5.0, inf], 10.0, 15.0)
    """
    weight = np.asarray(weight, dtype=np.float64)
    if np.any(weight < 0) or not np.all(np.isfinite(weight)):
        raise ValueError("weights r·λ must be finite and >= 0")
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be positive, got {bandwidth!r}")
    root = np.sqrt(weight)
    total = float(root.sum()) if s is None else float(s)
    floored = np.zeros(len(weight), dtype=bool)
    k = total / bandwidth
    while min_interval > 0:
        n_floor = int(floored.sum())
        left = bandwidth - n_floor / min_interval
        if left <= 0:
            k = 0.0
            break
        k = (total - float(root[floored].sum())) / left
        newly = ~floored & (root * min_interval > k) & (root > 0)
        if not newly.any():
            break
        floored |= newly
    with np.errstate(divide="ignore", invalid="ignore"):
        interval = np.where(floored, min_interval, k / root)
    interval[root == 0] = np.inf
    active = root > 0
    spent = float(np.sum(1.0 / interval[active]))
    obsolescence = float(np.sum(weight[active] * interval[active]) / 2)
    return RefreshPlan(interval, k, total, int(floored.sum()), spent, obsolescence)


def optimal_obsolescence(s: float, bandwidth: float) -> float:
    """Ω = S² / (2·G_r): the least time-averaged obsolescence at bandwidth G_r (§6.3.3)."""
    return s * s / (2.0 * bandwidth)


def average_obsolescence(weight: np.ndarray, interval: np.ndarray) -> float:
    """Σ r_i·λ_i·t_i / 2, the time-averaged obsolescence of periodic refreshes (eq. 16–17)."""
    weight, interval = np.asarray(weight), np.asarray(interval)
    active = weight > 0
    return float(np.sum(weight[active] * interval[active]) / 2)


class SqrtWeightSum:
    """S = Σ sqrt(r_j·λ_j) kept up to date as λ and r change (§6.6).

    §6.6: S_new = S_old − sqrt(r_i·λ_i,old) + sqrt(r_i·λ_i,new) after each refresh (and after
    each ranking pass). The per-page terms are kept so an update needs only the new weights,
    and the running sum uses Neumaier's compensated summation so millions of updates do not
    drift from a full recomputation.

    Examples
    --------
    >>> s = SqrtWeightSum(np.array([1.0, 4.0, 9.0]))
    >>> s.update(np.array([1]), np.array([16.0]))
    >>> s.value
    8.0
    """

    def __init__(self, weight: np.ndarray) -> None:
        self._root = np.sqrt(np.asarray(weight, dtype=np.float64))
        self._sum = math.fsum(self._root)
        self._compensation = 0.0

    def _add(self, delta: float) -> None:
        total = self._sum + delta
        if abs(self._sum) >= abs(delta):
            self._compensation += (self._sum - total) + delta
        else:
            self._compensation += (delta - total) + self._sum
        self._sum = total

    def update(self, ids: np.ndarray, new_weight: np.ndarray) -> None:
        """Replace the weights r·λ of pages ``ids`` (indices into the array given at start)."""
        ids = np.asarray(ids)
        new_root = np.sqrt(np.asarray(new_weight, dtype=np.float64))
        if len(np.unique(ids)) != len(ids):
            raise ValueError("update() takes each page at most once per call")
        self._add(math.fsum(new_root) - math.fsum(self._root[ids]))
        self._root[ids] = new_root

    def grow(self, n_pages: int) -> None:
        """Make room for new pages (weight 0) up to ``n_pages`` entries."""
        if n_pages > len(self._root):
            self._root = np.concatenate([self._root, np.zeros(n_pages - len(self._root))])

    @property
    def value(self) -> float:
        """The current S."""
        return self._sum + self._compensation

    def recompute(self) -> float:
        """S from scratch over the stored terms (to check, or to re-anchor after a reload)."""
        return math.fsum(self._root)


class IncrementalPolicy:
    """The sqrt rule kept current between full solves, as §6.6 describes.

    S is maintained by :class:`SqrtWeightSum` as pages get new weights r·λ (after each fetch,
    after each ranking pass); K = (S − S_floored) / (G_r − n_floored/min_interval) uses the
    floored set of the last full solve (:meth:`resolve`, e.g. once per time unit), so a
    fetched page gets its new interval at once, without a pass over all pages.

    Examples
    --------
    >>> policy = IncrementalPolicy(np.array([1.0, 4.0, 0.0]), bandwidth=0.3)
    >>> round(policy.k, 6), policy.interval(np.array([0, 1, 2])).round(3).tolist()
    (10.0, [10.0, 5.0, inf])
    >>> policy.update(np.array([2]), np.array([9.0]))
    >>> round(policy.k, 6)
    20.0
    """

    def __init__(self, weight: np.ndarray, bandwidth: float, *, min_interval: float = 1.0) -> None:
        self.bandwidth, self.min_interval = float(bandwidth), float(min_interval)
        self._weight = np.array(weight, dtype=np.float64)
        self._sum = SqrtWeightSum(self._weight)
        self.resolve()

    def resolve(self) -> RefreshPlan:
        """Solve the full problem again (floor included) from the current weights."""
        plan = refresh_intervals(
            self._weight, self.bandwidth, min_interval=self.min_interval, s=self._sum.value
        )
        self._floored = np.isfinite(plan.interval) & (plan.interval <= self.min_interval)
        if self.min_interval <= 0:
            self._floored[:] = False
        self._floored_root = math.fsum(np.sqrt(self._weight[self._floored]))
        return plan

    def update(self, ids: np.ndarray, new_weight: np.ndarray) -> None:
        """New weights r·λ for pages ``ids``; S and K follow at once."""
        ids = np.asarray(ids)
        new_weight = np.asarray(new_weight, dtype=np.float64)
        if np.any(new_weight < 0) or not np.all(np.isfinite(new_weight)):
            raise ValueError("weights r·λ must be finite and >= 0")
        self._sum.update(ids, new_weight)
        floored = self._floored[ids]
        self._floored_root += math.fsum(np.sqrt(new_weight[floored])) - math.fsum(
            np.sqrt(self._weight[ids][floored])
        )
        self._weight[ids] = new_weight

    @property
    def s(self) -> float:
        """S = Σ sqrt(r·λ), kept up to date."""
        return self._sum.value

    @property
    def k(self) -> float:
        """K for the pages above the floor (eq. 19 with the floor of the last solve)."""
        n_floored = int(self._floored.sum())
        left = self.bandwidth - (n_floored / self.min_interval if n_floored else 0.0)
        return max(self.s - self._floored_root, 0.0) / left if left > 0 else 0.0

    def interval(self, ids: np.ndarray) -> np.ndarray:
        """t_i = max(min_interval, K / sqrt(r_i·λ_i)) for pages ``ids`` (inf when r·λ = 0)."""
        root = np.sqrt(self._weight[np.asarray(ids)])
        with np.errstate(divide="ignore"):
            interval = np.maximum(self.k / root, self.min_interval)
        return np.where(root > 0, interval, np.inf)


def staleness_cost_derivative_scaled(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    """(λ/r)·t²·c'(t) as a function of x = λ·t, c the per-page cost of :func:`penalty_intervals`.

    c(t) = α·r·λ·t/2 + β·r·(1 − (1 − e^{−x})/x) is the time average over a period t of
    α·r·λ·(s − t0) + β·r·P(stale at s); then t²·c'(t) = (r/λ)·(α·x²/2 + β·(1 − (1 + x)·e^{−x})),
    which increases strictly with x.
    """
    return alpha * x * x / 2 + beta * (-np.expm1(-x) - x * np.exp(-x))


def penalty_cost(
    weight_r: np.ndarray, rate: np.ndarray, interval: np.ndarray, alpha: float, beta: float
) -> float:
    """Σ_i of the time-averaged penalty α·r·λ·(t − t0) + β·r·P(stale) at periods t_i (§6.2)."""
    x = rate * interval
    stale = 1 + np.expm1(-x) / x
    return float(np.sum(weight_r * (alpha * x / 2 + beta * stale)))


def penalty_intervals(
    r: np.ndarray,
    rate: np.ndarray,
    bandwidth: float,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    min_interval: float = 0.0,
) -> tuple[np.ndarray, float]:
    """Optimal periods for the general penalty α·r·λ·(t − t0) + β·r·P(stale) (§6.2).

    Parameters
    ----------
    r, rate
        Importance and change rate (per time unit) of each page, both > 0.
    bandwidth
        G_r: the periods satisfy Σ 1/t_i = G_r.
    alpha, beta
        The weights of obsolescence and staleness; β = 0 gives back the sqrt rule.
    min_interval
        The one-unit floor (0 for none).

    Returns
    -------
    interval, multiplier
        The periods t_i and the Lagrange multiplier μ of the bandwidth constraint.

    Notes
    -----
    The Lagrangian Σ c_i(t_i) + μ·(Σ 1/t_i − G_r) is stationary where t_i²·c_i'(t_i) = μ. With
    x = λ_i·t_i this reads α·x²/2 + β·(1 − (1 + x)·e^{−x}) = μ·λ_i/r_i (see
    :func:`staleness_cost_derivative_scaled`), increasing in x: a per-page 1-D root found by
    vectorised bisection (in log x) for all pages at once. The outer problem, Σ 1/t_i(μ) = G_r,
    is monotone in μ and solved by Brent's method on log μ. With β = 0 the inner root is
    x = sqrt(2·μ·λ/(α·r)), i.e. t_i = sqrt(2μ/α) / sqrt(r_i·λ_i): the sqrt rule. With α = 0 a
    page whose μ·λ/r reaches β is never worth refreshing (t = ∞): staleness alone abandons the
    fastest pages, as Cho & Garcia-Molina found for freshness. The floor t_i ≥ min_interval is
    the KKT solution with the box constraint: t_i(μ) = max(min_interval, unconstrained t_i(μ)).

    Examples
    --------
    >>> t, _ = penalty_intervals(np.array([1.0, 1.0]), np.array([1.0, 4.0]), 0.3, beta=0.0)
    >>> t.round(6).tolist()
    [10.0, 5.0]
    """
    r = np.asarray(r, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64)
    if np.any(r <= 0) or np.any(rate <= 0):
        raise ValueError("penalty_intervals needs r > 0 and λ > 0 for every page")
    if alpha < 0 or beta < 0 or alpha + beta == 0:
        raise ValueError("alpha and beta must be >= 0 and not both 0")

    def periods(mu: float) -> np.ndarray:
        target = mu * rate / r
        lo = np.full(len(r), 1e-12)
        hi = np.full(len(r), 1e12)
        reachable = staleness_cost_derivative_scaled(hi, alpha, beta) > target
        for _ in range(90):
            mid = np.sqrt(lo * hi)
            above = staleness_cost_derivative_scaled(mid, alpha, beta) > target
            hi = np.where(above, mid, hi)
            lo = np.where(above, lo, mid)
        x = np.sqrt(lo * hi)
        return np.maximum(np.where(reachable, x / rate, np.inf), min_interval)

    def excess(log_mu: float) -> float:
        return float(np.sum(1.0 / periods(math.exp(log_mu)))) - bandwidth

    lo_mu, hi_mu = -60.0, 60.0
    if excess(lo_mu) < 0:
        raise ValueError("the bandwidth exceeds what refreshing every page at the floor needs")
    log_mu = brentq(excess, lo_mu, hi_mu, xtol=1e-13, rtol=4 * np.finfo(float).eps)
    return periods(math.exp(log_mu)), math.exp(log_mu)
