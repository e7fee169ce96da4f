"""``xyleme recheck``: what a re-check asks for and how it reports, whoever runs it.

The engine (:func:`xyleme.jobs.recheck.recheck`) with the crawler's probe
(:class:`xyleme.crawler.probe.CrawlerProbe`) runs either in the CLI, when no daemon holds the
repository (:mod:`xyleme.cli.recheck`), or in the daemon as a background task, its probe
sharing the daemon's crawler (:class:`xyleme.jobs.recheck_task.RecheckTask`). Both build the
LiveRank session the same way (:func:`prepare`) and report with the same words
(:func:`progress_line`, :func:`summary`, :func:`summary_text`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from metadata import Metadata
from ranking.liverank import LiveRankSession, LiveRankSettings, make_liverank
from xyleme.crawler.liveness import Verdict
from xyleme.jobs.liverank_snapshot import load_snapshot
from xyleme.jobs.recheck import RecheckProgress, RecheckReport


class NothingToRecheck(ValueError):
    """The repository holds no page read yet."""


@dataclass(frozen=True, slots=True)
class RecheckRequest:
    """The arguments of one re-check (the CLI's options; the command table's ``args``)."""

    strategy: str = "pa_pm"
    sample: float = 0.01
    sample_kind: str = "random"
    seed: int = 0
    budget: int | None = None
    method: str = "head"
    concurrency: int = 16

    def liverank_settings(self) -> LiveRankSettings:
        """The session's settings (raises ``LiveRankError`` / ``ValueError`` when wrong)."""
        return LiveRankSettings(
            strategy=self.strategy,
            sample=self.sample,
            sample_kind=self.sample_kind,
            seed=self.seed,
        )

    def as_args(self) -> dict[str, Any]:
        """The arguments as the command table stores them (``RecheckRequest(**args)`` back)."""
        return asdict(self)


def prepare(md: Metadata, request: RecheckRequest) -> tuple[LiveRankSession, np.ndarray]:
    """The LiveRank session over the pages read so far, and the URL-Id of each of its pages.

    Raises :class:`NothingToRecheck` when no page has been read.
    """
    settings = request.liverank_settings()
    snapshot = load_snapshot(md)
    if not snapshot.graph.n_pages:
        raise NothingToRecheck("no page has been read yet: nothing to re-check")
    return make_liverank(snapshot.graph, settings), snapshot.url_ids


def progress_line(progress: RecheckProgress) -> str:
    """The running figures: fetches spent, and the fraction of them that found a live page."""
    return (
        f"fetches {progress.fetches}: alive {progress.alive} "
        f"({progress.fraction_alive:.3f} per fetch), dead {progress.dead}, "
        f"unknown {progress.unknown}"
    )


def summary(request: RecheckRequest, report: RecheckReport, requests: int) -> dict[str, Any]:
    """A finished pass's figures (``requests``: HTTP requests the probe sent)."""
    progress = report.progress
    dead_reasons = Counter(
        _reason_kind(answer.reason) for answer in report.answers if answer.verdict is Verdict.DEAD
    )
    return {
        "strategy": request.strategy,
        "method": request.method,
        "pages": progress.pages,
        "fetches": progress.fetches,
        "requests": requests,
        "alive": progress.alive,
        "dead": progress.dead,
        "unknown": progress.unknown,
        "fraction_alive": round(progress.fraction_alive, 4),
        "complete": report.complete,
        "dead_reasons": dict(dead_reasons.most_common()),
    }


def summary_text(figures: dict[str, Any]) -> str:
    """:func:`summary` as a sentence, then one line per kind of death."""
    lines = [
        f"{figures['strategy']}: {figures['fetches']} of {figures['pages']} pages tested "
        f"({figures['requests']} HTTP requests): {figures['alive']} alive, "
        f"{figures['dead']} dead, {figures['unknown']} unknown; "
        f"fraction alive {figures['fraction_alive']:.3f}"
        + ("" if figures["complete"] else " (budget spent)")
    ]
    lines += [f"  dead: {count:6d}  {reason}" for reason, count in figures["dead_reasons"].items()]
    return "\n".join(lines)


def _reason_kind(reason: str) -> str:
    """A reason without its particulars: ``HTTP 404``, ``DNS failure``, ``soft 404``."""
    if "DNS failure" in reason:
        return "DNS failure"
    return reason.split(":")[0].split(" (")[0]
