"""OPIC checkpoints: snapshot bytes round-trip, and a restored crawl continues identically."""

import numpy as np
import pytest

from metadata import Metadata
from ranking.opic import (
    OPIC,
    CorruptSnapshot,
    FullHistory,
    Greedy,
    Interpolation,
    fixed_window,
    variable_window,
)
from tests.opic_graphs import crawl, random_graph


class MemoryStore:
    """The state and score part of the metadata manager's API, in memory."""

    def __init__(self):
        self.states: dict[str, bytes] = {}
        self.score_columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def put_state(self, key, value):
        self.states[key] = value

    def get_state(self, key):
        return self.states.get(key)

    def set_scores(self, column, ids, values):
        self.score_columns[column] = (np.asarray(ids), np.asarray(values))


def _crawled_opic():
    rng = np.random.default_rng(2)
    children = random_graph(rng, 25)
    opic = OPIC(
        pages=5,
        damping=0.8,
        window=Interpolation(3.0),
        extra_windows=[variable_window(4), fixed_window(2.0, min_measures=2), FullHistory()],
    )
    opic.set_weight([1, 3], 2.0)
    crawl(opic, Greedy(opic), children, 400)
    return opic, children


def test_snapshot_round_trip_restores_every_estimate():
    opic, _ = _crawled_opic()
    restored = OPIC.from_snapshot(opic.snapshot())
    assert restored.pages == opic.pages
    assert restored.g == opic.g
    np.testing.assert_array_equal(restored.cash(), opic.cash())
    np.testing.assert_array_equal(restored.weights(), opic.weights())
    for original, copy in zip(opic.windows, restored.windows, strict=True):
        assert type(copy) is type(original)
        np.testing.assert_array_equal(restored.estimates(copy), opic.estimates(original))
    assert restored.total_cash() == pytest.approx(1.0)


def test_restored_crawl_continues_exactly_like_the_original():
    opic, children = _crawled_opic()
    restored = OPIC.from_snapshot(opic.snapshot())
    crawl(opic, Greedy(opic), children, 300)
    crawl(restored, Greedy(restored), children, 300)
    np.testing.assert_allclose(restored.estimates(), opic.estimates(), rtol=1e-12)


def test_checkpoint_writes_state_and_score_columns():
    opic, _ = _crawled_opic()
    store = MemoryStore()
    opic.checkpoint(store, key="opic")
    ids, cash = store.score_columns["opic_cash"]
    np.testing.assert_array_equal(ids, np.arange(opic.pages))
    np.testing.assert_allclose(cash, opic.cash())
    np.testing.assert_allclose(store.score_columns["opic_importance"][1], opic.estimates())
    restored = OPIC.restore(store, key="opic")
    np.testing.assert_array_equal(restored.estimates(), opic.estimates())
    assert OPIC.restore(store, key="absent") is None


@pytest.mark.parametrize("data", [b"", b"not a snapshot", b"PK\x03\x04garbage"])
def test_corrupt_snapshot_raises_a_named_error(data):
    with pytest.raises(CorruptSnapshot):
        OPIC.from_snapshot(data)


def test_checkpoint_round_trip_through_the_metadata_manager(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        ids = md.ids_for([f"http://a.test/{name}.xml" for name in "abcde"])
        assert min(ids) >= 1  # URL-Ids from the metadata: OPIC's slot 0 stays a placeholder
        opic = OPIC(window=Interpolation(2.0))
        opic.add_pages(ids[:1])
        greedy = Greedy(opic)
        links = {ids[0]: ids[1:3], ids[1]: ids[3:], ids[2]: [], ids[3]: ids[:1], ids[4]: ids[:2]}
        for _ in range(60):
            page = greedy.next_page()
            opic.on_fetch(page, links[page])
        opic.checkpoint(md)
    with Metadata.open(tmp_path / "metadata.db") as md:
        restored = OPIC.restore(md)
        score_ids, cash = md.scores("opic_cash")
        _, estimate = md.scores("opic_importance")
    assert sorted(score_ids.tolist()) == sorted(ids)
    np.testing.assert_allclose(cash, opic.cash(score_ids))
    np.testing.assert_allclose(estimate, opic.estimates()[score_ids])
    assert estimate.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(restored.estimates(), opic.estimates())
    assert restored.total_cash() == pytest.approx(1.0)
