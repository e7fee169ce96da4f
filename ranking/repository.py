"""Ranking the pages of a xyleme repository: Link-Data in, importance and interest out.

The metadata's URL-Ids need not be dense (they start at 1, pages may be gone), so the pages
are numbered 0…P−1 in ascending id order and every exported chunk of links is mapped onto
those positions with one vectorised search, never a Python object per link. Both scores
are written for every page (importance is what XML pages are refreshed by, interest what
HTML pages are, ARCHITECTURE "r_i for the refresh rule"), and the provenance of each vector
(damping, sweeps, final figure, graph snapshot, time) goes to ``ranking/<kind>.json``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from ranking.errors import InvalidGraph, RankingError
from ranking.result import RankResult
from ranking.settings import RankingSettings

if TYPE_CHECKING:
    from ranking.sliced import ScanMonitor

KINDS = ("importance", "interest")


@dataclass(frozen=True)
class RepositoryRanking:
    """What one ranking of a repository computed; ``interest`` is None without XML pages."""

    importance: RankResult
    interest: RankResult | None
    pages: int
    xml_pages: int
    links: int


def _positions(ids: np.ndarray, urls: np.ndarray) -> np.ndarray:
    """The positions of URL-Ids in the ascending ``ids``; InvalidGraph for an id without page."""
    found = np.searchsorted(ids, urls)
    inside = found < ids.size
    matched = np.zeros(urls.shape, dtype=bool)
    matched[inside] = ids[found[inside]] == urls[inside]
    if not matched.all():
        missing = urls[~matched][0]
        raise InvalidGraph(f"a link names URL-Id {missing}, which has no page")
    return found.astype(np.int32)


def _link_positions(md: Metadata, ids: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for src, dst in md.export_links():
        yield _positions(ids, src), _positions(ids, dst)


def rank_repository(
    md: Metadata,
    folder: Path,
    settings: RankingSettings | None = None,
    *,
    monitor: ScanMonitor | None = None,
    cancel: threading.Event | None = None,
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

    Returns
    -------
    RepositoryRanking
        The two results (positions in ascending URL-Id order) and the graph's size.

    Notes
    -----
    Nothing is written when the run fails or is cancelled: the scores are set after both
    vectors have converged (:class:`~ranking.errors.NotConverged` otherwise).
    """
    from ranking.compute import importance_and_interest, pagerank  # numba: load when ranking
    from ranking.slices import SlicedGraph

    settings = settings or RankingSettings()
    view = md.refresh_view()
    ids, types = view["id"], view["type"]
    if ids.size == 0:
        raise RankingError("the repository has no page yet: nothing to rank")
    graph = SlicedGraph.from_chunks(
        _link_positions(md, ids), folder / "slices", memory=settings.memory, num_pages=ids.size
    )
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
            md.set_scores(result.kind, ids, np.asarray(result.values))
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
