"""The refresh schedule of a whole repository, as plain arrays and numbers (``xyleme schedule``).

Pure computation over what the metadata manager returns (``refresh_view()`` and
``observation_history()``): λ is estimated from each page's observations (§6.1, with the
Last-Modified checks), falls back to a stored ``change_rate`` (e.g. set from a publication),
then to the prior of the page's type and host; the policy of §6.4 then gives every page its
interval and next refresh, and the repository its S, K and Ω.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from conventions.hosts import host_keys as host_keys  # the callers' one host key
from refresh.change_rates import estimate_change_rates, group_prior
from refresh.estimators import EstimateKind
from refresh.observations import ObservationBatch
from refresh.policy import optimal_obsolescence, type_names
from refresh.scheduler import UnitPlan, plan_time_unit, refreshes_per_unit
from refresh.settings import RefreshSettings

STORED = "stored"


@dataclass(frozen=True)
class ScheduleReport:
    """Per-page schedule (aligned arrays, one entry per page of the view) and repository figures."""

    ids: np.ndarray
    page_type: np.ndarray
    change_rate: np.ndarray
    method: np.ndarray
    r: np.ndarray
    interval_units: np.ndarray
    next_refresh: np.ndarray
    due_per_unit: np.ndarray
    plan: UnitPlan
    settings: RefreshSettings
    now: float

    @property
    def omega(self) -> float:
        """The expected time-averaged obsolescence of the plan (S²/(2·G_r) without floor)."""
        return self.plan.policy.obsolescence

    def summary(self) -> dict[str, float | int | list[int]]:
        """The repository figures as plain JSON-ready values."""
        policy = self.plan.policy
        return {
            "now": self.now,
            "time_unit_s": self.settings.time_unit_s,
            "bandwidth_G": self.settings.bandwidth_per_unit,
            "discovery_share_theta": self.settings.discovery_share,
            "refresh_bandwidth_Gr": self.settings.refresh_bandwidth_per_unit,
            "S": policy.s,
            "K": policy.k,
            "omega": policy.obsolescence,
            "omega_without_floor": optimal_obsolescence(
                policy.s, self.settings.refresh_bandwidth_per_unit
            ),
            "pages": len(self.ids),
            "refreshed_pages": int(np.isfinite(self.interval_units).sum()),
            "pages_at_floor": policy.floored,
            "due_now": len(self.plan.refresh),
            "retries_now": len(self.plan.retry),
            "discovery_now": len(self.plan.discovery),
            "background_now": len(self.plan.background),
            "due_per_unit": self.due_per_unit.tolist(),
        }


def time_averaged_obsolescence(
    history: Mapping[str, np.ndarray],
    ids: np.ndarray,
    weight: np.ndarray,
    start: float,
    end: float,
) -> float:
    """The repository's obsolescence Σ r_i·λ_i·(t − t0_i) averaged over [start, end] (§6.4).

    The quantity whose time average the policy keeps at Ω = S²/(2·G_r) (eq. 21, 18): measured
    from the accesses themselves, exactly (each page's age grows linearly between two reads),
    rather than sampled at one instant, which depends on where the instant falls in the
    pages' refresh cycles.

    Parameters
    ----------
    history
        ``Metadata.observation_history()``: ``id`` (ascending), ``offsets`` and ``at``.
    ids, weight
        The pages (ascending URL-Ids, e.g. the refresh view's) and their r·λ (λ per second;
        0 for pages the policy does not refresh).
    start, end
        The window, in simulated seconds (``end > start``).

    Returns
    -------
    float
        The time average; a page counts from its first access (before it, it is not in the
        repository).

    Examples
    --------
    A page read at 0 and 10 with r·λ = 0.1, over [5, 15]: ages 5→10 then 0→5, mean 5.

    >>> history = {"id": np.array([3]), "offsets": np.array([0, 2]), "at": np.array([0., 10.])}
    >>> time_averaged_obsolescence(history, np.array([3]), np.array([0.1]), 5.0, 15.0)
    0.5
    """
    if not end > start:
        raise ValueError(f"the window must not be empty, got [{start}, {end}]")
    at = np.asarray(history["at"], dtype=np.float64)
    page = np.repeat(np.arange(len(history["id"])), np.diff(history["offsets"]))
    kept = np.isfinite(at)
    at, page = at[kept], page[kept]
    order = np.lexsort((at, page))
    at, page = at[order], page[order]
    following = np.append(at[1:], np.inf)
    following[np.append(page[1:] != page[:-1], True)] = np.inf  # a page's last access
    low, high = np.maximum(at, start), np.minimum(following, end)
    span = np.maximum(high - low, 0.0)
    area = span * ((low + high) / 2 - at)  # ∫ (s − at) ds over [low, high]
    rows = np.searchsorted(np.asarray(ids), np.asarray(history["id"]))[page]
    return float(np.sum(np.asarray(weight, dtype=np.float64)[rows] * area) / (end - start))


def estimate_view_rates(
    view: Mapping[str, np.ndarray],
    history: Mapping[str, np.ndarray],
    settings: RefreshSettings,
    *,
    host_keys: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """λ per second for every page of ``view`` and the name of how it was obtained.

    Parameters
    ----------
    view
        ``Metadata.refresh_view()``.
    history
        ``Metadata.observation_history()``.
    settings
        Estimator choice, tolerances, prior.
    host_keys
        An integer host key per page of the view, for the Last-Modified host check and the
        (type, host) prior; None treats the repository as one host.
    """
    ids = np.asarray(view["id"], dtype=np.int64)
    hosts = np.zeros(len(ids), dtype=np.int64) if host_keys is None else np.asarray(host_keys)
    rate = np.full(len(ids), np.nan)
    method = np.full(len(ids), EstimateKind.PRIOR.label, dtype=object)
    if len(history["id"]):
        rows = np.searchsorted(ids, history["id"])
        batch = ObservationBatch.from_history(history)
        estimates, _ = estimate_change_rates(batch, settings, host_ids=hosts[rows])
        known = estimates.kind != EstimateKind.PRIOR
        rate[rows[known]] = estimates.rate[known]
        labels = np.array([kind.label for kind in EstimateKind], dtype=object)
        method[rows[known]] = labels[estimates.kind[known]]
    stored = np.asarray(view["change_rate"], dtype=np.float64)
    use_stored = np.isnan(rate) & np.isfinite(stored) & (stored > 0)
    rate[use_stored] = stored[use_stored]
    method[use_stored] = STORED
    prior = group_prior(
        rate,
        type_names(view["type"]),
        hosts,
        min_pages=settings.prior_min_pages,
        default=settings.default_change_rate_per_unit / settings.time_unit_s,
    )
    return np.where(np.isnan(rate), prior, rate), method.astype(str)


def schedule_report(
    view: Mapping[str, np.ndarray],
    history: Mapping[str, np.ndarray],
    now: float,
    settings: RefreshSettings,
    *,
    units: int = 7,
    host_keys: np.ndarray | None = None,
    opic_cash: np.ndarray | None = None,
) -> ScheduleReport:
    """The schedule of every page and the repository's figures at time ``now``.

    Discovery picks unread pages by ``opic_cash`` (default: the view's ``opic_cash`` column).

    Examples
    --------
    >>> view = {"id": np.array([1, 2]), "type": np.array(["XML", "XML"]),
    ...         "last_access": np.array([0.0, 0.0]), "change_rate": np.array([1e-5, 4e-5]),
    ...         "importance": np.array([1.0, 1.0]), "interest": np.full(2, np.nan),
    ...         "failures": np.array([0, 0])}
    >>> history = {"id": np.array([], dtype=np.int64), "offsets": np.array([0]),
    ...            "at": np.array([]), "changed": np.array([]), "last_modified": np.array([])}
    >>> settings = RefreshSettings(bandwidth_per_unit=1.0, discovery_share=0.0)
    >>> report = schedule_report(view, history, 0.0, settings, units=3)
    >>> report.method.tolist(), report.interval_units.round(3).tolist()
    (['stored', 'stored'], [3.0, 1.5])
    """
    rate, method = estimate_view_rates(view, history, settings, host_keys=host_keys)
    columns = {**view, "change_rate": rate}
    if opic_cash is None:
        opic_cash = view.get("opic_cash")
    plan = plan_time_unit(columns, now, settings, opic_cash=opic_cash)
    due = refreshes_per_unit(
        plan.next_refresh, plan.interval_units, now, settings.time_unit_s, units
    )
    return ScheduleReport(
        ids=np.asarray(view["id"], dtype=np.int64),
        page_type=type_names(view["type"]),
        change_rate=plan.change_rate,
        method=method,
        r=plan.r,
        interval_units=plan.interval_units,
        next_refresh=plan.next_refresh,
        due_per_unit=due,
        plan=plan,
        settings=settings,
        now=now,
    )
