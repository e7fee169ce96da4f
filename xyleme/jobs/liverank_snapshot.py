"""The old snapshot as LiveRank sees it in a repository: read pages, their links and hosts.

The re-check job's reading side: the store's arrays (``refresh_view``, ``export_links``,
``urls_of``) in, LiveRank's :class:`~ranking.liverank.LinkGraph` out, so ``ranking``
never reads the store itself.

The snapshot V is every page the repository has read at least once (any type but UNKNOWN);
its links are Link-Data restricted to V, renumbered 0 … n-1; a page's host comes from its
URL. Pages read again at or after a given time count as answered: alive when their type is
HTML, XML or DTD, dead when DEAD (an ERROR is transient and stays unknown).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conventions.hosts import host_keys
from metadata import PAGE_TYPE_CODE, Metadata, PageType
from ranking.liverank import ALIVE_ANSWER, DEAD_ANSWER, UNKNOWN_ANSWER, LinkGraph

_ALIVE_TYPES = [PAGE_TYPE_CODE[t] for t in (PageType.HTML, PageType.XML, PageType.DTD)]


@dataclass(frozen=True)
class RepositorySnapshot:
    """The graph of the read pages, their URL-Ids, and the answers known so far."""

    graph: LinkGraph
    url_ids: np.ndarray
    """``url_ids[page]`` is the URL-Id of the graph's page number ``page``."""
    answers: np.ndarray
    """One of ALIVE_ANSWER, DEAD_ANSWER, UNKNOWN_ANSWER per page, for :func:`replay`."""


def load_snapshot(md: Metadata, *, answered_since: float | None = None) -> RepositorySnapshot:
    """Read the snapshot from the metadata manager in a few vectorised queries.

    ``answered_since`` (simulated seconds since the epoch): pages whose last access is at or
    after it count as answered; None means no answer is known yet.
    """
    view = md.refresh_view()
    read = view["type"] != PAGE_TYPE_CODE[PageType.UNKNOWN]
    url_ids = view["id"][read]
    page_of = np.full(md.max_url_id() + 1, -1, dtype=np.int64)
    page_of[url_ids] = np.arange(url_ids.size)

    sources, targets = [], []
    for src, dst in md.export_links():
        src, dst = page_of[src], page_of[dst]
        keep = (src >= 0) & (dst >= 0)
        sources.append(src[keep])
        targets.append(dst[keep])
    hosts = host_keys(md.urls_of(url_ids.tolist()))
    graph = LinkGraph.from_edges(
        np.concatenate(sources) if sources else np.empty(0, dtype=np.int64),
        np.concatenate(targets) if targets else np.empty(0, dtype=np.int64),
        url_ids.size,
        hosts=hosts.astype(np.int64),
    )

    answers = np.full(url_ids.size, UNKNOWN_ANSWER, dtype=np.int8)
    if answered_since is not None:
        types = view["type"][read]
        recent = view["last_access"][read] >= answered_since
        answers[recent & np.isin(types, _ALIVE_TYPES)] = ALIVE_ANSWER
        answers[recent & (types == PAGE_TYPE_CODE[PageType.DEAD])] = DEAD_ANSWER
    return RepositorySnapshot(graph=graph, url_ids=url_ids, answers=answers)
