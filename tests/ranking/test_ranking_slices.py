"""Building the sliced link matrix: inputs, validation, the memory budget and its bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ranking import BudgetTooSmall, InvalidGraph
from ranking.pagerank import SlicedGraph, pagerank, parse_size
from ranking.pagerank.slices import SLICE_BYTES_PER_EDGE, SLICE_BYTES_PER_PAGE
from tests.ranking_graphs import dense_pagerank, random_graph


@pytest.fixture(scope="module")
def edges():
    return random_graph(500, 5, seed=2)


def test_arrays_npy_files_and_chunks_build_the_same_graph(edges, tmp_path):
    src, dst = edges
    np.save(tmp_path / "src.npy", src)
    np.save(tmp_path / "dst.npy", dst)
    chunks = ((src[i : i + 100], dst[i : i + 100]) for i in range(0, len(src), 100))
    graphs = [
        SlicedGraph.from_arrays(src, dst, tmp_path / "a", slices=3),
        SlicedGraph.from_npy(tmp_path / "src.npy", tmp_path / "dst.npy", tmp_path / "b", slices=3),
        SlicedGraph.from_chunks(chunks, tmp_path / "c", slices=3),
    ]
    assert len({g.snapshot for g in graphs}) == 1
    vectors = [pagerank(g, tol=1e-12).values for g in graphs]
    assert all(np.array_equal(vectors[0], v) for v in vectors[1:])
    assert not (tmp_path / "c" / "edges.spill").exists()


def test_the_snapshot_changes_with_the_edges(edges, tmp_path):
    src, dst = edges
    changed = dst.copy()
    changed[0] = (changed[0] + 1) % 500
    first = SlicedGraph.from_arrays(src, dst, tmp_path / "a")
    second = SlicedGraph.from_arrays(src, changed, tmp_path / "b")
    assert first.snapshot != second.snapshot


def test_reopening_keeps_the_slices(edges, tmp_path):
    built = SlicedGraph.from_arrays(*edges, tmp_path, slices=4)
    reopened = SlicedGraph.open(tmp_path)
    assert (reopened.n_slices, reopened.snapshot) == (4, built.snapshot)
    assert np.array_equal(pagerank(reopened).values, pagerank(built).values)


def test_pages_without_links_count_when_num_pages_says_so(tmp_path):
    graph = SlicedGraph.from_arrays(np.array([0]), np.array([1]), tmp_path, num_pages=4)
    values = pagerank(graph, tol=1e-12).values
    assert len(values) == 4
    assert np.abs(values - dense_pagerank(np.array([0]), np.array([1]), 4)).sum() < 1e-12


@pytest.mark.parametrize(
    ("src", "dst", "num_pages", "message"),
    [
        ([0, -1], [1, 0], None, "negative"),
        ([0, 5], [1, 0], 3, "out of range"),
        ([0.5], [1.0], None, "integers"),
        ([0, 1], [1], None, "one length"),
        ([2**31], [0], None, "int32"),
    ],
)
def test_bad_edges_are_refused_by_name(tmp_path, src, dst, num_pages, message):
    with pytest.raises(InvalidGraph, match=message):
        SlicedGraph.from_arrays(np.array(src), np.array(dst), tmp_path, num_pages=num_pages)


def test_unreadable_edge_files_and_folders_are_refused(tmp_path):
    (tmp_path / "bad.npy").write_text("not numpy")
    with pytest.raises(InvalidGraph, match="cannot read"):
        SlicedGraph.from_npy(tmp_path / "bad.npy", tmp_path / "bad.npy", tmp_path / "g")
    with pytest.raises(InvalidGraph, match="no sliced graph"):
        SlicedGraph.open(tmp_path / "nothing")


def test_a_page_whose_in_links_exceed_the_budget_is_named(tmp_path):
    src = np.arange(1, 20_001)
    dst = np.zeros(20_000, dtype=np.int64)
    with pytest.raises(BudgetTooSmall, match="20000 in-links"):
        SlicedGraph.from_arrays(src, dst, tmp_path, memory="32KB")


def test_a_small_budget_means_more_slices_each_within_it(edges, tmp_path):
    src, dst = edges
    budget = parse_size("12KB")
    graph = SlicedGraph.from_arrays(src, dst, tmp_path, memory=budget)
    assert graph.n_slices > 1 and not graph.vectors_in_ram
    rows = np.diff(graph.bounds)
    sizes = np.array(graph.slice_edges) * SLICE_BYTES_PER_EDGE + rows * SLICE_BYTES_PER_PAGE
    assert sizes.max() <= budget
    assert np.abs(pagerank(graph, tol=1e-12).values - dense_pagerank(src, dst, 500)).sum() < 1e-12
    assert list(tmp_path.glob("*.vec.npy"))


def test_results_of_earlier_runs_survive_a_new_run_on_mapped_vectors(edges, tmp_path):
    graph = SlicedGraph.from_arrays(*edges, tmp_path, memory="12KB")
    first = pagerank(graph, damping=0.5).values
    kept = np.array(first)
    pagerank(graph, damping=0.9)
    assert np.array_equal(first, kept)


@pytest.mark.parametrize(
    ("text", "size"), [("256MB", 256 << 20), ("1.5g", 3 << 29), ("64k", 65536), ("100", 100)]
)
def test_memory_sizes_parse(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "-3MB", "0"])
def test_bad_memory_sizes_are_refused(text):
    with pytest.raises(ValueError, match="memory size"):
        parse_size(text)


MEMORY_PROBE = textwrap.dedent(
    """
    import json, sys, threading, time
    from pathlib import Path
    import numpy as np
    from ranking.pagerank import SlicedGraph, anon_rss_bytes, importance_and_interest

    work, budget = Path(sys.argv[1]), sys.argv[2]
    # compile every kernel the measured run uses before the baseline: a graph that takes
    # enough sweeps for the extrapolation too (numba's compilation is not the ranking's memory)
    # and with its vectors on disk, as the measured run's
    rng = np.random.default_rng(1)
    edges = rng.integers(0, 20_000, (2, 200_000)).astype(np.int32)
    warm = SlicedGraph.from_arrays(edges[0], edges[1], work / "warm", memory="256k")
    importance_and_interest(warm, rng.random(20_000) < 0.2, tol=1e-12, max_sweeps=500)
    assert not warm.vectors_in_ram
    is_xml = np.load(work / "xml.npy", mmap_mode="r")
    baseline = anon_rss_bytes()[0]
    peak, done = [baseline], threading.Event()

    def sample():
        while not done.is_set():
            peak.append(anon_rss_bytes()[0])
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    graph = SlicedGraph.from_npy(work / "src.npy", work / "dst.npy", work / "g", memory=budget)
    importance_and_interest(graph, is_xml, tol=1e-6, max_sweeps=500)
    done.set()
    sampler.join()
    print(json.dumps({"slices": graph.n_slices, "in_ram": graph.vectors_in_ram,
                      "growth": max(peak) - baseline}))
    """
)


@pytest.mark.slow
def test_the_anonymous_memory_stays_within_the_budget_on_a_larger_graph(tmp_path):
    rng = np.random.default_rng(5)
    pages, links = 300_000, 3_000_000  # 12 MB of sources, 11 MB of vectors
    np.save(tmp_path / "src.npy", rng.integers(0, pages, links, dtype=np.int32))
    np.save(tmp_path / "dst.npy", rng.integers(0, pages, links, dtype=np.int32))
    np.save(tmp_path / "xml.npy", rng.random(pages) < 0.2)
    budget = 4 << 20
    # an empty kernel cache, as on a fresh checkout: the warm-up must compile all it needs
    cache = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(tmp_path), str(budget)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **cache},
        timeout=300,
    )
    figures = json.loads(out.stdout)
    assert figures["slices"] > 4 and not figures["in_ram"]
    assert figures["growth"] <= budget + (8 << 20), figures


def test_streamed_pages_without_links_rank_by_the_teleport_vector(tmp_path):
    graph = SlicedGraph.from_chunks(iter([]), tmp_path / "g", num_pages=4)
    assert graph.num_edges == 0
    assert pagerank(graph).values == pytest.approx(np.full(4, 0.25))
