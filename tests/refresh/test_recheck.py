"""The re-check engine (xyleme/jobs/recheck.py) against probes that answer from a known truth."""

import asyncio

import numpy as np
import pytest

from ranking.liverank import STRATEGIES, LinkGraph, LiveRankSettings, make_liverank, simulate
from xyleme.crawler import Liveness, Verdict
from xyleme.jobs.recheck import RecheckProgress, RepeatedPage, recheck

# Two hosts of four pages: host 0 alive, host 1 dead; chains inside each host.
GRAPH = LinkGraph.from_edges(
    [0, 1, 2, 4, 5, 6, 0], [1, 2, 3, 5, 6, 7, 4], hosts=np.array([0, 0, 0, 0, 1, 1, 1, 1])
)
ALIVE = np.array([True] * 4 + [False] * 4)
URL_IDS = np.arange(100, 108)


class TruthProbe:
    """Answers from ALIVE, counting the questions; ``delay`` lets answers arrive out of order."""

    def __init__(self, alive=ALIVE, delays=None):
        self.alive = alive
        self.delays = delays or {}
        self.asked: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def probe(self, url_id: int) -> Liveness:
        self.asked.append(url_id)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(self.delays.get(url_id, 0))
        self.in_flight -= 1
        if self.alive[url_id - 100]:
            return Liveness(Verdict.ALIVE, "HTTP 200", 200)
        return Liveness(Verdict.DEAD, "HTTP 404", 404)


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_every_page_is_asked_once_in_the_session_order(strategy):
    settings = LiveRankSettings(strategy=strategy, sample=2, seed=1)
    probe = TruthProbe()
    progress: list[RecheckProgress] = []
    report = await recheck(
        make_liverank(GRAPH, settings), URL_IDS, probe, concurrency=1, on_progress=progress.append
    )
    assert sorted(probe.asked) == URL_IDS.tolist()
    expected = simulate(make_liverank(GRAPH, settings), ALIVE)
    assert report.url_ids == (expected + 100).tolist()
    assert report.complete and report.alive.tolist() == ALIVE[expected].tolist()
    assert [p.fetches for p in progress] == list(range(1, 9))
    assert progress[-1] == RecheckProgress(8, 8, 4, 4, 0)
    assert progress[-1].fraction_alive == 0.5


async def test_the_budget_stops_the_pass():
    probe = TruthProbe()
    settings = LiveRankSettings(strategy="p")
    report = await recheck(make_liverank(GRAPH, settings), URL_IDS, probe, budget=3)
    assert len(probe.asked) == 3 and len(report.url_ids) == 3
    assert not report.complete and report.progress.fetches == 3
    empty = await recheck(make_liverank(GRAPH, settings), URL_IDS, TruthProbe(), budget=0)
    assert empty.url_ids == [] and empty.progress.fetches == 0


async def test_probes_run_concurrently_up_to_the_limit():
    probe = TruthProbe(delays={url_id: 0.01 for url_id in URL_IDS.tolist()})
    settings = LiveRankSettings(strategy="r", seed=3)
    await recheck(make_liverank(GRAPH, settings), URL_IDS, probe, concurrency=3)
    assert probe.most_in_flight == 3 and len(set(probe.asked)) == 8


class LoggedSession:
    """A session wrapper that logs what is handed out and what is recorded, in order."""

    def __init__(self, session):
        self.session, self.n_pages, self.log = session, session.n_pages, []

    def next_batch(self, size):
        batch = self.session.next_batch(size)
        self.log += [("hand", int(page)) for page in batch]
        return batch

    def record(self, page, alive):
        self.log.append(("answer", page))
        self.session.record(page, alive)


def handed_while_waiting(log):
    """Pages handed out after some answer while an earlier page was still unanswered."""
    unanswered, answered_since_hand, found = set(), False, []
    for event, page in log:
        if event == "answer":
            unanswered.discard(page)
            answered_since_hand = True
        else:
            if answered_since_hand and unanswered:
                found.append(page)
            unanswered.add(page)
            answered_since_hand = False
    return found


@pytest.mark.parametrize("strategy", ["bfs", "ai"])
async def test_dynamic_strategy_uses_answers_as_they_arrive(strategy):
    # With two probes in flight and one of them slow, the other's answer reaches the session
    # at once, and the next page is chosen from it while the slow one is still out.
    settings = LiveRankSettings(strategy=strategy, sample=1, sample_kind="indegree")
    sequential = LoggedSession(make_liverank(GRAPH, settings))
    await recheck(sequential, URL_IDS, TruthProbe(), concurrency=1)
    handed = [page for event, page in sequential.log if event == "hand"]
    slow = 100 + handed[-3]
    session = LoggedSession(make_liverank(GRAPH, settings))
    await recheck(session, URL_IDS, TruthProbe(delays={slow: 0.2}), concurrency=2)
    assert handed_while_waiting(session.log)
    assert sorted(page for event, page in session.log if event == "answer") == list(range(8))


async def test_a_session_that_repeats_a_page_is_refused():
    class Stuttering:
        n_pages = 2

        def next_batch(self, size):
            return np.array([0])

        def record(self, page, alive):
            pass

    with pytest.raises(RepeatedPage):
        await recheck(Stuttering(), np.array([1, 2]), TruthProbe(), concurrency=2)


async def test_a_failing_probe_is_an_unknown_answer():
    class Broken:
        async def probe(self, url_id):
            raise RuntimeError("bug")

    settings = LiveRankSettings(strategy="i")
    report = await recheck(make_liverank(GRAPH, settings), URL_IDS, Broken(), budget=2)
    assert [a.verdict for a in report.answers] == [Verdict.UNKNOWN] * 2
    assert "bug" in report.answers[0].reason and report.progress.unknown == 2


async def test_bad_arguments_are_refused():
    session = make_liverank(GRAPH, LiveRankSettings(strategy="i"))
    with pytest.raises(ValueError, match="budget"):
        await recheck(session, URL_IDS, TruthProbe(), budget=-1)
    with pytest.raises(ValueError, match="URL-Ids"):
        await recheck(session, URL_IDS[:3], TruthProbe())


class RaisingProbe:
    """Raises ``error`` for every page."""

    def __init__(self, error: BaseException):
        self.error = error

    async def probe(self, url_id: int) -> Liveness:
        await asyncio.sleep(0)
        raise self.error


async def test_a_probe_s_bug_is_an_unknown_answer():
    session = make_liverank(GRAPH, LiveRankSettings(strategy="p"))
    report = await recheck(session, URL_IDS, RaisingProbe(RuntimeError("bug")), budget=2)
    assert [answer.verdict for answer in report.answers] == [Verdict.UNKNOWN] * 2
    assert "RuntimeError('bug')" in report.answers[0].reason


async def test_cancelling_a_pass_cancels_its_probes_and_is_not_swallowed():
    session = make_liverank(GRAPH, LiveRankSettings(strategy="p"))
    probe = TruthProbe(delays={url_id: 30.0 for url_id in URL_IDS.tolist()})
    running = asyncio.create_task(recheck(session, URL_IDS, probe, concurrency=3))
    for _ in range(200):  # 10 s at most
        if probe.in_flight == 3:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the probes never started")
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 10)
    assert len(probe.asked) == 3  # nothing asked after the cancellation
