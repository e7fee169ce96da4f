"""Sliced direct and inverse PageRank against dense solves, networkx, and their own bounds."""

from __future__ import annotations

import doctest
import importlib
import threading

import networkx as nx
import numpy as np
import pytest

from ranking import (
    L1Bound,
    MaxSweeps,
    NoErrorBound,
    NotConverged,
    RankingCancelled,
    RankResult,
    RelativeChange,
)
from ranking.pagerank import (
    CombinedScan,
    DirectPageRank,
    InversePageRank,
    PowerIterationPageRank,
    SlicedGraph,
    importance_and_interest,
    importance_teleport,
    interest,
    pagerank,
    xml_teleport,
)
from tests.ranking_graphs import (
    dense_inverse,
    dense_pagerank,
    dense_renormalised,
    link_matrix,
    literal_inverse,
    random_graph,
    sparse_random_graph,
)

N = 300


@pytest.fixture(scope="module")
def edges():
    return random_graph(N, 6, dangling=0.2, seed=1)


@pytest.fixture(scope="module")
def graph(edges, tmp_path_factory):
    src, dst = edges
    return SlicedGraph.from_arrays(src, dst, tmp_path_factory.mktemp("g"), num_pages=N, slices=4)


@pytest.fixture(scope="module")
def is_xml():
    return np.random.default_rng(7).random(N) < 0.3


def l1(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).sum())


def test_direct_matches_the_dense_solve_within_tol(graph, edges):
    result = pagerank(graph, tol=1e-10)
    exact = dense_pagerank(*edges, N)
    assert result.converged and result.figure <= 1e-10
    assert l1(result.values, exact) <= 1e-10
    assert abs(result.values.sum() - 1) <= 1e-10


def test_the_gauss_seidel_bound_holds_at_every_sweep(graph, edges):
    exact = dense_pagerank(*edges, N)
    ranking = DirectPageRank(graph)
    ranking.init()
    for _ in range(30):
        ranking.step()
        assert l1(ranking.vector(), exact) <= ranking.norm_delta() * (1 + 1e-9) + 1e-15


def test_direct_matches_networkx(graph, edges):
    src, dst = edges
    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(N))
    digraph.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
    # networkx stops when ‖Δ‖₁ < N·tol: its own error is then below c/(1−c)·N·tol ≈ 2e-10.
    reference = nx.pagerank(digraph, alpha=0.85, tol=1e-13, max_iter=1000)
    ours = pagerank(graph, tol=1e-11).values
    assert l1(ours, [reference[i] for i in range(N)]) <= 1e-9


def test_personalization_also_receives_the_dangling_rank(graph, edges):
    weights = np.random.default_rng(3).random(N) * (np.arange(N) % 3 == 0)
    result = pagerank(graph, personalization=weights, tol=1e-10)
    assert l1(result.values, dense_pagerank(*edges, N, personalization=weights)) <= 1e-10
    assert result.details["personalization"] == "given"


def test_personalization_is_checked(graph):
    with pytest.raises(ValueError, match="zero everywhere"):
        pagerank(graph, personalization=np.zeros(N))
    with pytest.raises(ValueError, match="non-negative"):
        pagerank(graph, personalization=-np.ones(N))
    with pytest.raises(ValueError, match="values for 300 pages"):
        pagerank(graph, personalization=np.ones(3))


def test_a_graph_of_dangling_pages_ranks_uniformly(tmp_path):
    empty = np.array([], dtype=np.int32)
    graph = SlicedGraph.from_arrays(empty, empty, tmp_path, num_pages=5)
    assert np.allclose(pagerank(graph).values, 0.2)


def test_a_chain_into_a_dangling_page_matches_the_dense_solve(tmp_path):
    src, dst = np.arange(9), np.arange(1, 10)
    result = pagerank(SlicedGraph.from_arrays(src, dst, tmp_path, slices=3), tol=1e-12)
    assert l1(result.values, dense_pagerank(src, dst, 10)) <= 1e-12


def test_renormalised_direct_matches_the_dense_fixed_point_of_eq_6_7(graph, edges):
    result = pagerank(graph, renormalise=True, tol=1e-13, max_sweeps=2000)
    assert result.figure_name == "relative_l1_change"
    assert l1(result.values, dense_renormalised(*edges, N)) <= 1e-9


def test_renormalised_direct_is_pagerank_with_the_larger_damping(tmp_path):
    src, dst = random_graph(N, 6, dangling=0.05, seed=4)
    graph = SlicedGraph.from_arrays(src, dst, tmp_path, num_pages=N, slices=3)
    result = pagerank(graph, renormalise=True, tol=1e-13, max_sweeps=2000)
    delta = result.values[np.bincount(src, minlength=N) == 0].sum()
    larger = 0.85 / (1 - 0.85 * delta)
    assert 0.85 < larger < 1
    assert result.details["effective_damping"] == pytest.approx(larger, rel=1e-9)
    assert l1(result.values, dense_pagerank(src, dst, N, damping=larger)) <= 1e-9


def test_inverse_matches_the_dense_perron_solve(graph, edges, is_xml):
    result = interest(graph, is_xml, tol=1e-12)
    exact, r = dense_inverse(*edges, N, xml_teleport(is_xml))
    assert result.converged and result.figure_name == "l1_error_bound"
    assert l1(result.values, exact) <= result.figure <= 1e-12
    assert result.details["normalisation_r"] == pytest.approx(r, rel=1e-9)
    assert abs(result.values.sum() - 1) <= 1e-12


def test_inverse_variant_pr2_uses_the_importance_of_xml(graph, edges, is_xml):
    importance = pagerank(graph, tol=1e-12).values
    result = interest(graph, is_xml, importance=importance, tol=1e-12)
    exact, _ = dense_inverse(*edges, N, importance_teleport(importance, is_xml))
    assert result.details["variant"] == "PR''"
    assert l1(result.values, exact) <= 1e-9


HARD_INVERSE_GRAPHS = {
    "XML page linking only to itself": ([0, 1, 2], [0, 0, 1], [1, 0, 0]),
    "XML page in a 2-cycle": ([0, 1, 2, 2], [1, 0, 0, 3], [1, 0, 0, 0]),
    "XML self-link among dangling children": ([0] * 6, [0, 1, 2, 3, 4, 5], [1, 0, 0, 0, 0, 0]),
    # No parent for the XML page: r·c > 1, so HTML self-loop pages cannot be solved exactly.
    "orphan XML, HTML self-loops": ([1, 2, 3, 3, 4], [1, 0, 3, 0, 4], [1, 0, 0, 0, 0]),
}


@pytest.mark.parametrize("case", sorted(HARD_INVERSE_GRAPHS))
def test_gauss_seidel_interest_is_the_fixed_point_of_eq_7_on_hard_graphs(tmp_path, case):
    src, dst, xml = map(np.array, HARD_INVERSE_GRAPHS[case])
    graph = SlicedGraph.from_arrays(src, dst, tmp_path, num_pages=xml.size)
    result = interest(graph, xml.astype(bool), tol=1e-14, max_sweeps=3000)
    expected, _ = literal_inverse(src, dst, xml.size, xml.astype(float))
    assert l1(result.values, expected) <= 1e-12
    y = 0.85 * (link_matrix(src, dst, xml.size).T @ expected) + 0.15 * xml / xml.sum()
    assert result.details["normalisation_r"] == pytest.approx(1 / y.sum(), rel=1e-12)


def test_the_interest_converges_on_sparse_graphs_falling_back_to_jacobi_when_needed(tmp_path):
    fell_back = 0
    for seed in range(60):
        src, dst, is_xml = sparse_random_graph(seed)
        graph = SlicedGraph.from_arrays(src, dst, tmp_path / str(seed), num_pages=is_xml.size)
        result = interest(graph, is_xml, tol=1e-13, max_sweeps=5000)
        expected, _ = literal_inverse(src, dst, is_xml.size, is_xml.astype(float))
        assert l1(result.values, expected) <= 1e-10, seed
        fell_back += result.details["jacobi_from_sweep"] is not None
    assert 0 < fell_back < 60


def test_gauss_seidel_interest_needs_fewer_sweeps_than_the_literal_jacobi(graph, edges, is_xml):
    gauss_seidel = interest(graph, is_xml, tol=1e-12)
    assert gauss_seidel.details["jacobi_from_sweep"] is None
    _, jacobi_sweeps = literal_inverse(*edges, N, is_xml.astype(float), tol=1e-12)
    assert gauss_seidel.sweeps < 0.75 * jacobi_sweeps


def test_extrapolation_keeps_the_fixed_points_in_fewer_sweeps(edges, tmp_path):
    # two closed 2-cycles (300 ↔ 301, 302 ↔ 303) with XML: the slow modes it removes
    src = np.concatenate([edges[0], [300, 301, 302, 303]])
    dst = np.concatenate([edges[1], [301, 300, 303, 302]])
    n = N + 4
    graph = SlicedGraph.from_arrays(src, dst, tmp_path, num_pages=n, slices=4)
    is_xml = np.random.default_rng(7).random(n) < 0.3
    is_xml[[300, 303]] = True
    runs = {}
    for extrapolate in (True, False):
        direct = DirectPageRank(graph, extrapolate=extrapolate)
        inverse = InversePageRank(graph, xml_teleport(is_xml), extrapolate=extrapolate)
        runs[extrapolate] = (
            direct.run(L1Bound(1e-12) | MaxSweeps(1000)),
            inverse.run(RelativeChange(1e-13) | MaxSweeps(1000)),
        )
    (importance, interest_), (plain_importance, plain_interest) = runs[True], runs[False]
    assert l1(importance.values, dense_pagerank(src, dst, n)) <= 1e-12
    assert l1(interest_.values, dense_inverse(src, dst, n, is_xml.astype(float))[0]) <= 1e-11
    assert importance.details["extrapolations"] > 0 < interest_.details["extrapolations"]
    assert importance.sweeps < plain_importance.sweeps
    assert interest_.sweeps < plain_interest.sweeps
    assert plain_importance.details["extrapolations"] == 0


def test_an_html_page_leading_to_xml_is_more_interesting(tmp_path):
    # 0 → 2 (XML), 1 → 3 (HTML, dead end); 0 should beat 1.
    graph = SlicedGraph.from_arrays(np.array([0, 1]), np.array([2, 3]), tmp_path)
    values = interest(graph, np.array([False, False, True, False])).values
    assert values[0] > values[1] == 0.0 and values[3] == 0.0


@pytest.mark.parametrize("extrapolate", [True, False])
def test_the_interest_bound_holds_at_every_sweep(graph, edges, is_xml, extrapolate):
    exact, _ = dense_inverse(*edges, N, xml_teleport(is_xml))
    ranking = InversePageRank(graph, xml_teleport(is_xml), extrapolate=extrapolate)
    ranking.init()
    bounded = 0
    for _ in range(60):
        ranking.step()
        try:
            bound = ranking.norm_delta()
        except NoErrorBound:  # not yet: the weights' damping s is still ≥ 1 − ε
            bound = np.inf
        assert l1(ranking.vector(), exact) <= bound + 1e-14  # (the dense solve's rounding)
        bounded += np.isfinite(bound)
    assert bounded > 40 and bound < 1e-13


def test_the_interest_bound_holds_after_the_fall_back_to_jacobi(tmp_path):
    for seed in range(60):
        src, dst, is_xml = sparse_random_graph(seed)
        graph = SlicedGraph.from_arrays(src, dst, tmp_path / str(seed), num_pages=is_xml.size)
        result = interest(graph, is_xml, tol=1e-9, max_sweeps=5000)
        if (
            result.details["jacobi_from_sweep"] is not None
            and result.figure_name == "l1_error_bound"
        ):
            expected, _ = literal_inverse(src, dst, is_xml.size, is_xml.astype(float))
            assert l1(result.values, expected) <= result.figure <= 1e-9
            return
    pytest.fail("no graph fell back to Jacobi with a bound")


def test_without_a_bound_the_interest_stops_on_its_relative_change(tmp_path):
    src, dst, xml = map(np.array, HARD_INVERSE_GRAPHS["orphan XML, HTML self-loops"])
    graph = SlicedGraph.from_arrays(src, dst, tmp_path, num_pages=xml.size)
    result = interest(graph, xml.astype(bool), tol=1e-12, max_sweeps=3000)
    assert result.converged and result.figure_name == "relative_l1_change"
    assert result.stopped_by == "BoundElseChange(1e-12)"
    ranking = InversePageRank(graph, xml_teleport(xml.astype(bool)))
    with pytest.raises(NoErrorBound):
        ranking.run(L1Bound(1e-12) | MaxSweeps(3000))


def test_combined_scan_gives_the_separate_vectors_in_fewer_scans(graph, is_xml):
    importance, inverse = importance_and_interest(graph, is_xml, tol=1e-11, max_sweeps=1000)
    alone_direct = pagerank(graph, tol=1e-11)
    alone_inverse = interest(graph, is_xml, tol=1e-11, max_sweeps=1000)
    assert np.array_equal(importance.values, alone_direct.values)
    assert np.array_equal(inverse.values, alone_inverse.values)
    assert (importance.sweeps, inverse.sweeps) == (alone_direct.sweeps, alone_inverse.sweeps)


def test_combined_scan_counts_one_scan_per_sweep_of_the_slowest(graph, is_xml):
    both = CombinedScan(
        [
            (DirectPageRank(graph), L1Bound(1e-10) | MaxSweeps(500)),
            (InversePageRank(graph, xml_teleport(is_xml)), RelativeChange(1e-10) | MaxSweeps(500)),
        ]
    )
    results = both.run()
    assert both.scans == max(r.sweeps for r in results)


def test_pr2_runs_direct_then_inverse(graph, edges, is_xml):
    importance, inverse = importance_and_interest(graph, is_xml, variant="PR''", tol=1e-12)
    exact, _ = dense_inverse(*edges, N, importance_teleport(importance.values, is_xml))
    assert l1(inverse.values, exact) <= 1e-9


@pytest.fixture(scope="module")
def one_slice(edges, is_xml, tmp_path_factory):
    graph = SlicedGraph.from_arrays(*edges, tmp_path_factory.mktemp("s1"), num_pages=N, slices=1)
    importance, inverse = importance_and_interest(graph, is_xml, tol=1e-11)
    assert l1(importance.values, dense_pagerank(*edges, N)) <= 1e-11
    assert l1(inverse.values, dense_inverse(*edges, N, xml_teleport(is_xml))[0]) <= 1e-8
    return importance, inverse


@pytest.mark.parametrize("slices", [2, 3, 7, 16, 64])
def test_the_number_of_slices_does_not_change_the_vectors(
    edges, is_xml, one_slice, tmp_path, slices
):
    graph = SlicedGraph.from_arrays(*edges, tmp_path, num_pages=N, slices=slices)
    assert graph.n_slices == slices
    importance, inverse = importance_and_interest(graph, is_xml, tol=1e-11)
    # The same pages in the same order: only the summation order of the dangling mass moves.
    assert np.allclose(importance.values, one_slice[0].values, rtol=1e-12, atol=0)
    assert np.allclose(inverse.values, one_slice[1].values, rtol=1e-12, atol=0)
    assert (importance.sweeps, inverse.sweeps) == (one_slice[0].sweeps, one_slice[1].sweeps)


def test_block_jacobi_inside_slices_reaches_the_same_vector(graph, edges):
    ranking = DirectPageRank(graph, in_slice="jacobi")
    result = ranking.run(L1Bound(1e-10) | MaxSweeps(500))
    assert l1(result.values, dense_pagerank(*edges, N)) <= 1e-10
    assert result.details["in_slice"] == "jacobi"


def test_power_iteration_agrees(edges):
    result = PowerIterationPageRank(*edges, num_pages=N).run(L1Bound(1e-10))
    assert l1(result.values, dense_pagerank(*edges, N)) <= 1e-10


def test_the_guard_raises_not_converged_with_the_partial_result(graph):
    with pytest.raises(NotConverged) as caught:
        pagerank(graph, tol=1e-15, max_sweeps=2)
    assert caught.value.result.sweeps == 2 and not caught.value.result.converged
    assert pagerank(graph, tol=1e-15, max_sweeps=2, strict=False).stopped_by == "MaxSweeps(2)"


def test_results_record_how_they_were_made(graph, tmp_path):
    result = pagerank(graph, damping=0.8, tol=1e-9)
    assert (result.damping, result.snapshot) == (0.8, graph.snapshot)
    assert result.stopped_by == "L1Bound(1e-09)" and result.sweeps > 1
    result.save(tmp_path)
    again = RankResult.load(tmp_path, "importance")
    assert again.provenance() == result.provenance()
    assert np.array_equal(again.values, result.values)


def test_a_run_can_be_cancelled_between_slices(graph):
    cancel = threading.Event()

    class CancelAfterTwoSlices:
        def __init__(self):
            self.seen = []

        def slice_done(self, sweep, index, n_slices, figures):
            self.seen.append((sweep, index))
            if len(self.seen) == 2:
                cancel.set()

    monitor = CancelAfterTwoSlices()
    with pytest.raises(RankingCancelled, match="sweep 1, slice 2"):
        pagerank(graph, monitor=monitor, cancel=cancel)
    assert monitor.seen == [(1, 0), (1, 1)]


@pytest.mark.parametrize(
    ("rule", "error"), [(lambda: MaxSweeps(0), "at least 1"), (lambda: L1Bound(0), "positive")]
)
def test_stop_rules_refuse_meaningless_limits(rule, error):
    with pytest.raises(ValueError, match=error):
        rule()


def test_damping_outside_the_open_interval_is_refused(graph):
    with pytest.raises(ValueError, match="damping"):
        pagerank(graph, damping=1.0)


@pytest.mark.parametrize(
    "module",
    ["compute", "direct", "extrapolation", "inverse", "memory", "power", "sliced", "slices"],
)
def test_the_docstring_examples_run(module):
    failures, _ = doctest.testmod(importlib.import_module(f"ranking.pagerank.{module}"))
    assert failures == 0


def test_the_interest_bound_is_given_up_when_its_weights_are_never_certified():
    from ranking.pagerank.inverse_bound import PATIENCE, BoundState

    state = BoundState(0.85)
    state.observe(1.1, 1.0)  # s = 0.935: the weights' sweeps converge
    assert state.restart_weights() and not state.restart_weights()
    for _ in range(PATIENCE - 1):
        state.certify(-1.0)  # min h ≤ 0: no certificate
    assert state.checked(np.inf) == np.inf  # not yet: the stop rule waits
    state.certify(-1.0)
    with pytest.raises(NoErrorBound):  # then the interest stops on its relative change
        state.checked(np.inf)
    state.certify(0.5)
    assert state.checked(1e-9) == 1e-9
