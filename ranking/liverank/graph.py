"""The old snapshot's link graph as LiveRank reads it.

LiveRank (Huynh, Mathieu, Viennot 2015, seed 001) orders the pages of an old crawl using only
the links recorded at that time. :class:`LinkGraph` holds them as a scipy CSR matrix (row =
source page) together with each page's host, which the active-site-first ordering needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ranking.errors import InvalidGraph


@dataclass(frozen=True, eq=False)
class LinkGraph:
    """The link structure of a snapshot: page ``i`` links to page ``j`` iff ``adjacency[i, j]``.

    Pages are numbered ``0 … n-1``. ``hosts`` (optional) gives each page's host as an integer;
    only the active-site-first ordering (ASF, §2.4) needs it.
    """

    adjacency: sp.csr_matrix
    hosts: np.ndarray | None = None

    @classmethod
    def from_edges(
        cls,
        sources: np.ndarray,
        targets: np.ndarray,
        n_pages: int | None = None,
        hosts: np.ndarray | None = None,
    ) -> LinkGraph:
        """Build the graph from parallel edge arrays; duplicate edges and self-links are dropped.

        A page's link to itself says nothing about whether another page lives, and a duplicated
        link would count twice in the in-degree, so both are removed. ``n_pages`` defaults to
        one more than the largest id seen (or the length of ``hosts``).
        """
        sources = np.asarray(sources, dtype=np.int64).ravel()
        targets = np.asarray(targets, dtype=np.int64).ravel()
        if sources.shape != targets.shape:
            raise InvalidGraph(
                f"{sources.size} edge sources but {targets.size} edge targets: they must pair up"
            )
        if n_pages is None:
            largest = int(max(sources.max(initial=-1), targets.max(initial=-1)))
            n_pages = len(hosts) if hosts is not None else largest + 1
        if sources.size and (min(sources.min(), targets.min()) < 0):
            raise InvalidGraph("page ids must be non-negative")
        if sources.size and max(sources.max(), targets.max()) >= n_pages:
            raise InvalidGraph(f"an edge names a page id >= the number of pages ({n_pages})")
        keep = sources != targets
        adjacency = sp.csr_matrix(
            (np.ones(int(keep.sum()), dtype=np.float64), (sources[keep], targets[keep])),
            shape=(n_pages, n_pages),
        )
        adjacency.sum_duplicates()
        adjacency.data[:] = 1.0
        return cls(adjacency=adjacency, hosts=_checked_hosts(hosts, n_pages))

    @property
    def n_pages(self) -> int:
        """The number of pages n of the snapshot."""
        return self.adjacency.shape[0]

    @cached_property
    def in_degree(self) -> np.ndarray:
        """How many distinct pages link to each page (int64)."""
        return np.bincount(self.adjacency.indices, minlength=self.n_pages).astype(np.int64)

    @cached_property
    def out_degree(self) -> np.ndarray:
        """How many distinct pages each page links to (int64)."""
        return np.diff(self.adjacency.indptr).astype(np.int64)

    def successors_of_many(self, pages: np.ndarray) -> np.ndarray:
        """The pages any of ``pages`` links to, one entry per link (repeats kept)."""
        indptr, indices = self.adjacency.indptr, self.adjacency.indices
        starts, ends = indptr[pages], indptr[pages + 1]
        lengths = ends - starts
        if not lengths.sum():
            return np.empty(0, dtype=indices.dtype)
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        return indices[offsets + np.arange(lengths.sum())]

    @cached_property
    def walk_transpose(self) -> sp.csr_matrix:
        """A^T, where A is the row-substochastic walk matrix of eq. (1).

        A[i, j] = 1/OutDeg(i) when i links to j; pages without links have a zero row, so their
        share of the walk is lost (A is substochastic, as §2.2 allows).
        """
        inverse_degree = np.divide(
            1.0, self.out_degree, out=np.zeros(self.n_pages), where=self.out_degree > 0
        )
        return sp.csr_matrix(sp.diags(inverse_degree) @ self.adjacency).T.tocsr()


def _checked_hosts(hosts: np.ndarray | None, n_pages: int) -> np.ndarray | None:
    if hosts is None:
        return None
    hosts = np.asarray(hosts)
    if hosts.shape != (n_pages,):
        raise InvalidGraph(f"{hosts.size} host entries for {n_pages} pages: give one per page")
    if not np.issubdtype(hosts.dtype, np.integer):
        raise InvalidGraph("hosts must be integer host numbers (factorise host names first)")
    return hosts
