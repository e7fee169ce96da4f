"""Readers take "now" from the repository's clock, not the wall clock, when it is simulated."""

import time

from metadata import AcceleratedClock, Metadata, SystemClock
from xyleme.status import repository_now, save_clock


def test_an_accelerated_repository_lives_at_its_checkpointed_simulated_time(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        clock = AcceleratedClock(epoch=1_000_000.0, speed=86_400.0)
        clock.freeze()
        save_clock(md, clock)
        assert repository_now(md) == clock.now()


def test_a_real_time_or_new_repository_lives_at_wall_clock_time(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        assert abs(repository_now(md) - time.time()) < 5
        save_clock(md, SystemClock())
        assert abs(repository_now(md) - time.time()) < 5
