"""The slice workers' messages (issue 21): tagged by (run, sweep), taken in tag order, waited
for peer to peer.

A synchronous sweep must read exactly its peers' values of the previous sweep, never newer
ones a faster peer already sent, and a worker waiting for a lost or halted peer must stop
waiting. These run the message half of a slice worker (:class:`Exchange`) in one event loop,
without a cluster; every wait has a deadline.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

pytest.importorskip("distributed")

from ranking.cluster.exchange import Exchange

DEADLINE_S = 10


class Inbox(Exchange):
    """An exchange with two peers, 1 and 2, and the halt mark a worker has."""

    def __init__(self) -> None:
        super().__init__()
        self.index = 0
        self._halted = 0
        self.peers = {1: "tcp://127.0.0.1:1 one", 2: "tcp://127.0.0.1:2 two"}
        self.give = {1: np.arange(1), 2: np.arange(1)}


def _run(coroutine):
    async def bounded():
        return await asyncio.wait_for(coroutine(), DEADLINE_S)

    return asyncio.run(bounded())


def test_take_returns_the_newest_message_up_to_a_tag_and_keeps_the_newer_ones():
    async def scenario():
        inbox = Inbox()
        for sweep in (2, 1, 3):  # two sends may overtake each other
            await inbox.receive(1, "direct", np.full(2, float(sweep)), sweep, (5, sweep))
        taken = inbox.take("direct", (5, 2))
        assert taken[1][1] == 2 and taken[1][0].tolist() == [2.0, 2.0]
        assert inbox.take("direct", (5, 2)) == {}  # sweeps 1 and 2 are gone
        assert inbox.take("direct")[1][1] == 3  # the newer one stayed
        assert inbox.take("direct") == {}

    _run(scenario)


def test_a_run_reads_the_newest_message_of_earlier_runs_not_a_faster_peers_next_one():
    async def scenario():
        inbox = Inbox()
        await inbox.receive(1, "cacc", np.zeros(1), "old run", (3, 7))
        await inbox.receive(1, "cacc", np.zeros(1), "this run", (4, 1))
        assert inbox.take("cacc", (4, 0))[1][1] == "old run"
        assert inbox.take("cacc", (4, 1))[1][1] == "this run"

    _run(scenario)


def test_arrived_waits_for_every_peers_message_of_the_sweep():
    async def scenario():
        inbox = Inbox()
        waiting = asyncio.ensure_future(inbox.arrived("direct", (2, 4), epoch=2))
        await inbox.receive(1, "direct", np.zeros(1), "one's", (2, 4))
        await inbox.receive(2, "direct", np.zeros(1), "two's older", (2, 3))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # peer 2's message of sweep 4 is not here yet
        await inbox.receive(2, "direct", np.zeros(1), "two's", (2, 4))
        assert await waiting == {1: "one's", 2: "two's"}
        assert inbox.take("direct", (2, 4))[2][1] == "two's"  # left for the sweep to take
        assert inbox.tally["wait_s"] > 0

    _run(scenario)


def test_a_wait_ends_when_the_run_is_halted_or_a_peer_is_given_up():
    async def scenario():
        inbox = Inbox()
        waiting = asyncio.ensure_future(inbox.arrived("direct", (3, 1), epoch=3))
        await asyncio.sleep(0.05)
        inbox._halted = 3
        inbox._news.set()  # what a worker's halt(epoch) does
        assert await waiting is None
        waiting = asyncio.ensure_future(inbox.arrived("direct", (4, 1), epoch=4))
        await inbox.receive(1, "direct", np.zeros(1), "one's", (4, 1))
        await inbox.forget([2])
        assert await waiting is None

    _run(scenario)


def test_a_chaotic_sweep_waits_for_every_peers_new_values_of_each_kind_but_not_for_long():
    async def scenario():
        loop = asyncio.get_running_loop()
        inbox = Inbox()
        waiting = asyncio.ensure_future(inbox.news(("cacc", "cweights"), epoch=1, patience=30))
        await inbox.receive(1, "cacc", np.zeros(1), None, (1, 1))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # the weights are not here yet
        await inbox.receive(2, "cweights", np.zeros(1), None, (1, 1))
        await inbox.receive(1, "cweights", np.zeros(1), None, (1, 1))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # peer 2's sums are not here yet
        await inbox.receive(2, "cacc", np.zeros(1), None, (1, 1))
        await waiting
        inbox.take("cacc"), inbox.take("cweights")
        started = loop.time()  # nothing comes: the wait ends after its patience
        await inbox.news(("cacc",), epoch=1, patience=0.2)
        assert 0.15 < loop.time() - started < 5
        waiting = asyncio.ensure_future(inbox.news(("cacc",), epoch=1, patience=30))
        await asyncio.sleep(0.05)
        inbox._halted = 1
        inbox._news.set()  # what a worker's halt(epoch) does
        await waiting  # ends at once, without the values
        assert inbox.tally["wait_s"] > 0.2

    _run(scenario)
