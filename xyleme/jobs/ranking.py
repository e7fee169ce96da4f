"""The ranking pass: the pages of a repository, Link-Data in, importance and interest out.

The job reads the link matrix from the store, hands it to the ranking algorithms (the sliced
Gauss-Seidel of §5, in ``ranking.pagerank.compute``) and writes the two scores back; the daemon runs
it every ``rank_every`` units through :class:`RankingPass`, ``xyleme rank compute`` through
:func:`rank_repository`.

The graph is the metadata's link matrix (§5, :mod:`metadata.link_matrix`): the pages that
are or may be documents, numbered 0…P−1 in ascending URL-Id order, and their links with
redirects followed, links to pages outside it dropped and each pair of pages once. Both
scores are written for every page of the matrix (importance is what XML pages are refreshed
by, interest what HTML pages are, ARCHITECTURE "r_i for the refresh rule"); the pages left
out (errors, dead pages, dependencies, redirects, resources) get no score (NULL), so a page
that became an error loses the score it had. The provenance of each vector (damping,
sweeps, final figure, graph snapshot, time) goes to ``ranking/<kind>.json``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from metadata.clock import Clock
from ranking import RankingCancelled, RankingError, RankingSettings, RankResult

if TYPE_CHECKING:
    from ranking.pagerank import ScanMonitor
    from xyleme.crawler import Scope

log = logging.getLogger(__name__)

KINDS = ("importance", "interest")


@dataclass(frozen=True)
class RepositoryRanking:
    """What one ranking of a repository computed; ``interest`` is None without XML pages."""

    importance: RankResult
    interest: RankResult | None
    pages: int
    xml_pages: int
    links: int


def rank_repository(
    md: Metadata,
    folder: Path,
    settings: RankingSettings | None = None,
    *,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
    in_scope: Callable[[str], bool] | None = None,
) -> RepositoryRanking:
    """Compute importance and interest of every page and store them in the metadata.

    Parameters
    ----------
    md : Metadata
        An open, writable metadata manager.
    folder : Path
        The repository's ``ranking/`` folder: slices and provenance go there.
    settings : RankingSettings, optional
        Damping, tolerance, sweeps guard, memory budget and interest variant.
    monitor, cancel
        Progress per slice; an event that stops the run between slices.
    in_scope : callable, optional
        The crawl scope (URL → bool): the URLs not read yet outside it stay out of the
        matrix (the daemon passes its crawler's).

    Returns
    -------
    RepositoryRanking
        The two results (positions in ascending URL-Id order) and the graph's size.

    Notes
    -----
    Nothing is written when the run fails or is cancelled: the scores are set after both
    vectors have converged (:class:`~ranking.errors.NotConverged` otherwise).
    """
    from ranking.pagerank import (  # numba: load when ranking
        SlicedGraph,
        importance_and_interest,
        pagerank,
    )

    settings = settings or RankingSettings()
    with md.link_matrix(in_scope=in_scope) as matrix:
        ids, types, all_ids = matrix.ids, matrix.types, matrix.all_ids
        if ids.size == 0:
            raise RankingError(
                "the repository has no page yet that is or may be a document: nothing to rank"
            )
        graph = SlicedGraph.from_chunks(
            matrix.edges(), folder / "slices", memory=settings.memory, num_pages=ids.size
        )
        in_matrix = matrix.in_matrix
    is_xml = types == PAGE_TYPE_CODE[PageType.XML]
    options = {"damping": settings.damping, "tol": settings.tol, "max_sweeps": settings.max_sweeps}
    if is_xml.any():
        importance, interest = importance_and_interest(
            graph, is_xml, variant=settings.variant, monitor=monitor, cancel=cancel, **options
        )
    else:
        importance = pagerank(graph, monitor=monitor, cancel=cancel, **options)
        interest = None
    computed_at = time.time()
    for result in (importance, interest):
        if result is not None:
            values = np.full(all_ids.size, np.nan)  # no score outside the matrix
            values[in_matrix] = result.values
            md.set_scores(result.kind, all_ids, values)
            record = {**result.provenance(), "computed_at": computed_at, "pages": int(ids.size)}
            (folder / f"{result.kind}.json").write_text(json.dumps(record, indent=2))
    if interest is None:
        (folder / "interest.json").unlink(missing_ok=True)
    return RepositoryRanking(
        importance, interest, int(ids.size), int(is_xml.sum()), graph.num_edges
    )


def provenance(folder: Path) -> dict[str, dict]:
    """How the stored scores were computed, by kind (absent kinds were never computed)."""
    found = {}
    for kind in KINDS:
        path = folder / f"{kind}.json"
        if path.exists():
            found[kind] = json.loads(path.read_text())
    return found


class RankingPass:
    """The daemon's ranking pass (paper §5), every ``rank_every`` units or on ``rank compute``.

    The sliced computation runs in a worker thread (its kernels release the GIL), so fetching
    goes on; :meth:`cancel` (the daemon's stop) ends it between two slices, and nothing is
    written then. ``scope`` says what the crawler may fetch (unread pages outside it stay out
    of the matrix).
    """

    def __init__(
        self,
        md: Metadata,
        folder: Path,
        settings: RankingSettings,
        clock: Clock,
        scope: Callable[[], Scope],
    ) -> None:
        self.md = md
        self.folder = folder
        self.settings = settings
        self.clock = clock
        self.scope = scope
        self.last: float | None = None
        """Simulated time of the last pass that wrote its scores."""
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Stop a pass in progress between two slices (it is recomputed at the next start)."""
        self._cancel.set()

    async def run(self) -> dict[str, Any]:
        """One pass now; returns its figures (also logged). Raises :class:`RankingError`."""
        started, real_start = self.clock.now(), time.monotonic()
        self._cancel.clear()
        scope = self.scope()
        ranking = await asyncio.to_thread(
            rank_repository,
            self.md,
            self.folder,
            self.settings,
            cancel=self._cancel,
            in_scope=lambda url: scope.refusal(url) is None,
        )
        self.last = started
        log.info(
            "ranking pass in %.1f s: %d pages (%d XML), %d links; importance in %d sweeps%s",
            time.monotonic() - real_start,
            ranking.pages,
            ranking.xml_pages,
            ranking.links,
            ranking.importance.sweeps,
            "" if ranking.interest is None else f", interest in {ranking.interest.sweeps}",
        )
        return {
            "pages": ranking.pages,
            "xml_pages": ranking.xml_pages,
            "links": ranking.links,
            "importance_sweeps": ranking.importance.sweeps,
            "interest_sweeps": None if ranking.interest is None else ranking.interest.sweeps,
        }

    async def periodic(self) -> None:
        """The scheduled pass: a cancelled or impossible one waits for the next time."""
        try:
            await self.run()
        except RankingCancelled:
            log.info("ranking pass cancelled by the stop")
        except RankingError as error:  # e.g. no page yet, not converged: next time
            log.warning("ranking pass skipped: %s", error)
