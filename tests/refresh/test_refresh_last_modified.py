"""Detection of unreliable Last-Modified headers, per page and per host (§6.1)."""

import numpy as np

from metadata import Observation as Obs
from refresh import LastModifiedVerdict as V
from refresh.observations import (
    ObservationBatch,
    last_modified_verdicts,
    spread_host_verdicts,
)

HOUR = 3600.0


def verdict(history: list[Obs]) -> V:
    batch = ObservationBatch.from_observations([history])
    return V(last_modified_verdicts(batch, clock_skew_s=60.0, max_disagreement=0.1)[0])


def test_a_truthful_server_is_reliable():
    history = [
        Obs(0, None, -5 * HOUR),
        Obs(10 * HOUR, True, 4 * HOUR),
        Obs(20 * HOUR, False, 4 * HOUR),
    ]
    assert verdict(history) is V.RELIABLE


def test_a_missing_header_on_any_access():
    assert verdict([Obs(0, None, -HOUR), Obs(HOUR, False, None)]) is V.MISSING


def test_a_date_in_the_future():
    assert verdict([Obs(0, None, -HOUR), Obs(HOUR, True, 2 * HOUR)]) is V.FUTURE


def test_a_server_that_always_says_now():
    history = [Obs(t * HOUR, None if t == 0 else False, t * HOUR + 1) for t in range(4)]
    assert verdict(history) is V.ALWAYS_NOW


def test_a_date_that_goes_backwards():
    assert verdict([Obs(0, None, -HOUR), Obs(HOUR, False, -3 * HOUR)]) is V.NOT_MONOTONE


def test_a_date_that_moves_while_the_md5_does_not():
    history = [Obs(0, None, -HOUR)] + [
        Obs(t * HOUR, False, t * HOUR - 60 * 30) for t in range(1, 6)
    ]
    assert verdict(history) is V.DISAGREES_MD5


def test_an_md5_change_the_date_does_not_show():
    history = [Obs(0, None, -HOUR), Obs(HOUR, True, -HOUR), Obs(2 * HOUR, False, -HOUR)]
    assert verdict(history) is V.DISAGREES_MD5


def test_a_host_with_mostly_unreliable_pages_is_distrusted_as_a_whole():
    verdicts = np.array([0, 1, 2, 0, 0, 3], dtype=np.int8)
    hosts = np.array([7, 7, 7, 8, 8, 8])
    out = spread_host_verdicts(verdicts, hosts, unreliable_share=0.5)
    assert out.tolist() == [V.HOST_UNRELIABLE, 1, 2, 0, 0, 3]
