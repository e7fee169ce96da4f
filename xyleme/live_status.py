"""The daemon's in-memory figures, as ``xyleme status`` and the dashboard show them.

Saved by every checkpoint (:mod:`xyleme.jobs.checkpoint`), read live by the dashboard.
"""

from __future__ import annotations

from typing import Any

from metadata import Clock
from xyleme.config import Config
from xyleme.jobs import RankingPass, RecheckTask, RefreshPass
from xyleme.workers import Workers


class LiveStatus:
    """Calling it gives the figures of this moment (a JSON-ready dict)."""

    def __init__(
        self,
        config: Config,
        clock: Clock,
        workers: Workers,
        refresh: RefreshPass,
        ranking: RankingPass,
        rechecks: RecheckTask,
    ) -> None:
        self.config = config
        self.clock = clock
        self.crawler = workers.crawler
        self.workers = workers
        self.refresh = refresh
        self.ranking = ranking
        self.rechecks = rechecks

    def __call__(self) -> dict[str, Any]:
        crawl, config = self.crawler.snapshot(), self.config
        per_unit = self.refresh.refreshes_per_unit
        return {
            "at": self.clock.now(),
            "fetch_rate": crawl["pages_per_s"] if self.workers.running else 0.0,
            "queues": {str(level): size for level, size in crawl["queues"].items()},
            "fetched": crawl["pages"],
            "loaded": self.crawler.lane.loaded,
            "errors": crawl["errors"],
            "last_refresh": self.refresh.last,
            "last_ranking": self.ranking.last,
            "refreshes_last_unit": per_unit[-1] if per_unit else None,
            **({"recheck": self.rechecks.status} if self.rechecks.status else {}),
            "policy": {
                "G": config.bandwidth.G,
                "theta": config.bandwidth.theta,
                "time_unit": config.clock.time_unit,
                **self.refresh.figures(),
            },
        }
