"""OPIC's core (paper §2): cash conservation, Lemma 2.3, the PageRank(c) fixpoint, growth."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.opic import OPIC, Cycle, FullHistory, Greedy, UnknownPage
from tests.opic_graphs import crawl, dense_pagerank, random_graph

graphs_and_visits = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.integers(0, n - 1), max_size=6), min_size=n, max_size=n),
        st.lists(st.integers(0, n - 1), max_size=60),
        st.floats(0.0, 0.99),
    )
)


@settings(max_examples=150, deadline=None)
@given(graphs_and_visits)
def test_cash_is_conserved_and_lemma_2_3_holds(case):
    links, visits, damping = case
    n = len(links)
    children = [np.unique(np.array(kids, dtype=np.int64)) for kids in links]
    history = FullHistory()
    opic = OPIC(pages=n, damping=damping, window=history)
    for page in visits:
        opic.on_fetch(page, children[page])
        assert opic.total_cash() == pytest.approx(1.0, abs=1e-12)  # Lemma 2.2
    h = history.history[:n]
    # Lemma 2.3 on the graph with the virtual page v, which starts with all the cash and is
    # read first: H[j] + C[j] = Σ_i share(i→j)·H[i] + H[v]/n, and H[v] = 1 + Σ_i share(i→v)·H[i].
    inflow = np.zeros(n)
    to_virtual = 0.0
    for i, kids in enumerate(children):
        if kids.size:
            inflow[kids] += damping / kids.size * h[i]
            to_virtual += (1.0 - damping) * h[i]
        else:
            to_virtual += h[i]
    assert opic.virtual_history == pytest.approx(1.0 + to_virtual, abs=1e-9)
    expected = inflow + opic.virtual_history / n
    np.testing.assert_allclose(h + opic.cash(), expected, atol=1e-9)
    assert opic.g == pytest.approx(h.sum(), abs=1e-12)


@pytest.mark.parametrize("strategy", [Greedy, Cycle])
def test_estimates_converge_to_pagerank_with_the_virtual_page(strategy):
    rng = np.random.default_rng(7)
    children = random_graph(rng, 30)
    opic = OPIC(pages=30, damping=0.85)
    crawl(opic, strategy(opic), children, 6000)
    exact = dense_pagerank(children, 0.85)
    estimate = opic.estimates()
    assert estimate.sum() == pytest.approx(1.0)
    # Theorem 2.1: the error is bounded by the error factor 1/G.
    assert np.abs(estimate - exact).sum() < 2.0 / opic.g
    assert opic.g > 100


def test_estimate_is_history_plus_cash_over_g_plus_one():
    opic = OPIC(pages=4, damping=0.5)
    for page, kids in [(0, [1, 2]), (1, []), (2, [0, 3]), (0, [1, 2])]:
        opic.on_fetch(page, kids)
    history = opic.window.history[:4]
    np.testing.assert_allclose(opic.estimates(), (history + opic.cash()) / (opic.g + 1.0))


def test_page_without_links_gives_all_its_cash_to_the_virtual_page():
    opic = OPIC(pages=4, damping=0.85)
    before = opic.virtual_history
    opic.on_fetch(0, [])
    assert opic.virtual_history - before == pytest.approx(0.25)
    np.testing.assert_allclose(opic.cash(), [0.0625, 0.3125, 0.3125, 0.3125])


def test_duplicate_links_count_once():
    twice, once = OPIC(pages=3), OPIC(pages=3)
    twice.on_fetch(0, [1, 1, 2])
    once.on_fetch(0, [1, 2])
    np.testing.assert_allclose(twice.cash(), once.cash())


def test_focused_weights_give_personalised_pagerank():
    rng = np.random.default_rng(3)
    children = random_graph(rng, 20)
    opic = OPIC(pages=20, damping=0.8)
    focused = [2, 5, 11]
    opic.set_weight(focused, 3.0)
    crawl(opic, Greedy(opic), children, 5000)
    weights = np.ones(20)
    weights[focused] = 3.0
    exact = dense_pagerank(children, 0.8, weights)
    assert np.abs(opic.estimates() - exact).sum() < 2.0 / opic.g
    assert opic.total_cash() == pytest.approx(1.0)


def _reachable(children: list[np.ndarray], seed: int) -> set[int]:
    seen, frontier = {seed}, [seed]
    while frontier:
        page = frontier.pop()
        for child in children[page].tolist():
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return seen


def test_growing_graph_discovers_pages_and_converges():
    rng = np.random.default_rng(11)
    n = 40
    children = random_graph(rng, n, max_out=4)
    children[0] = np.arange(1, 6)  # the seed links onwards
    opic = OPIC(pages=1, damping=0.85)
    # pages no link from the seed reaches are known from the start (like more seeds);
    # the others are discovered through links as the crawl goes
    opic.add_pages(sorted(set(range(n)) - _reachable(children, 0)))
    greedy = Greedy(opic)
    for _ in range(20000):
        page = greedy.next_page()
        opic.on_fetch(page, children[page])
        assert opic.total_cash() == pytest.approx(1.0, abs=1e-9)
    assert opic.known_pages == n
    exact = dense_pagerank(children, 0.85)
    assert np.abs(opic.estimates() - exact).sum() < 0.05


def test_ids_never_named_are_placeholders():
    opic = OPIC()
    opic.add_pages([1, 2])  # URL-Ids start at 1: 0 is a placeholder
    opic.on_fetch(1, [4])  # 3 becomes a placeholder too
    assert (opic.pages, opic.known_pages) == (5, 3)
    assert not opic.is_known(0) and not opic.is_known(3)
    estimate = opic.estimates()
    assert estimate[0] == estimate[3] == 0.0
    assert opic.cash([0, 3]).tolist() == [0.0, 0.0]
    assert set(opic.unread_by_cash(10).tolist()) == {2, 4}
    assert opic.total_cash() == pytest.approx(1.0)
    with pytest.raises(UnknownPage):
        opic.set_weight([3], 2.0)


def test_new_pages_take_discovery_cash_from_the_virtual_page():
    opic = OPIC(pages=2, damping=0.5, discovery_cash=1.0)
    opic.on_fetch(0, [4, 5])
    assert (opic.pages, opic.known_pages) == (6, 4)
    cash = opic.cash()
    # The read gives 0.125 to pages 4 and 5 each, 0.25 to the virtual page, which pays the
    # 2 new pages up to the mean cash (1/4) each, scaled down to what it holds: 0.25 / 2.
    assert cash[4] == cash[5] == pytest.approx(0.125 + 0.125)
    assert cash[0] == 0.0 and cash[1] == 0.5
    assert opic.total_cash() == pytest.approx(1.0)


def test_unread_by_cash_lists_unread_pages_richest_first():
    opic = OPIC(pages=5, damping=0.85)
    opic.on_fetch(0, [3])
    opic.on_fetch(1, [3, 4])
    order = opic.unread_by_cash(10)
    assert order.tolist() == [3, 4, 2]
    assert opic.unread_by_cash(1).tolist() == [3]
    assert opic.unread_by_cash(0).size == 0


def test_bad_ids_and_parameters_raise_named_errors():
    opic = OPIC(pages=3)
    with pytest.raises(UnknownPage, match="URL-Id -1"):
        opic.on_fetch(-1, [])
    with pytest.raises(UnknownPage):
        opic.on_fetch(0, [1, -4])
    with pytest.raises(UnknownPage):
        opic.cash([7])
    with pytest.raises(ValueError, match="damping"):
        OPIC(damping=1.0)
    with pytest.raises(ValueError, match="weight"):
        opic.set_weight([0], 0.0)
    assert opic.total_cash() == pytest.approx(1.0)


def test_empty_opic_holds_all_cash_in_the_virtual_page_until_seeds_arrive():
    opic = OPIC()
    assert opic.estimates().size == 0
    assert opic.total_cash() == 1.0
    opic.add_pages(range(4))
    np.testing.assert_allclose(opic.cash(), 0.25)
