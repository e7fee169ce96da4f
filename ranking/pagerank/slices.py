"""The link matrix cut by destination into S slices, written once to disk (paper §5.3).

Slice k holds every link i → j whose destination j lies in the page range
[bounds[k], bounds[k+1]), in CSC order: for each destination, the sources of its in-links.
The direct ranking reads a slice and updates its destination range in place (Gauss-Seidel);
the inverse ranking reads the same slice and scatters into its sources, as the paper notes
the same slices serve both.

S follows the memory budget: the ranges are cut so the largest slice (4 bytes per link,
16 per page while building) fits in the budget left after the vectors, which are memory-mapped
when they take more than half of it. Building streams the edges: a spill file when they come
from an iterator, then a degree pass, a partition pass into per-slice files, and a counting
sort per slice; no Python object per edge and no edge-sized array in memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ranking.errors import BudgetTooSmall, InvalidGraph
from ranking.pagerank import kernels
from ranking.pagerank.memory import allocate, parse_size

#: Bytes per page of all the ranking vectors of a combined scan: the scaled direct vector
#: (8), the out-degrees (4), the interest, its children sums, their copies saved for the
#: extrapolation and its teleport vector (5 × 8), the two vectors of the weights of its
#: error bound (2 × 8, :mod:`ranking.pagerank.inverse_bound`), the self-link flags (1).
VECTOR_BYTES_PER_PAGE = 69
#: Bytes a slice takes in memory: its sources (4 per link) and, while building, its indptr
#: and fill cursors (2 × 8 per destination page).
SLICE_BYTES_PER_EDGE = 4
SLICE_BYTES_PER_PAGE = 16
#: Slice files a partition pass keeps open at once.
_OPEN_FILES = 128
_MANIFEST = "manifest.json"
_FORMAT = 1


def vectors_fit(num_pages: int, budget: int) -> bool:
    """Whether the vectors of a combined scan stay in RAM (they take at most half the budget)."""
    return num_pages * VECTOR_BYTES_PER_PAGE <= budget // 2


def chunk_edges_for(budget: int) -> int:
    """Edges per streamed chunk: its temporaries (~40 bytes a link) take under a quarter of
    the budget."""
    return int(min(max(budget // 160, 1 << 14), 1 << 22))


class ArrayEdges:
    """Edges held in two integer arrays (in RAM or memory-mapped .npy files), re-readable."""

    def __init__(self, src: np.ndarray, dst: np.ndarray) -> None:
        if src.ndim != 1 or src.shape != dst.shape:
            raise InvalidGraph(
                f"src and dst must be 1-d of one length, not {src.shape} {dst.shape}"
            )
        if not (np.issubdtype(src.dtype, np.integer) and np.issubdtype(dst.dtype, np.integer)):
            raise InvalidGraph(f"edge ids must be integers, not {src.dtype} / {dst.dtype}")
        self.src, self.dst = src, dst

    def __len__(self) -> int:
        return self.src.shape[0]

    def chunks(self, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, len(self), size):
            yield self.src[start : start + size], self.dst[start : start + size]


@dataclass(frozen=True)
class SliceView:
    """One slice as the solvers see it: destination pages lo…hi and their in-links (CSC)."""

    index: int
    lo: int
    hi: int
    indptr: np.ndarray
    sources: np.ndarray


class SlicedGraph:
    """A link matrix sliced by destination on disk, with its out-degrees.

    Build one with :meth:`from_arrays`, :meth:`from_npy` or :meth:`from_chunks`; reopen it
    with :meth:`open`. ``snapshot`` identifies the edges it was built from (a BLAKE2 digest
    of the page count and the edges in input order).

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> g = SlicedGraph.from_arrays(np.array([0, 1, 2]), np.array([1, 2, 0]), d, slices=2)
    >>> g.num_pages, g.num_edges, g.n_slices
    (3, 3, 2)
    """

    def __init__(self, directory: Path, manifest: dict, *, budget: int | None = None) -> None:
        self.directory = directory
        self.num_pages: int = manifest["num_pages"]
        self.num_edges: int = manifest["num_edges"]
        self.bounds = np.asarray(manifest["bounds"], dtype=np.int64)
        self.slice_edges: list[int] = manifest["slice_edges"]
        self.snapshot: str = manifest["snapshot"]
        self.budget: int = budget if budget is not None else manifest["budget"]
        self.outdeg = np.asarray(np.load(directory / "outdeg.npy", mmap_mode="r"))
        if vectors_fit(self.num_pages, self.budget):
            self.outdeg = np.array(self.outdeg)
        self._buffers: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def n_slices(self) -> int:
        return len(self.slice_edges)

    @property
    def vectors_in_ram(self) -> bool:
        return vectors_fit(self.num_pages, self.budget)

    # -- building --------------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        src: np.ndarray,
        dst: np.ndarray,
        directory: Path,
        *,
        memory: str | int = "256MB",
        num_pages: int | None = None,
        slices: int | None = None,
    ) -> SlicedGraph:
        """Slice the links ``src[e] → dst[e]`` (page ids 0…N−1) into ``directory``.

        ``num_pages`` defaults to the largest id + 1; ``slices`` forces S instead of
        deriving it from ``memory``. Duplicate links count with their multiplicity.
        """
        return cls._build(
            ArrayEdges(src, dst), Path(directory), parse_size(memory), num_pages, slices
        )

    @classmethod
    def from_npy(
        cls, src_path: Path, dst_path: Path, directory: Path, **options: object
    ) -> SlicedGraph:
        """Slice the links stored in two .npy files of integer page ids (memory-mapped)."""
        try:
            src = np.load(src_path, mmap_mode="r")
            dst = np.load(dst_path, mmap_mode="r")
        except (OSError, ValueError) as error:
            raise InvalidGraph(f"cannot read the edge files: {error}") from error
        return cls.from_arrays(src, dst, directory, **options)

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[tuple[np.ndarray, np.ndarray]],
        directory: Path,
        *,
        memory: str | int = "256MB",
        num_pages: int | None = None,
        slices: int | None = None,
    ) -> SlicedGraph:
        """Slice links streamed as (src, dst) chunks, e.g. ``Metadata.export_links()``.

        The chunks are spilled once to ``directory`` and read back from there.
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        spill_path = directory / "edges.spill"
        count = 0
        with open(spill_path, "wb") as spill:
            for src, dst in chunks:
                pair = np.empty((len(src), 2), dtype=np.int32)
                pair[:, 0] = _as_ids(src)
                pair[:, 1] = _as_ids(dst)
                pair.tofile(spill)
                count += len(src)
        try:
            if count == 0:  # no link (a file of zero bytes cannot be mapped)
                pairs = np.empty((0, 2), dtype=np.int32)
            else:
                pairs = np.memmap(spill_path, dtype=np.int32, mode="r", shape=(count, 2))
            edges = ArrayEdges(pairs[:, 0], pairs[:, 1])
            return cls._build(edges, directory, parse_size(memory), num_pages, slices)
        finally:
            spill_path.unlink(missing_ok=True)

    @classmethod
    def _build(
        cls,
        edges: ArrayEdges,
        directory: Path,
        budget: int,
        num_pages: int | None,
        slices: int | None,
    ) -> SlicedGraph:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / _MANIFEST).unlink(missing_ok=True)
        for old in directory.glob("slice-*"):
            old.unlink()
        chunk = chunk_edges_for(budget)
        if num_pages is None:
            num_pages = 1 + max(
                (max(int(s.max()), int(d.max())) for s, d in edges.chunks(chunk) if len(s)),
                default=-1,
            )
        if num_pages <= 0:
            raise InvalidGraph("the graph has no page")
        if num_pages >= 2**31:
            raise InvalidGraph(f"{num_pages} pages exceed the 2³¹ ids of int32 slices")
        in_ram = vectors_fit(num_pages, budget)
        outdeg = allocate(num_pages, np.int32, on_disk=None if in_ram else directory / "outdeg.npy")
        indeg_path = None if in_ram else directory / "indeg.tmp.npy"
        indeg = allocate(num_pages, np.int64, on_disk=indeg_path)
        digest = hashlib.blake2b(str(num_pages).encode(), digest_size=12)
        for src, dst in edges.chunks(chunk):
            src, dst = _as_ids(src), _as_ids(dst)
            if len(src) and min(src.min(), dst.min()) < 0:
                raise InvalidGraph("negative page ids in the edges")
            if len(src) and max(src.max(), dst.max()) >= num_pages:
                largest = max(src.max(), dst.max())
                raise InvalidGraph(f"page id {largest} is out of range for {num_pages} pages")
            digest.update(src.tobytes())
            digest.update(dst.tobytes())
            kernels.count_degrees(src, dst, outdeg, indeg)
        if in_ram:
            np.save(directory / "outdeg.npy", outdeg)
        bounds = _choose_bounds(indeg, len(edges), budget, in_ram, num_pages, slices)
        slice_edges = _write_slices(edges, indeg, bounds, directory, chunk)
        del indeg
        if indeg_path is not None:
            indeg_path.unlink()
        manifest = {
            "format": _FORMAT,
            "num_pages": num_pages,
            "num_edges": len(edges),
            "bounds": bounds.tolist(),
            "slice_edges": slice_edges,
            "snapshot": digest.hexdigest(),
            "budget": budget,
        }
        temporary = directory / (_MANIFEST + ".tmp")
        temporary.write_text(json.dumps(manifest))
        os.replace(temporary, directory / _MANIFEST)
        return cls(directory, manifest)

    @classmethod
    def open(cls, directory: Path, *, memory: str | int | None = None) -> SlicedGraph:
        """Reopen a sliced graph; ``memory`` overrides the budget it was built with."""
        directory = Path(directory)
        try:
            manifest = json.loads((directory / _MANIFEST).read_text())
        except (OSError, ValueError) as error:
            raise InvalidGraph(f"{directory} holds no sliced graph: {error}") from error
        if manifest.get("format") != _FORMAT:
            raise InvalidGraph(f"{directory}: unknown slice format {manifest.get('format')}")
        return cls(directory, manifest, budget=None if memory is None else parse_size(memory))

    # -- reading ---------------------------------------------------------------------------

    def vector(self, name: str, dtype: type = np.float64, fill: float = 0) -> np.ndarray:
        """A page-sized working vector: in RAM when the vectors fit the budget, else mapped."""
        on_disk = None if self.vectors_in_ram else self.directory / f"{name}.vec.npy"
        return allocate(self.num_pages, dtype, on_disk=on_disk, fill=fill)

    def slices(self) -> Iterator[SliceView]:
        """Read the slices one after another into two reused buffers (the budget's share)."""
        if self._buffers is None:
            rows = int(np.diff(self.bounds).max())
            self._buffers = (
                np.empty(rows + 1, dtype=np.int64),
                np.empty(max(self.slice_edges), dtype=np.int32),
            )
        indptr_buffer, source_buffer = self._buffers
        for index in range(self.n_slices):
            lo, hi = int(self.bounds[index]), int(self.bounds[index + 1])
            indptr = indptr_buffer[: hi - lo + 1]
            sources = source_buffer[: self.slice_edges[index]]
            _read_into(self.directory / f"slice-{index:05d}.indptr", indptr)
            _read_into(self.directory / f"slice-{index:05d}.src", sources)
            yield SliceView(index, lo, hi, indptr, sources)


def _as_ids(ids: np.ndarray) -> np.ndarray:
    """A chunk of page ids as contiguous int32, refusing what does not fit."""
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise InvalidGraph(f"edge ids must be integers, not {ids.dtype}")
    if ids.dtype.itemsize > 4 and len(ids) and ids.max() >= 2**31:
        raise InvalidGraph(f"page id {ids.max()} exceeds int32")
    return np.ascontiguousarray(ids, dtype=np.int32)


def _choose_bounds(
    indeg: np.ndarray,
    num_edges: int,
    budget: int,
    vectors_in_ram: bool,
    num_pages: int,
    slices: int | None,
) -> np.ndarray:
    """Page ranges of the slices: S given, or the fewest whose largest slice fits."""
    if slices is not None:
        if slices < 1:
            raise ValueError(f"the number of slices must be at least 1, not {slices}")
        return kernels.balanced_boundaries(
            indeg, slices, SLICE_BYTES_PER_EDGE, SLICE_BYTES_PER_PAGE
        )
    vectors = num_pages * VECTOR_BYTES_PER_PAGE if vectors_in_ram else 0
    capacity = budget - vectors - 2 * (budget // 8)  # chunk temporaries take the rest
    total = num_edges * SLICE_BYTES_PER_EDGE + num_pages * SLICE_BYTES_PER_PAGE
    largest_page = int(indeg.max()) * SLICE_BYTES_PER_EDGE + SLICE_BYTES_PER_PAGE
    if capacity < largest_page:
        raise BudgetTooSmall(
            f"a budget of {budget} bytes leaves {max(capacity, 0)} for a slice, but one page "
            f"alone has {int(indeg.max())} in-links ({largest_page} bytes)"
        )
    count = max(1, math.ceil(total / capacity))
    while True:
        bounds = kernels.balanced_boundaries(
            indeg, count, SLICE_BYTES_PER_EDGE, SLICE_BYTES_PER_PAGE
        )
        if _largest_slice_bytes(indeg, bounds) <= capacity:
            return bounds
        count = math.ceil(count * 1.25) + 1


def _largest_slice_bytes(indeg: np.ndarray, bounds: np.ndarray) -> int:
    largest = 0
    for lo, hi in itertools.pairwise(bounds):
        size = int(indeg[lo:hi].sum()) * SLICE_BYTES_PER_EDGE + int(hi - lo) * SLICE_BYTES_PER_PAGE
        largest = max(largest, size)
    return largest


def _write_slices(
    edges: ArrayEdges, indeg: np.ndarray, bounds: np.ndarray, directory: Path, chunk: int
) -> list[int]:
    """Partition the edges into per-slice files, then counting-sort each into CSC form."""
    n_slices = len(bounds) - 1
    for first in range(0, n_slices, _OPEN_FILES):
        group = range(first, min(first + _OPEN_FILES, n_slices))
        with contextlib.ExitStack() as stack:
            parts = [stack.enter_context(open(_part(directory, k), "wb")) for k in group]
            for src, dst in edges.chunks(chunk):
                src, dst = _as_ids(src), _as_ids(dst)
                owner = np.searchsorted(bounds, dst, side="right") - 1
                keep = (owner >= group.start) & (owner < group.stop)
                order = np.argsort(owner[keep], kind="stable")
                pair = np.empty((len(order), 2), dtype=np.int32)
                pair[:, 0] = src[keep][order]
                pair[:, 1] = dst[keep][order]
                cuts = np.searchsorted(owner[keep][order], np.arange(group.start, group.stop + 1))
                for k in group:
                    pair[cuts[k - group.start] : cuts[k - group.start + 1]].tofile(
                        parts[k - group.start]
                    )
    slice_edges = []
    for k in range(n_slices):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        indptr = np.zeros(hi - lo + 1, dtype=np.int64)
        np.cumsum(indeg[lo:hi], out=indptr[1:])
        sources = np.empty(int(indptr[-1]), dtype=np.int32)
        cursor = indptr[:-1].copy()
        part = _part(directory, k)
        with open(part, "rb") as stream:
            while True:
                block = np.fromfile(stream, dtype=np.int32, count=2 * chunk)
                if not block.size:
                    break
                pairs = block.reshape(-1, 2)
                kernels.scatter_into_slice(
                    np.ascontiguousarray(pairs[:, 0]),
                    np.ascontiguousarray(pairs[:, 1]),
                    lo,
                    cursor,
                    sources,
                )
        part.unlink()
        indptr.tofile(directory / f"slice-{k:05d}.indptr")
        sources.tofile(directory / f"slice-{k:05d}.src")
        slice_edges.append(len(sources))
    return slice_edges


def _part(directory: Path, index: int) -> Path:
    return directory / f"slice-{index:05d}.part"


def _read_into(path: Path, buffer: np.ndarray) -> None:
    with open(path, "rb") as stream:
        if stream.readinto(memoryview(buffer).cast("B")) != buffer.nbytes:
            raise InvalidGraph(f"{path} is truncated")
