"""Static and sample-based LiveRanks (§2.3–2.4) on small hand-checked graphs."""

import numpy as np
import pytest

from ranking import InvalidGraph
from ranking import NotConverged as PageRankDidNotConverge
from ranking.liverank import (
    ALIVE_ANSWER,
    DEAD_ANSWER,
    STRATEGIES,
    UNKNOWN_ANSWER,
    InvalidAnswer,
    LinkGraph,
    LiveRankSettings,
    UnknownStrategy,
    descending_order,
    double_adaptive_scores,
    draw_sample,
    indegree_order,
    live_pagerank,
    make_liverank,
    order_after_sample,
    personalised_pagerank,
    positions,
    replay,
    simulate,
    site_activity_scores,
)


def dense_pagerank(graph, zap, damping=0.85):
    """Y = (1 − d)·X·(I − d·A)^−1, solved densely."""
    adjacency = graph.adjacency.toarray()
    out = adjacency.sum(axis=1, keepdims=True)
    walk = np.divide(adjacency, out, out=np.zeros_like(adjacency), where=out > 0)
    zap = zap / zap.sum()
    return np.linalg.solve((np.eye(len(zap)) - damping * walk).T, (1 - damping) * zap)


@pytest.fixture
def two_chains():
    """0 → 1 → 2 on host 0 and 3 → 4 → 5 on host 1."""
    return LinkGraph.from_edges([0, 1, 3, 4], [1, 2, 4, 5], hosts=np.array([0, 0, 0, 1, 1, 1]))


def test_from_edges_drops_duplicates_and_self_links():
    graph = LinkGraph.from_edges([0, 0, 1, 2], [1, 1, 1, 0])
    assert graph.adjacency.nnz == 2
    assert graph.in_degree.tolist() == [1, 1, 0]
    assert graph.successors_of_many(np.array([2, 0])).tolist() == [0, 1]


def test_bad_graphs_are_named_errors():
    with pytest.raises(InvalidGraph):
        LinkGraph.from_edges([0, 1], [1])
    with pytest.raises(InvalidGraph):
        LinkGraph.from_edges([0], [3], n_pages=2)
    with pytest.raises(InvalidGraph):
        LinkGraph.from_edges([0], [1], hosts=np.array([0.5, 1.0]))
    with pytest.raises(InvalidGraph):
        personalised_pagerank(LinkGraph.from_edges([0], [1]), np.zeros(2))


def test_pagerank_matches_a_dense_solve():
    rng = np.random.default_rng(0)
    graph = LinkGraph.from_edges(rng.integers(0, 30, 120), rng.integers(0, 30, 120), 30)
    for zap in (np.ones(30), (rng.random(30) < 0.2).astype(float) + 0.0):
        zap[0] += 1.0
        expected = dense_pagerank(graph, zap)
        assert np.abs(personalised_pagerank(graph, zap) - expected).sum() < 1e-9


def test_pagerank_raises_when_it_does_not_converge(two_chains):
    with pytest.raises(PageRankDidNotConverge):
        personalised_pagerank(two_chains, max_iterations=1)


def test_indegree_order_breaks_ties_by_id():
    graph = LinkGraph.from_edges([0, 1, 3, 4, 0], [2, 2, 2, 3, 1], n_pages=6)
    assert indegree_order(graph).tolist() == [2, 1, 3, 0, 4, 5]


def test_pagerank_order_puts_chain_ends_first(two_chains):
    order = descending_order(personalised_pagerank(two_chains))
    assert order.tolist() == [2, 5, 1, 4, 0, 3]


def test_samples_of_each_kind(two_chains):
    rng = np.random.default_rng(0)
    by_pr = np.array([2, 5, 1, 4, 0, 3])
    by_in = indegree_order(two_chains)
    kinds = {"pagerank_order": by_pr, "indegree_order": by_in}
    assert draw_sample("pagerank", 2, rng=rng, **kinds).tolist() == [2, 5]
    assert draw_sample("indegree", 2, rng=rng, **kinds).tolist() == [1, 2]
    random = draw_sample("random", 4, rng=rng, **kinds)
    assert len(set(random.tolist())) == 4
    with pytest.raises(UnknownStrategy):
        draw_sample("oldest", 2, rng=rng, **kinds)


def test_live_pagerank_is_personalised_on_the_live_sample(two_chains):
    scores = live_pagerank(two_chains, np.array([0, 3]), np.array([True, False]))
    expected = dense_pagerank(two_chains, np.array([1.0, 0, 0, 0, 0, 0]))
    assert np.allclose(scores, expected)
    assert (scores[3:] == 0).all()
    nothing_alive = live_pagerank(two_chains, np.array([0, 3]), np.array([False, False]))
    assert not nothing_alive.any()


def test_double_adaptive_floors_the_anti_pagerank(two_chains):
    sample, sample_alive = np.array([0, 3]), np.array([True, False])
    live = live_pagerank(two_chains, sample, sample_alive)
    anti = dense_pagerank(two_chains, np.array([0, 0, 0, 1.0, 0, 0]))
    floor = anti[anti > 0].min()
    assert floor == pytest.approx(anti[5])
    scores = double_adaptive_scores(two_chains, sample, sample_alive)
    assert scores[:3] == pytest.approx(live[:3] / floor)
    assert (scores[3:] == 0).all()
    ties = positions(descending_order(personalised_pagerank(two_chains)))
    assert order_after_sample(sample, scores, ties).tolist() == [1, 2, 5, 4]


def test_active_site_first_puts_unsampled_sites_last():
    graph = LinkGraph.from_edges([0], [1], n_pages=6, hosts=np.array([0, 0, 0, 1, 1, 2]))
    scores = site_activity_scores(graph, np.array([0, 3, 1]), np.array([True, False, False]))
    assert scores.tolist() == [0.5, 0.5, 0.5, 0.0, 0.0, -1.0]
    order = order_after_sample(np.array([0, 3, 1]), scores, np.arange(6))
    assert order.tolist() == [2, 4, 5]


def test_sample_based_session_waits_for_the_whole_sample(two_chains):
    session = make_liverank(
        two_chains, LiveRankSettings(strategy="pa_pm", sample=2, sample_kind="pagerank")
    )
    first = session.next_batch(10)
    assert first.tolist() == [2, 5]
    session.record(2, True)
    assert session.next_batch(10).size == 0
    session.record(5, False)
    rest = session.next_batch(10)
    assert sorted(rest.tolist()) == [0, 1, 3, 4]
    assert rest[0] == 1  # the live end's parent carries the live PageRank
    session.record_many(rest, np.array([True, True, False, False]))
    assert session.exhausted


def test_answers_must_be_for_pending_pages(two_chains):
    session = make_liverank(two_chains, LiveRankSettings(strategy="p"))
    batch = session.next_batch(2)
    with pytest.raises(InvalidAnswer):
        session.record(int(batch[0]) + 100, True)
    with pytest.raises(InvalidAnswer):
        session.record(3, True)  # never handed out
    session.record(int(batch[0]), True)
    with pytest.raises(InvalidAnswer):
        session.record(int(batch[0]), False)  # answered twice


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_orders_every_page_once(strategy):
    rng = np.random.default_rng(1)
    n = 300
    hosts = np.sort(rng.integers(0, 10, n))
    graph = LinkGraph.from_edges(rng.integers(0, n, 1500), rng.integers(0, n, 1500), n, hosts)
    alive = rng.random(n) < 0.3
    settings = LiveRankSettings(strategy=strategy, sample=0.1)
    order = simulate(make_liverank(graph, settings), alive)
    assert sorted(order.tolist()) == list(range(n))
    again = simulate(make_liverank(graph, settings), alive)
    assert (order == again).all()


def test_settings_are_checked():
    with pytest.raises(ValueError, match="pa_pm"):  # pydantic's ValidationError
        LiveRankSettings(strategy="pagerank")
    with pytest.raises(ValueError, match="indegree"):
        LiveRankSettings(sample_kind="oldest")
    with pytest.raises(ValueError):
        LiveRankSettings(sample=2.5)
    assert LiveRankSettings(sample=0.01).sample_size(1000) == 10
    assert LiveRankSettings(sample=50).sample_size(20) == 20
    with pytest.raises(InvalidGraph, match="host"):
        make_liverank(LinkGraph.from_edges([0], [1]), LiveRankSettings(strategy="asf"))


def test_replay_goes_as_far_as_the_known_answers_decide(two_chains):
    unknown = np.full(6, UNKNOWN_ANSWER)
    order, complete = replay(make_liverank(two_chains, LiveRankSettings(strategy="p")), unknown)
    assert complete and order.tolist() == [2, 5, 1, 4, 0, 3]
    settings = LiveRankSettings(strategy="pa_pm", sample=2, sample_kind="pagerank")
    order, complete = replay(make_liverank(two_chains, settings), unknown)
    assert not complete and order.tolist() == [2, 5]
    known = unknown.copy()
    known[[2, 5]] = [ALIVE_ANSWER, DEAD_ANSWER]
    order, complete = replay(make_liverank(two_chains, settings), known)
    assert complete and order[:3].tolist() == [2, 5, 1]
