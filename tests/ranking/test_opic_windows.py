"""Adaptive OPIC's windows (paper §3.2–3.3): their formulas, and forgetting a changed graph."""

import numpy as np
import pytest

from ranking.opic import (
    OPIC,
    FullHistory,
    Greedy,
    Interpolation,
    MeasureWindow,
    OPICSettings,
    fixed_window,
    variable_window,
)
from tests.opic_graphs import crawl, dense_pagerank, random_graph


def test_interpolation_follows_the_papers_update():
    window = Interpolation(span=2.0)
    window.resize(1)
    window.introduce(np.array([0]), g=0.0, prior_rate=0.5)
    assert window.history[0] == pytest.approx(1.0)  # prior: 0.5 per G-unit over T = 2
    window.record(0, cash=0.3, g=0.5)  # G − G[i] < T: H·(T − 0.5)/T + C
    assert window.history[0] == pytest.approx(1.0 * 1.5 / 2.0 + 0.3)
    window.record(0, cash=0.6, g=3.5)  # G − G[i] ≥ T: C·T/(G − G[i])
    assert window.history[0] == pytest.approx(0.6 * 2.0 / 3.0)
    # the rate applies the same update to the current cash, over T
    assert window.rates(np.array([0.1]), g=4.5)[0] == pytest.approx((0.4 * 1.0 / 2.0 + 0.1) / 2.0)


def test_variable_window_keeps_the_last_k_measures():
    window = variable_window(measures=3, prior_span=1.0)
    window.resize(1)
    window.introduce(np.array([0]), g=0.0, prior_rate=0.2)
    for step, cash in enumerate([0.1, 0.2, 0.3, 0.4], start=1):
        window.record(0, cash, g=float(step))
    assert window.count[0] == 3
    # kept: reads at G = 2, 3, 4 with cash .2 .3 .4, covering (1, 4]; current cash .5 at G = 5
    assert window.rates(np.array([0.5]), g=5.0)[0] == pytest.approx((0.2 + 0.3 + 0.4 + 0.5) / 4)


def test_fixed_window_forgets_old_reads_but_keeps_a_minimum():
    plain = fixed_window(span=2.0)
    improved = fixed_window(span=2.0, min_measures=3)
    for window in (plain, improved):
        window.resize(1)
        window.introduce(np.array([0]), g=0.0, prior_rate=1.0)
        for g in (1.0, 2.0, 5.0, 10.0):
            window.record(0, 0.1, g)
    assert plain.count[0] == 1  # only the read at G = 10 lies within the last 2 G-units
    assert plain.start[0] == 5.0
    assert improved.count[0] == 3
    assert improved.measures_per_page(1) == 3.0


def test_measure_window_rejects_bad_parameters():
    with pytest.raises(ValueError, match="at least one"):
        MeasureWindow(capacity=0)
    with pytest.raises(ValueError, match="min_measures"):
        MeasureWindow(capacity=2, min_measures=3)
    with pytest.raises(ValueError, match="positive"):
        Interpolation(span=0.0)


def _change_graph(children: list[np.ndarray], rng: np.random.Generator) -> list[np.ndarray]:
    """Redirect many links to a few pages, so their importance jumps."""
    n = len(children)
    stars = rng.choice(n, 3, replace=False)
    return [
        np.unique(np.concatenate([kids, stars])) if i % 2 else kids
        for i, kids in enumerate(children)
    ]


WINDOWS = {
    "interpolation": lambda: Interpolation(span=6.0),
    "variable": lambda: variable_window(measures=8),
    "fixed": lambda: fixed_window(span=6.0),
    "improved fixed": lambda: fixed_window(span=6.0, min_measures=3),
}


@pytest.mark.parametrize("name", list(WINDOWS))
def test_window_follows_a_graph_that_changes_mid_run(name):
    rng = np.random.default_rng(5)
    n = 40
    before = random_graph(rng, n)
    after = _change_graph(before, rng)
    window, static = WINDOWS[name](), FullHistory()
    opic = OPIC(pages=n, damping=0.85, window=window, extra_windows=[static])
    greedy = Greedy(opic)
    crawl(opic, greedy, before, 40 * n)
    crawl(opic, greedy, after, 60 * n)
    exact = dense_pagerank(after, 0.85)

    def error(estimate):
        return float(np.mean(np.abs(estimate - exact) / exact))

    assert error(opic.estimates(window)) < 0.1
    assert error(opic.estimates(window)) < error(opic.estimates(static)) / 2


def test_new_pages_start_from_the_rate_of_recently_introduced_pages():
    opic = OPIC(pages=2, damping=0.85, window=Interpolation(span=4.0))
    opic.on_fetch(0, [1])
    for _ in range(20):
        opic.on_fetch(1, [0, 2])
        opic.on_fetch(2, [0])
        opic.on_fetch(0, [1])
    learned = opic._new_page_rate
    assert learned is not None and learned > 0
    opic.on_fetch(0, [1, 3])
    assert opic.window.history[3] == pytest.approx(learned * 4.0)


@pytest.mark.parametrize("policy", ["interpolation", "variable", "fixed", "full"])
def test_settings_build_each_policy(policy):
    settings = OPICSettings(window=policy)
    opic = settings.build(pages=5)
    selector = settings.build_selector(opic)
    opic.on_fetch(selector.next_page(), [1, 2])
    assert opic.estimates().sum() == pytest.approx(1.0)


def test_settings_reject_unknown_names():
    with pytest.raises(ValueError, match="window"):
        OPICSettings(window="sliding")
    with pytest.raises(ValueError, match="selection"):
        OPICSettings(selection="best")


def test_estimates_refuse_a_window_this_opic_does_not_feed():
    with pytest.raises(ValueError, match="not fed"):
        OPIC(pages=2).estimates(Interpolation())
