"""Stored access histories reach the estimators in strictly increasing time order."""

import numpy as np

from metadata import Observation
from refresh.observations import ObservationBatch, increasing_observations


def test_out_of_order_accesses_are_dropped_before_estimating():
    history = {
        "id": np.array([1, 2, 3]),
        "offsets": np.array([0, 3, 3, 6]),
        "at": np.array([10.0, 20.0, 20.0, 5.0, 4.0, 6.0]),
        "changed": np.array([np.nan, 1.0, 0.0, np.nan, 1.0, 1.0]),
        "last_modified": np.full(6, np.nan),
    }
    clean = increasing_observations(history)
    assert clean["offsets"].tolist() == [0, 2, 2, 4]
    assert clean["at"].tolist() == [10.0, 20.0, 5.0, 6.0]
    assert clean["changed"].tolist()[3] == 1.0
    in_order = {**history, "at": np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0])}
    assert increasing_observations(in_order) is in_order


def test_packing_drops_an_access_at_the_same_instant_instead_of_failing():
    nan = float("nan")
    history = {
        "offsets": np.array([0, 3]),
        "at": np.array([1.0, 2.0, 2.0]),
        "changed": np.array([nan, 1.0, 0.0]),
        "last_modified": np.full(3, nan),
    }
    batch = ObservationBatch.from_history(history)
    assert batch.count.tolist() == [2]
    listed = ObservationBatch.from_observations(
        [[Observation(1.0, None), Observation(2.0, True), Observation(2.0, False)]]
    )
    assert listed.count.tolist() == [2] and listed.changed.tolist() == batch.changed.tolist()
