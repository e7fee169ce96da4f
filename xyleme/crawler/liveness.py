"""What a liveness probe answers about one page (LiveRank paper, seed 001, §2).

The crawler's probe (:class:`xyleme.crawler.probe.CrawlerProbe`) says it in these words, and
the re-check job (:mod:`xyleme.jobs.recheck`) reads them: the probe's vocabulary lives beside
the probe, so the crawler never imports the job that drives it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Verdict(enum.Enum):
    """What a probe concluded about one page."""

    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"
    """No conclusion (timeout, server error, robots.txt unreachable): tried again later."""


@dataclass(frozen=True, slots=True)
class Liveness:
    """One probe's answer: the verdict, why (``HTTP 404``, ``DNS failure …``, ``soft 404 …``),
    and the HTTP status when a response came."""

    verdict: Verdict
    reason: str
    status: int | None = None
