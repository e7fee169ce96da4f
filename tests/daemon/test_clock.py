"""The clock every module reads simulated time from."""

import time

import pytest

from metadata import AcceleratedClock, ManualClock, SystemClock


def test_manual_clock_moves_only_when_told():
    clock = ManualClock(1000.0)
    assert clock.now() == 1000.0
    assert clock.advance(60.0) == 1060.0
    clock.set(2000.0)
    assert clock.now() == 2000.0


def test_manual_clock_never_runs_backwards():
    clock = ManualClock(10.0)
    with pytest.raises(ValueError):
        clock.advance(-1.0)


def test_accelerated_clock_runs_speed_times_faster():
    clock = AcceleratedClock(epoch=0.0, speed=1000.0)
    start = clock.now()
    time.sleep(0.05)
    elapsed = clock.now() - start
    assert 40.0 <= elapsed < 5000.0
    assert clock.real_seconds(1000.0) == 1.0


def test_frozen_accelerated_clock_stands_still_and_resumes_where_it_stopped():
    clock = AcceleratedClock(epoch=500.0, speed=1e6)
    clock.freeze()
    frozen = clock.now()
    time.sleep(0.01)
    assert clock.now() == frozen
    clock.unfreeze()
    assert clock.now() >= frozen


def test_accelerated_clock_refuses_a_non_positive_speed():
    with pytest.raises(ValueError, match="speed"):
        AcceleratedClock(epoch=0.0, speed=0.0)


def test_system_clock_is_wall_time():
    assert abs(SystemClock().now() - time.time()) < 1.0
