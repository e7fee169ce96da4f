"""Page selection strategies (paper §3.1): Greedy's heap always names the richest page."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranking.opic import OPIC, Cycle, Greedy, NoPages, RandomSelection

operations = st.lists(
    st.one_of(
        st.tuples(st.just("fetch"), st.integers(0, 15), st.lists(st.integers(0, 20), max_size=5)),
        st.tuples(st.just("weight"), st.integers(0, 15), st.sampled_from([0.5, 1.0, 2.0, 4.0])),
        st.tuples(st.just("greedy"), st.none(), st.none()),
    ),
    max_size=80,
)


@settings(max_examples=120, deadline=None)
@given(operations)
def test_greedy_names_a_page_with_the_most_cash(ops):
    opic = OPIC(pages=16, damping=0.85)
    greedy = Greedy(opic)
    for op, page, arg in ops:
        if op == "fetch":
            opic.on_fetch(page, arg)
        elif op == "weight":
            opic.set_weight([page], arg)
        else:
            page = greedy.next_page()
            opic.on_fetch(page, [(page + 1) % opic.pages])
        chosen = greedy.next_page()
        assert opic.cash([chosen])[0] == pytest.approx(opic.cash().max(), abs=1e-15)


def test_greedy_reads_every_page_of_a_strongly_connected_graph():
    opic = OPIC(pages=50)
    greedy = Greedy(opic)
    for _ in range(2000):
        page = greedy.next_page()
        opic.on_fetch(page, [(page + 1) % 50, (page * 7) % 50])
    assert (opic.reads() > 0).all()


def test_greedy_heap_stays_bounded():
    opic = OPIC(pages=10)
    greedy = Greedy(opic)
    for _ in range(5000):
        page = greedy.next_page()
        opic.on_fetch(page, list(range(10)))
    assert greedy._entries <= 4 * 10 + 1024 + 12


def test_random_selection_is_reproducible_and_covers_pages():
    first = RandomSelection(OPIC(pages=20), seed=4)
    second = RandomSelection(OPIC(pages=20), seed=4)
    picks = [first.next_page() for _ in range(200)]
    assert picks == [second.next_page() for _ in range(200)]
    assert set(picks) == set(range(20))


def test_cycle_goes_round_in_id_order_including_new_pages():
    opic = OPIC(pages=3)
    cycle = Cycle(opic)
    assert [cycle.next_page() for _ in range(3)] == [0, 1, 2]
    opic.on_fetch(0, [4])
    assert [cycle.next_page() for _ in range(5)] == [4, 0, 1, 2, 4]  # 3 is no page


@pytest.mark.parametrize("strategy", [Greedy, RandomSelection, Cycle])
def test_no_pages_raises_a_named_error(strategy):
    with pytest.raises(NoPages, match="no page"):
        strategy(OPIC()).next_page()


def test_greedy_sees_pages_added_later():
    opic = OPIC()
    greedy = Greedy(opic)
    opic.add_pages([0, 1, 2])
    opic.on_fetch(1, [2])
    assert greedy.next_page() == 2
    assert np.isclose(opic.cash([2])[0], opic.cash().max())
