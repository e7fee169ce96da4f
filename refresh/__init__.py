"""The refresh module: change-rate estimates and the sqrt(r·λ) refresh schedule (paper §6).

Pure computation over numpy arrays and observation records; it imports nothing of the store
(``metadata``), of ``ranking`` or of ``xyleme``: the refresh pass (``xyleme.jobs.refresh_pass``)
reads the store, calls it and writes back, and due URL-Ids go to any
:class:`~refresh.scheduler.CrawlQueue` (the crawler is one).
See ``docs/refresh.md``.
"""

from refresh.bayes import (
    fit_grid_prior,
    grid_log_likelihood,
    posterior_mean_rate,
    rate_grid,
    resolvable_rate_grid,
)
from refresh.change_rates import estimate_change_rates, fill_with_prior, group_prior
from refresh.estimators import (
    EstimateKind,
    change_observation_crlb,
    change_observation_mle,
    cho_improved_rate,
    last_modified_rate,
    naive_rate,
)
from refresh.observations import AccessIntervals, LastModifiedVerdict, ObservationBatch
from refresh.policy import (
    IncrementalPolicy,
    RefreshPlan,
    SqrtWeightSum,
    normalise_importance,
    optimal_obsolescence,
    penalty_intervals,
    refresh_intervals,
)
from refresh.report import ScheduleReport, host_keys, schedule_report, time_averaged_obsolescence
from refresh.scheduler import (
    REFRESH_LEVEL,
    CrawlQueue,
    FolderSchedule,
    RefreshTimetable,
    plan_time_unit,
    scan_due,
    submit_plan,
)
from refresh.settings import Bandwidth, DiscoveryShare, RefreshSettings, TimeUnitSeconds

__all__ = [
    "REFRESH_LEVEL",
    "AccessIntervals",
    "Bandwidth",
    "CrawlQueue",
    "DiscoveryShare",
    "EstimateKind",
    "FolderSchedule",
    "IncrementalPolicy",
    "LastModifiedVerdict",
    "ObservationBatch",
    "RefreshPlan",
    "RefreshSettings",
    "RefreshTimetable",
    "ScheduleReport",
    "SqrtWeightSum",
    "TimeUnitSeconds",
    "change_observation_crlb",
    "change_observation_mle",
    "cho_improved_rate",
    "estimate_change_rates",
    "fill_with_prior",
    "fit_grid_prior",
    "grid_log_likelihood",
    "group_prior",
    "host_keys",
    "last_modified_rate",
    "naive_rate",
    "normalise_importance",
    "optimal_obsolescence",
    "penalty_intervals",
    "plan_time_unit",
    "posterior_mean_rate",
    "rate_grid",
    "refresh_intervals",
    "resolvable_rate_grid",
    "scan_due",
    "schedule_report",
    "submit_plan",
    "time_averaged_obsolescence",
]
