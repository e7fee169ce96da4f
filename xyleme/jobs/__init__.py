"""The jobs: each reads from the store, calls the pure algorithms, and writes back.

``ranking`` and ``refresh`` compute over arrays and graphs and never see the store;
``metadata`` stores and never decides; a job sits above both (docs/architecture.md, "How a
job runs"). The daemon builds one of each and schedules them (:mod:`xyleme.daemon`); the CLI
and the dashboard call the same recipes.

* :class:`RefreshPass` — the refresh pass of each time unit and the release of its refreshes
  (§6.5–6.6), over the schedule recipe :func:`read_schedule`;
* :class:`RankingPass` / :func:`rank_repository` — importance and interest (§5);
* :class:`FetchListener` / :func:`restore_opic` — OPIC credited from the crawler's events;
* :class:`PartOPIC` / :class:`PartOPICListener` — one crawl worker's part of OPIC (§4.1),
  its cash for other parts sent through the store; :func:`cash_drift` checks the total;
* :func:`recheck` / :class:`RecheckTask` — the LiveRank re-check, direct or in the daemon;
* :class:`Checkpoint` — the daemon's memory saved in the store.
"""

from xyleme.jobs.checkpoint import Checkpoint
from xyleme.jobs.liverank_snapshot import RepositorySnapshot, load_snapshot
from xyleme.jobs.opic import FetchListener, restore_opic
from xyleme.jobs.opic_part import PartOPIC, PartOPICListener, PartStale, cash_drift, total_cash
from xyleme.jobs.ranking import RankingPass, RepositoryRanking, provenance, rank_repository
from xyleme.jobs.recheck import LivenessProbe, RecheckProgress, RecheckReport, recheck
from xyleme.jobs.recheck_request import (
    NothingToRecheck,
    RecheckRequest,
    prepare,
    progress_line,
    summary,
    summary_text,
)
from xyleme.jobs.recheck_task import RecheckTask
from xyleme.jobs.refresh_pass import RefreshPass
from xyleme.jobs.requeue import queue_not_loaded, queue_unread
from xyleme.jobs.schedule import Schedule, read_schedule
from xyleme.jobs.sitemaps import SitemapQueue

__all__ = [
    "Checkpoint",
    "FetchListener",
    "LivenessProbe",
    "NothingToRecheck",
    "PartOPIC",
    "PartOPICListener",
    "PartStale",
    "RankingPass",
    "RecheckProgress",
    "RecheckReport",
    "RecheckRequest",
    "RecheckTask",
    "RefreshPass",
    "RepositoryRanking",
    "RepositorySnapshot",
    "Schedule",
    "SitemapQueue",
    "cash_drift",
    "load_snapshot",
    "prepare",
    "progress_line",
    "provenance",
    "queue_not_loaded",
    "queue_unread",
    "rank_repository",
    "read_schedule",
    "recheck",
    "restore_opic",
    "summary",
    "summary_text",
    "total_cash",
]
