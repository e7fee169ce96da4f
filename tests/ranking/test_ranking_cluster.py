"""The sliced ranking on a Dask cluster (issue 21): same results, same bounds, faults survived.

Every test runs on a ``LocalCluster`` of two worker processes bound to 127.0.0.1 with the
dashboard off, started by a fixture; every run has deadlines (a timeout per call to the
workers, a max-sweeps guard, and a wall-clock limit on the whole run).
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest

pytest.importorskip("distributed")

from ranking import BudgetTooSmall, InvalidGraph, RankingError
from ranking.cluster import cluster_rank, dask_client
from ranking.cluster.actors import SliceCluster
from ranking.cluster.blocks import assign, load_block, needs, read_info
from ranking.cluster.rankings import ClusterPageRank
from ranking.pagerank import SlicedGraph, importance_and_interest, pagerank
from tests.ranking_graphs import random_graph

TOL = 1e-9
RUN_DEADLINE_S = 240
"""Wall-clock limit of one distributed run: seconds when idle, much more under load."""


def _within(function, *args, **kwargs):
    """``function(*args, **kwargs)``, failing the test if it has not returned in time.

    It runs in a daemon thread: a run that truly hangs must not hold the test, nor the
    interpreter's exit, after the failure (a pool's thread is joined on both)."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the test's thread below
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(RUN_DEADLINE_S)
    if thread.is_alive():
        pytest.fail(f"the distributed run took more than {RUN_DEADLINE_S} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.fixture(scope="module")
def client():
    with dask_client(workers=2, memory_per_worker="600MB", dashboard=False) as client:
        yield client


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    src, dst = random_graph(3000, 8, seed=3)
    directory = tmp_path_factory.mktemp("cluster") / "graph"
    sliced = SlicedGraph.from_arrays(src, dst, directory, num_pages=3000, slices=5)
    is_xml = np.random.default_rng(4).random(3000) < 0.2
    return sliced, is_xml


@pytest.fixture(scope="module")
def single(graph):
    sliced, is_xml = graph
    return importance_and_interest(sliced, is_xml, tol=TOL / 10)


def _rank(client, graph, **options):
    sliced, is_xml = graph
    options.setdefault("call_timeout", 120)
    return _within(cluster_rank, client, str(sliced.directory), is_xml, tol=TOL, **options)


@pytest.mark.parametrize("mode", ["sync", "chaotic"])
def test_both_modes_reach_the_single_machine_vectors_within_the_bound(client, graph, single, mode):
    importance, interest = _rank(client, graph, mode=mode)
    for result, reference in zip((importance, interest), single, strict=True):
        assert result.converged and result.figure_name == "l1_error_bound"
        assert result.figure <= TOL
        assert np.abs(result.values - reference.values).sum() <= 2 * TOL
        assert result.details["workers"] == 2 and result.details["workers_lost"] == 0
    # only the values the peers read travel, never the matrix: at most the vector's size a
    # sweep for the importance, two vectors' for the interest (its sums and its bound's weights)
    vector = graph[0].num_pages * 8 + 64
    assert 0 < importance.details["bytes_per_sweep"] <= vector
    assert 0 < interest.details["bytes_per_sweep"] <= 2 * vector
    named = "chaotic" if mode == "chaotic" else "synchronous"
    assert importance.details["mode"] == interest.details["mode"] == named
    if mode == "sync":  # waiting peer to peer, both workers stopped after the same sweep
        assert importance.details["local_sweeps"] == 2 * importance.sweeps
    assert importance.snapshot == graph[0].snapshot
    # where the time went, per worker: sweeping (wall and CPU), absorbing, sending, waiting
    seconds = interest.details["seconds"]
    assert set(seconds) == {"wall", "sweep", "sweep_cpu", "absorb", "send", "wait"}
    assert 0 < seconds["sweep"] + seconds["send"] <= seconds["wall"]


def test_the_chaotic_interest_sweeps_without_a_barrier_and_checks_on_one_vector(
    client, graph, single
):
    """The interest's Gauss-Seidel runs do the work (each worker sweeps about as many times
    as the run counts; the checks are Jacobi sweeps, not local ones), the checks stop it on
    the proven bound, and the lagged normalisation reaches eq. 7's r of the single process."""
    _, chaotic = _rank(client, graph, mode="chaotic")
    _, synchronous = _rank(client, graph, mode="sync")
    assert chaotic.figure_name == "l1_error_bound" and chaotic.figure <= TOL
    for run in (chaotic, synchronous):
        assert run.sweeps < run.details["local_sweeps"] <= 2 * run.sweeps
        assert run.details["jacobi_from_sweep"] is None  # the runs kept pace
    assert np.abs(chaotic.values - single[1].values).sum() <= 2 * TOL
    assert abs(chaotic.details["normalisation_r"] - single[1].details["normalisation_r"]) < 1e-6


def test_chaotic_runs_that_do_not_keep_pace_give_way_to_jacobi_sweeps(
    client, graph, single, monkeypatch
):
    monkeypatch.setattr("ranking.cluster.interest.SLOWEST_RATE", 1e-9)  # no run keeps it
    monkeypatch.setattr("ranking.cluster.interest.PACE_FROM_RUN", 1)
    _, interest = _rank(client, graph, mode="chaotic")
    assert interest.details["jacobi_from_sweep"] is not None
    assert interest.converged and interest.figure <= TOL
    assert np.abs(interest.values - single[1].values).sum() <= 2 * TOL


def test_the_importance_weighted_interest_too(client, graph):
    sliced, is_xml = graph
    _, interest = _rank(client, graph, variant="PR''")
    reference = importance_and_interest(sliced, is_xml, variant="PR''", tol=TOL / 10)[1]
    assert interest.details["variant"] == "PR''"
    assert np.abs(interest.values - reference.values).sum() <= 2 * TOL


def test_importance_alone_without_xml_pages(client, graph):
    sliced, _ = graph
    importance, interest = _within(
        cluster_rank, client, str(sliced.directory), None, tol=TOL, call_timeout=120
    )
    assert interest is None
    assert np.abs(importance.values - pagerank(sliced, tol=TOL / 10).values).sum() <= 2 * TOL


def test_a_worker_budget_too_small_is_refused_before_starting(client, graph):
    with pytest.raises(BudgetTooSmall, match="budget"):
        _rank(client, graph, memory_per_worker=10_000)


def test_a_worker_whose_sweep_fails_ends_a_synchronous_run_with_its_error(client, graph):
    """Its peer, waiting for its values, does not hold the run forever: the error is told."""
    cluster = SliceCluster(
        client, str(graph[0].directory), budget=600 << 20, damping=0.85, call_timeout=60
    )
    try:  # only worker 0 gets a vector: worker 1's first sweep fails, worker 0 waits for it
        cluster.wait([cluster.actors[0].direct_init(None, None, True)], indices=[0])
        with pytest.raises(RankingError, match="swept before direct_init"):
            _within(ClusterPageRank(cluster, tol=TOL, max_sweeps=50).step)
    finally:
        cluster.close()


def test_a_guard_that_runs_out_raises_not_converged(client, graph):
    from ranking import NotConverged

    with pytest.raises(NotConverged):
        _rank(client, graph, max_sweeps=3)


def test_bad_arguments_get_a_sentence(client, graph):
    with pytest.raises(ValueError, match="mode"):
        _rank(client, graph, mode="fast")
    with pytest.raises(InvalidGraph, match="no sliced graph"):
        cluster_rank(client, str(graph[0].directory / "missing"), None)


def test_an_unreachable_scheduler_is_told(monkeypatch):
    monkeypatch.setattr("ranking.cluster.compute.CONNECT_TIMEOUT_S", 1)
    with (
        pytest.raises(RankingError, match="cannot reach the Dask scheduler"),
        dask_client("tcp://127.0.0.1:9"),
    ):
        pass


class _KillAt:
    """A monitor that SIGKILLs the process of one worker when a sweep of ``kind`` passes
    ``sweep``, or, with ``sweep=None``, when a sweep's bound reaches the tolerance: the
    stop rule then fires and the kill hits the gathering of the result."""

    def __init__(self, client, sweep: int | None, kind: str = "importance") -> None:
        self.pids = client.run(os.getpid)
        self.sweep = sweep
        self.kind = kind
        self.killed: int | None = None

    def sweep_done(self, kind: str, sweep: int, figure_name: str, figure: float) -> None:
        if self.sweep is None:
            due = figure_name == "l1_error_bound" and figure <= TOL
        else:
            due = sweep >= self.sweep
        if kind == self.kind and due and self.killed is None:
            self.killed = self.pids[max(self.pids)]
            os.kill(self.killed, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "kind", "sweep"),
    [
        ("sync", "importance", 4),
        ("chaotic", "importance", 4),
        ("chaotic", "interest", 4),
        ("sync", "importance", None),
        ("chaotic", "interest", None),
    ],
)
def test_a_worker_killed_mid_run_costs_its_slice_only(graph, single, mode, kind, sweep):
    with dask_client(workers=2, memory_per_worker="600MB", dashboard=False) as own:
        killer = _KillAt(own, sweep, kind)
        importance, interest = _rank(own, graph, mode=mode, monitor=killer, call_timeout=60)
    assert killer.killed is not None
    hit = importance if kind == "importance" else interest
    assert hit.details["workers_lost"] == 1
    assert hit.converged and hit.figure <= TOL
    assert np.abs(importance.values - single[0].values).sum() <= 2 * TOL
    assert np.abs(interest.values - single[1].values).sum() <= 2 * TOL


def test_slices_are_grouped_into_consecutive_blocks_and_exchange_plans(graph):
    sliced, _ = graph
    assert assign(5, 2) == [[0, 1], [2, 3, 4]]
    assert assign(1, 4) == [[0]]
    info = read_info(str(sliced.directory))
    ranges = [(0, int(info.bounds[2])), (int(info.bounds[2]), 3000)]
    block = load_block(info, [0, 1])
    wanted = needs(block, ranges, 0)
    sources = np.concatenate([view.sources for view in block])
    assert set(wanted) == {1}
    assert np.array_equal(wanted[1], np.unique(sources[sources >= ranges[1][0]]))


def test_a_truncated_slice_file_is_refused(tmp_path):
    src, dst = random_graph(200, 5, seed=1)
    sliced = SlicedGraph.from_arrays(src, dst, tmp_path / "g", slices=2)
    info = read_info(f"file://{sliced.directory}")  # any fsspec URL
    (sliced.directory / "slice-00001.src").write_bytes(b"\0" * 8)
    assert len(load_block(info, [0])[0].sources) == sliced.slice_edges[0]
    with pytest.raises(InvalidGraph, match="truncated"):
        load_block(info, [1])


def test_rank_compute_on_two_local_workers_stores_the_same_scores(tmp_path):
    from click.testing import CliRunner

    from metadata import Metadata
    from tests.ranking.test_ranking_cli import make_repo
    from xyleme.cli import cli

    directory = tmp_path / "repo"
    make_repo(directory)
    scores = []
    for extra in ([], ["--workers", "2", "--mode", "chaotic"]):
        args = ["--repo", str(directory), "rank", "compute", "--tol", "1e-10", *extra]
        outcome = _within(CliRunner().invoke, cli, args)
        assert outcome.exit_code == 0, outcome.output
        with Metadata.open(directory / "metadata.db", readonly=True) as md:
            view = md.refresh_view()
            scores.append((view["importance"].copy(), view["interest"].copy()))
    assert "Dask dashboard: http://127.0.0.1:" in outcome.output
    for local, distributed in zip(*scores, strict=True):
        known = ~np.isnan(local)
        assert np.array_equal(known, ~np.isnan(distributed))
        assert np.abs(local[known] - distributed[known]).sum() <= 2e-10


def test_rank_compute_says_what_is_wrong_with_its_cluster_options(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tests.ranking.test_ranking_cli import make_repo
    from xyleme.cli import cli

    directory = tmp_path / "repo"
    make_repo(directory)
    base = ["--repo", str(directory), "rank", "compute"]
    both = CliRunner().invoke(cli, [*base, "--cluster", "tcp://127.0.0.1:9", "--workers", "2"])
    assert both.exit_code == 2 and "not both" in both.output
    monkeypatch.setattr("ranking.cluster.compute.CONNECT_TIMEOUT_S", 1)
    away = _within(CliRunner().invoke, cli, [*base, "--cluster", "tcp://127.0.0.1:9"])
    assert away.exit_code == 1
    assert "cannot reach the Dask scheduler" in away.output and "no score" in away.output
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    bare = CliRunner().invoke(cli, [*base, "--workers", "2"])
    assert bare.exit_code == 1 and "pip install 'xyleme[cluster]'" in bare.output
