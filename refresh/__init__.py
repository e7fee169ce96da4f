"""The refresh module: change-rate estimates and the sqrt(r·λ) refresh schedule (paper §6).

Pure computation over numpy arrays and observation records; it imports nothing of the store
(``metadata``), of ``ranking`` or of ``xyleme``: the refresh pass (``xyleme.jobs.refresh_pass``)
reads the store, calls it and writes back, and due URL-Ids go to any
:class:`~refresh.scheduler.CrawlQueue` (the crawler is one).
See ``docs/refresh.md``.
"""

from refresh.change_rates import estimate_change_rates, fill_with_prior, group_prior
from refresh.estimators import EstimateKind, change_observation_mle, last_modified_rate
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
from refresh.scheduler import (
    CrawlQueue,
    FolderSchedule,
    RefreshTimetable,
    plan_time_unit,
    scan_due,
    submit_plan,
)
from refresh.settings import RefreshSettings

__all__ = [
    "AccessIntervals",
    "CrawlQueue",
    "EstimateKind",
    "FolderSchedule",
    "IncrementalPolicy",
    "LastModifiedVerdict",
    "ObservationBatch",
    "RefreshPlan",
    "RefreshSettings",
    "RefreshTimetable",
    "SqrtWeightSum",
    "change_observation_mle",
    "estimate_change_rates",
    "fill_with_prior",
    "group_prior",
    "last_modified_rate",
    "normalise_importance",
    "optimal_obsolescence",
    "penalty_intervals",
    "plan_time_unit",
    "refresh_intervals",
    "scan_due",
    "submit_plan",
]
