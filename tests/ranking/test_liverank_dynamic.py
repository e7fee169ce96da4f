"""Dynamic LiveRanks (§2.5): BFS and active in-degree follow the answers as they arrive."""

import numpy as np
import pytest

from ranking.liverank import (
    ActiveIndegreeSession,
    BreadthFirstSession,
    LinkGraph,
    LiveRankSettings,
    descending_order,
    make_liverank,
    personalised_pagerank,
    simulate,
)


def sessions_for(graph, sample, cls):
    by_pagerank = descending_order(personalised_pagerank(graph))
    return cls(graph, np.array(sample), by_pagerank)


def run_one_by_one(session, alive):
    order = []
    while not session.exhausted:
        (page,) = session.next_batch(1).tolist()
        session.record(page, bool(alive[page]))
        order.append(page)
    return order


@pytest.fixture
def tree():
    """0 → 1, 0 → 2, 1 → 3, 2 → 4; page 5 is isolated."""
    return LinkGraph.from_edges([0, 0, 1, 2], [1, 2, 3, 4], n_pages=6)


def test_bfs_enqueues_only_the_children_of_live_pages(tree):
    alive = np.array([True, False, True, True, True, True])
    session = sessions_for(tree, [0], BreadthFirstSession)
    # 1 is dead so 3 is not queued; 2 is alive so 4 is; then static PageRank: 3 before 5.
    assert run_one_by_one(session, alive) == [0, 1, 2, 4, 3, 5]


def test_bfs_falls_back_on_pagerank_when_nothing_is_alive(tree):
    session = sessions_for(tree, [0], BreadthFirstSession)
    expected_tail = [p for p in descending_order(personalised_pagerank(tree)) if p != 0]
    assert run_one_by_one(session, np.zeros(6, dtype=bool)) == [0, *expected_tail]


@pytest.fixture
def fan():
    """0 → 2, 1 → 2, 1 → 3, 2 → 5; page 4 is isolated."""
    return LinkGraph.from_edges([0, 1, 1, 2], [2, 2, 3, 5], n_pages=6)


def test_ai_picks_the_most_live_parents_and_updates(fan):
    session = sessions_for(fan, [0, 1], ActiveIndegreeSession)
    # After Z: 2 has two live parents, 3 one. 2 alive lifts 5 to one, and 5 beats 3 on
    # PageRank (its parent 2 holds more rank than 3's parent 1, which splits it in two).
    assert run_one_by_one(session, np.ones(6, dtype=bool)) == [0, 1, 2, 5, 3, 4]
    assert session.activity[[2, 3, 5]].tolist() == [2, 1, 1]


def test_ai_does_not_credit_the_children_of_dead_pages(fan):
    alive = np.array([True, True, False, True, True, True])
    session = sessions_for(fan, [0, 1], ActiveIndegreeSession)
    assert run_one_by_one(session, alive) == [0, 1, 2, 3, 5, 4]
    assert session.activity[5] == 0


@pytest.mark.parametrize("strategy", ["bfs", "ai"])
def test_batches_never_hand_out_a_page_twice(strategy):
    rng = np.random.default_rng(5)
    graph = LinkGraph.from_edges(rng.integers(0, 200, 800), rng.integers(0, 200, 800), 200)
    alive = rng.random(200) < 0.4
    session = make_liverank(graph, LiveRankSettings(strategy=strategy, sample=20))
    order = simulate(session, alive, batch_size=7)
    assert sorted(order.tolist()) == list(range(200))


def test_dynamic_strategies_start_with_the_sample():
    rng = np.random.default_rng(2)
    graph = LinkGraph.from_edges(rng.integers(0, 100, 400), rng.integers(0, 100, 400), 100)
    settings = LiveRankSettings(strategy="ai", sample=10, sample_kind="indegree")
    order = simulate(make_liverank(graph, settings), rng.random(100) < 0.5)
    assert order[:10].tolist() == descending_order(graph.in_degree)[:10].tolist()
