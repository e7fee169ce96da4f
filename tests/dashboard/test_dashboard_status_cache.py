"""/api/status is polled far more often than its parts change: the daemon's live figures
(with their rates) are made once per sample and the JSON once per change, shared by the
requests in between; a new sample or new repository figures show at once."""

from __future__ import annotations

import pytest

from metadata import Metadata
from xyleme.dashboard import DashboardSettings, create_app
from xyleme.dashboard.cache import Memo
from xyleme.dashboard.keys import HISTORY


class Counting:
    """Live figures that count how often they were read."""

    def __init__(self) -> None:
        self.reads = 0

    def live_figures(self) -> dict:
        self.reads += 1
        return {"fetched": 10 * self.reads, "now": 1_000.0 + self.reads}


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    return tmp_path


async def test_requests_between_two_samples_share_one_answer(aiohttp_client, repo):
    source = Counting()
    settings = DashboardSettings(live_sample_seconds=3600.0, cache_seconds=3600.0)
    client = await aiohttp_client(create_app(repo, live=source, settings=settings))
    bodies = [await (await client.get("/api/status")).read() for _ in range(5)]
    assert len(set(bodies)) == 1
    history = client.app[HISTORY]
    assert history.shown() is history.shown()  # rates computed once per sample
    reads = source.reads
    history.sample()  # the daemon's next sample
    assert source.reads == reads + 1
    answer = await (await client.get("/api/status")).json()
    assert answer["live"]["fetched"] == 10 * source.reads  # shown at once
    assert answer["now"] == 1_000.0 + source.reads
    assert len(answer["live"]["rates"]["at"]) == len(history.samples) - 1


def test_a_memo_keeps_its_value_while_its_inputs_are_the_same_objects():
    memo: Memo[list[int]] = Memo()
    first, second = {"a": 1}, {"a": 1}  # equal, not the same
    made = memo.get((first,), lambda: [1])
    assert memo.get((first,), lambda: [2]) is made
    assert memo.get((second,), lambda: [3]) == [3]
