"""The re-check job: an old repository tested in LiveRank order (LiveRank paper, seed 001, §2).

The engine drives a :class:`~ranking.liverank.LiveRankSession` (any strategy)
against a :class:`LivenessProbe`, an object that answers "is this page still alive?" for a
URL-Id. The crawler's probe (:class:`xyleme.crawler.probe.CrawlerProbe`) answers over HTTP;
tests and benchmarks answer from a known truth. The engine keeps up to ``concurrency`` probes
in flight, gives each answer to the session as soon as it arrives (so the dynamic BFS and AI
orderings re-order on it), never asks about a page twice in one pass, stops after ``budget``
probes, and reports its progress — the fraction of pages found alive against the fetches
spent, the quantity whose curve cost(L, α) (§2.1) summarises — through a callback.

A probe's UNKNOWN answer (a timeout, a 5xx: nothing says the page is gone) is given to the
session as "not alive" — it was not found alive, and a session needs an answer to go on — but
is counted apart in the progress.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ranking.liverank import LiveRankSession
from xyleme.crawler import Liveness, Verdict

log = logging.getLogger(__name__)


class LivenessProbe(Protocol):
    """Tests whether a page is still alive; records nothing the engine needs to know."""

    async def probe(self, url_id: int) -> Liveness:
        """The answer for ``url_id``; failures are answers (UNKNOWN), not exceptions."""
        ...


@dataclass(frozen=True, slots=True)
class RecheckProgress:
    """Where a re-check stands: fetches spent and what they found, out of ``pages``."""

    pages: int
    fetches: int
    alive: int
    dead: int
    unknown: int

    @property
    def fraction_alive(self) -> float:
        """Pages found alive per fetch spent (1 for an ideal LiveRank, n_a/n for a random one)."""
        return self.alive / self.fetches if self.fetches else 0.0


@dataclass
class RecheckReport:
    """A finished (or budget-stopped) pass: the order tested and every answer."""

    url_ids: list[int] = field(default_factory=list)
    """The URL-Ids in the order the session handed them out (the LiveRank order)."""
    answers: list[Liveness] = field(default_factory=list)
    """``answers[k]`` is the answer for ``url_ids[k]``."""
    progress: RecheckProgress | None = None
    complete: bool = False
    """True when every page of the snapshot was tested (no budget cut the pass short)."""

    @property
    def alive(self) -> np.ndarray:
        """One boolean per tested page, in order: was it found alive?"""
        return np.array([a.verdict is Verdict.ALIVE for a in self.answers], dtype=bool)


class RepeatedPage(RuntimeError):
    """A session handed out a page it had already handed out in this pass (a bug)."""


async def recheck(
    session: LiveRankSession,
    url_ids: np.ndarray,
    probe: LivenessProbe,
    *,
    budget: int | None = None,
    concurrency: int = 16,
    on_progress: Callable[[RecheckProgress], None] | None = None,
) -> RecheckReport:
    """Test pages in the order ``session`` decides, until it is exhausted or ``budget`` is spent.

    Parameters
    ----------
    session
        A fresh LiveRank session over the snapshot's pages 0 … n-1 (``make_liverank``).
    url_ids
        ``url_ids[page]``: the URL-Id the probe is asked about for the session's ``page``.
    probe
        Answers for one URL-Id at a time; up to ``concurrency`` calls run at once.
    budget
        The most probes spent (None: every page once).
    concurrency
        Probes in flight at once. With 1 the order is exactly the sequential LiveRank; with
        more, a dynamic strategy decides each page from the answers already in.
    on_progress
        Called after every answer with the running :class:`RecheckProgress`.

    Returns
    -------
    RecheckReport
        The URL-Ids in the order tested, each answer, the final progress.

    Examples
    --------
    >>> from ranking.liverank import LinkGraph, LiveRankSettings, make_liverank
    >>> graph = LinkGraph.from_edges([0, 1], [1, 2], hosts=np.array([0, 0, 0]))
    >>> class Truth:
    ...     async def probe(self, url_id):
    ...         alive = url_id != 12
    ...         return Liveness(Verdict.ALIVE if alive else Verdict.DEAD, "truth")
    >>> session = make_liverank(graph, LiveRankSettings(strategy="i"))
    >>> report = asyncio.run(recheck(session, np.array([10, 11, 12]), Truth(), budget=2))
    >>> report.url_ids, report.progress.fraction_alive, report.complete
    ([11, 12], 0.5, False)
    """
    if budget is not None and budget < 0:
        raise ValueError(f"budget must be ≥ 0, not {budget}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be ≥ 1, not {concurrency}")
    if len(url_ids) != session.n_pages:
        raise ValueError(f"{len(url_ids)} URL-Ids for a session over {session.n_pages} pages")
    limit = session.n_pages if budget is None else min(budget, session.n_pages)
    report = RecheckReport()
    handed: set[int] = set()
    counts = {verdict: 0 for verdict in Verdict}
    in_flight: dict[asyncio.Future[Liveness], tuple[int, int]] = {}  # → (position, page)
    try:
        while True:
            free = min(concurrency - len(in_flight), limit - len(handed))
            batch = session.next_batch(free) if free > 0 else np.empty(0, dtype=np.int64)
            for page in batch.tolist():
                if page in handed:
                    raise RepeatedPage(f"page {page} handed out twice in one pass")
                handed.add(page)
                url_id = int(url_ids[page])
                report.url_ids.append(url_id)
                report.answers.append(Liveness(Verdict.UNKNOWN, "in flight"))
                task = asyncio.ensure_future(_ask(probe, url_id))
                in_flight[task] = (len(report.answers) - 1, page)
            if not in_flight:
                break  # budget spent, session exhausted (or waiting on nothing: done)
            done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                position, page = in_flight.pop(task)
                answer = task.result()
                report.answers[position] = answer
                counts[answer.verdict] += 1
                session.record(page, answer.verdict is Verdict.ALIVE)
                report.progress = RecheckProgress(
                    session.n_pages,
                    sum(counts.values()),
                    counts[Verdict.ALIVE],
                    counts[Verdict.DEAD],
                    counts[Verdict.UNKNOWN],
                )
                if on_progress is not None:
                    on_progress(report.progress)
    finally:
        for task in in_flight:
            task.cancel()
        if in_flight:
            await asyncio.gather(*in_flight, return_exceptions=True)
    if report.progress is None:
        report.progress = RecheckProgress(session.n_pages, 0, 0, 0, 0)
    report.complete = len(handed) == session.n_pages
    return report


async def _ask(probe: LivenessProbe, url_id: int) -> Liveness:
    """The probe's answer; a probe that raises (a bug of its own) gives UNKNOWN, logged.

    ``Exception`` is what "a bug" means here: a probe reports every failure it knows as an
    answer, so anything it raises is unforeseen, and one page's bug must not end the pass.
    Cancellation (``asyncio.CancelledError``), ``KeyboardInterrupt`` and ``SystemExit`` are
    not ``Exception``: they pass through, and the pass ends (tests/refresh/test_recheck.py).
    """
    try:
        return await probe.probe(url_id)
    except Exception as error:
        log.exception("liveness probe failed on URL-Id %d", url_id)
        return Liveness(Verdict.UNKNOWN, f"probe failed: {error!r}")
