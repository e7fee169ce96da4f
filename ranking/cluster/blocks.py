"""A worker's block of the link matrix, read once from the slice files (any fsspec URL).

A block is the consecutive slices one worker owns (§5.4: "every computer is assigned a slice
to process, and gets the corresponding slice of the matrix"): destination pages lo…hi and
their in-links, in the CSC form of :mod:`ranking.pagerank.slices`. It is read from the repository's
slice folder through fsspec, so a shared path, ``file://``, ``s3://`` or any other fsspec
URL the workers can reach serves; it stays in the worker's memory for the whole run and is
never sent again.

The exchange plan follows from the blocks alone: worker k *needs*, from each peer l, the
values of the pages of l's range that are sources of k's in-links (the external sources of
its block). Those index lists are computed once; afterwards only values travel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import fsspec
import numpy as np

from ranking.errors import BudgetTooSmall, InvalidGraph
from ranking.pagerank.slices import SliceView

#: Bytes per page of the page-sized arrays a worker keeps (:mod:`ranking.cluster.worker`,
#: :mod:`ranking.cluster.worker_interest`): the direct vector (8), the out-degrees (4), the
#: interest, its children sums, its teleport vector and the two weight vectors (5 × 8), the
#: self-link flags (1).
WORKER_BYTES_PER_PAGE = 53
#: Bytes per page of its own range: the CSC pointers (8), the saved iterate of the direct
#: extrapolation (8), the interest's y (8) and the peers' last shares of its sums (≤ 8).
WORKER_BYTES_PER_OWN_PAGE = 32


@dataclass(frozen=True)
class GraphInfo:
    """What every worker and the coordinator know of a sliced graph: its manifest."""

    url: str
    num_pages: int
    num_edges: int
    bounds: np.ndarray
    slice_edges: list[int]
    snapshot: str

    @property
    def n_slices(self) -> int:
        return len(self.slice_edges)


def read_info(url: str) -> GraphInfo:
    """The manifest of the sliced graph at ``url`` (a folder path or fsspec URL)."""
    try:
        with fsspec.open(f"{url.rstrip('/')}/manifest.json", "r") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError) as error:
        raise InvalidGraph(f"{url} holds no sliced graph: {error}") from error
    return GraphInfo(
        url=url,
        num_pages=manifest["num_pages"],
        num_edges=manifest["num_edges"],
        bounds=np.asarray(manifest["bounds"], dtype=np.int64),
        slice_edges=list(manifest["slice_edges"]),
        snapshot=manifest["snapshot"],
    )


def assign(n_slices: int, n_workers: int) -> list[list[int]]:
    """Consecutive groups of slices, one per worker (fewer workers when slices are fewer).

    Examples
    --------
    >>> assign(5, 2)
    [[0, 1], [2, 3, 4]]
    """
    workers = min(n_slices, n_workers)
    cuts = np.linspace(0, n_slices, workers + 1).round().astype(int)
    return [list(range(cuts[w], cuts[w + 1])) for w in range(workers)]


def block_bytes(info: GraphInfo, slices: list[int]) -> int:
    """Memory a worker needs for ``slices``: its block plus its page-sized arrays."""
    lo, hi = int(info.bounds[slices[0]]), int(info.bounds[slices[-1] + 1])
    edges = sum(info.slice_edges[k] for k in slices)
    own = (hi - lo) * WORKER_BYTES_PER_OWN_PAGE + len(slices) * 8
    return edges * 4 + own + info.num_pages * WORKER_BYTES_PER_PAGE


def check_budget(info: GraphInfo, groups: list[list[int]], budget: int) -> None:
    """Refuse a plan whose largest worker would exceed the per-worker ``budget``."""
    largest = max(block_bytes(info, group) for group in groups)
    if largest > budget:
        raise BudgetTooSmall(
            f"a worker needs {largest / 2**20:.1f} MB for its block and vectors, over its "
            f"budget of {budget / 2**20:.1f} MB: use more workers or more memory per worker"
        )


def load_block(info: GraphInfo, slices: list[int]) -> list[SliceView]:
    """Read the slices ``slices`` into memory (the worker's share of the matrix)."""
    views = []
    for index in slices:
        lo, hi = int(info.bounds[index]), int(info.bounds[index + 1])
        indptr = _read(info.url, f"slice-{index:05d}.indptr", np.int64, hi - lo + 1)
        sources = _read(info.url, f"slice-{index:05d}.src", np.int32, info.slice_edges[index])
        views.append(SliceView(index, lo, hi, indptr, sources))
    return views


def read_outdeg(info: GraphInfo) -> np.ndarray:
    """The out-degree of every page (``outdeg.npy`` beside the slices)."""
    try:
        with fsspec.open(f"{info.url.rstrip('/')}/outdeg.npy", "rb") as stream:
            outdeg = np.load(stream)
    except (OSError, ValueError) as error:
        raise InvalidGraph(f"cannot read the out-degrees of {info.url}: {error}") from error
    return np.ascontiguousarray(outdeg, dtype=np.int32)


def needs(
    block: list[SliceView], owner_ranges: list[tuple[int, int]], own: int
) -> dict[int, np.ndarray]:
    """For each other worker, the sorted pages of its range that are sources in ``block``.

    One flag a page, set by every link, then read per range: O(links + pages), where sorting
    the block's sources (``np.unique``) took 27 s of a worker's start at 20M pages and 75M
    links, against 1.1 s this way."""
    marked = np.zeros(max(hi for _, hi in owner_ranges), dtype=np.bool_)
    for view in block:
        marked[view.sources] = True
    return {
        peer: np.flatnonzero(marked[lo:hi]).astype(np.int64) + lo
        for peer, (lo, hi) in enumerate(owner_ranges)
        if peer != own
    }


def _read(url: str, name: str, dtype: type, count: int) -> np.ndarray:
    try:
        with fsspec.open(f"{url.rstrip('/')}/{name}", "rb") as stream:
            data = np.frombuffer(stream.read(), dtype=dtype)
    except OSError as error:
        raise InvalidGraph(f"cannot read {name} of {url}: {error}") from error
    if data.size != count:
        raise InvalidGraph(f"{url}/{name} holds {data.size} values, not {count}: truncated")
    return data.copy()
