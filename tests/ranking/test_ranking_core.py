"""The stepping core and what stands on it: one loop, one bound, one error hierarchy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from ranking import (
    InvalidGraph,
    L1Bound,
    MaxSweeps,
    NotConverged,
    RankingError,
    contraction_bound,
)
from ranking.liverank import LinkGraph, LivePageRank, LiveRankError, personalised_pagerank
from ranking.opic import OPICError
from ranking.pagerank import (
    DirectPageRank,
    InversePageRank,
    PowerIteration,
    SlicedGraph,
    direct_slice_sweep,
    inverse_slice_sweep,
    xml_teleport,
)
from ranking.pagerank.kernels import mark_self_links


def test_every_subject_fails_under_one_hierarchy():
    assert issubclass(LiveRankError, RankingError)
    assert issubclass(OPICError, RankingError)
    assert issubclass(InvalidGraph, ValueError)  # bad input, as LiveRank's callers expect


def test_the_contraction_bound_holds_for_the_power_iteration():
    rng = np.random.default_rng(3)
    n = 40
    dense = (rng.random((n, n)) < 0.1).astype(float)
    dense[:, :5] = 0.0  # five pages without links
    outdeg = dense.sum(axis=0)
    m = np.divide(dense, outdeg, out=np.zeros_like(dense), where=outdeg > 0)
    teleport = rng.random(n)
    e = teleport / teleport.sum()
    c = 0.85
    dangling = outdeg == 0
    exact = np.linalg.solve(np.eye(n) - c * (m + np.outer(e, dangling)), (1 - c) * e)
    ranking = PowerIteration(sp.csr_matrix(m), teleport, c, dangling=dangling)
    ranking.init()
    for _ in range(30):
        ranking.step()
        error = np.abs(ranking.vector() - exact).sum()
        assert error <= ranking.norm_delta() + 1e-15
        assert ranking.norm_delta() == contraction_bound(c, ranking.last_delta)


def test_a_strict_run_that_runs_out_of_sweeps_raises_with_its_result():
    graph = LinkGraph.from_edges([0, 1, 2], [1, 2, 0])
    with pytest.raises(NotConverged) as caught:
        LivePageRank(graph, np.array([1.0, 0.0, 0.0])).run(
            L1Bound(1e-12) | MaxSweeps(2), strict=True
        )
    assert caught.value.result.sweeps == 2 and not caught.value.result.converged


def test_liverank_pagerank_leaks_the_rank_of_pages_without_links():
    graph = LinkGraph.from_edges([0, 1], [1, 2], n_pages=3)  # page 2 has no link
    values = personalised_pagerank(graph, tolerance=1e-13)
    a = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float)
    exact = np.linalg.solve(np.eye(3) - 0.85 * a.T, np.full(3, 0.15 / 3))
    assert np.abs(values - exact).sum() < 1e-12
    assert values.sum() < 1.0


@pytest.fixture
def sliced(tmp_path):
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 300, (2, 2_000))
    return SlicedGraph.from_arrays(src, dst, tmp_path / "g", slices=3)


def test_direct_slice_sweep_over_the_slices_is_a_sweep_of_the_ranking(sliced):
    """What a worker runs, slice after slice, gives the ranking's own sweeps."""
    ranking = DirectPageRank(sliced, extrapolate=False)
    ranking.init()
    scaled = ranking.scaled.copy()
    dangling = ranking.dangling
    for _ in range(5):
        ranking.step()
        for view in sliced.slices():
            dangling += direct_slice_sweep(
                view, scaled, sliced.outdeg, ranking.teleport, 0.85, dangling
            ).dangling_change
    assert np.array_equal(scaled, ranking.scaled)


def test_inverse_slice_sweep_without_weights_moves_the_interest_only(sliced):
    n = sliced.num_pages
    interest, sums, flags = np.zeros(n), np.zeros(n), np.zeros(n, dtype=np.uint8)
    teleport = xml_teleport(np.arange(n) % 5 == 0)
    moved, lowest = 0.0, None
    for view in sliced.slices():
        mark_self_links(view.indptr, view.sources, view.lo, flags)
    for view in sliced.slices():
        step, lowest = inverse_slice_sweep(
            view, interest, sums, sliced.outdeg, flags, teleport, 0.85, 1.0
        )
        moved += step
    assert lowest == np.inf
    assert moved == pytest.approx(interest.sum())  # from 0, every change is the new value
    reference = InversePageRank(sliced, teleport, extrapolate=False)
    reference.init()
    reference.step()
    # the ranking normalises after its sweep; the pass itself is the same
    assert np.allclose(interest / interest.sum(), reference.vector())
