"""Issue 18, fault 6: XPath queries run in a bounded pool of worker processes, limited in time
and memory, with a small queue; beyond it 429 with Retry-After. The dashboard's other views
go on answering while the workers are busy."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import aiohttp
import pytest

from loader import Loader
from metadata import ManualClock, Metadata
from tests.loader_fakes import FakeFetcher, FakeMetadata
from xyleme.dashboard import DashboardSettings, create_app, serving
from xyleme.dashboard.keys import FIGURES, QUERIES
from xyleme.lock import DaemonLock

HEAVY = "count(//node()[count(//node()[count(//node()) > 0]) > 0])"  # cubic: minutes here
LIGHT = "count(//i)"


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    url = "http://big.test/doc.xml"
    loader.load(md.id_for(url), url, b"<r>" + b"<i>x</i>" * 1000 + b"</r>", {}, 100.0)
    return tmp_path


async def client_for(aiohttp_client, repo, **settings):
    return await aiohttp_client(create_app(repo, settings=DashboardSettings(**settings)))


async def wait_until_admitted(app, count: int) -> None:
    for _ in range(400):  # 20 s at most
        if app[QUERIES].admitted >= count:
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"{count} queries were never admitted")


async def test_a_light_query_answers(aiohttp_client, repo):
    client = await client_for(aiohttp_client, repo)
    answer = await (await client.get("/api/query", params={"xpath": LIGHT})).json()
    assert [match["value"] for match in answer["results"]] == ["1000"]


async def test_a_query_past_its_time_limit_is_stopped(aiohttp_client, repo):
    client = await client_for(aiohttp_client, repo, query_time_limit_s=1.0)
    response = await client.get("/api/query", params={"xpath": HEAVY})
    assert response.status == 400
    assert "time limit of 1 s" in (await response.json())["error"]


async def test_beyond_the_queue_a_query_gets_429_with_retry_after(aiohttp_client, repo):
    client = await client_for(
        aiohttp_client, repo, query_workers=1, query_queue=1, query_time_limit_s=3.0
    )
    admitted = [
        asyncio.create_task(client.get("/api/query", params={"xpath": HEAVY})) for _ in range(2)
    ]
    await wait_until_admitted(client.app, 2)
    refused = await client.get("/api/query", params={"xpath": HEAVY})
    assert refused.status == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 3
    assert "too many queries" in (await refused.json())["error"]
    page = await client.get("/query", params={"xpath": HEAVY})  # the HTML view says it too
    assert page.status == 429 and "Retry-After" in page.headers
    for task in admitted:
        assert (await task).status == 400  # both ran to their time limit
    assert client.app[QUERIES].admitted == 0


async def test_status_answers_while_every_worker_is_busy(aiohttp_client, repo):
    client = await client_for(aiohttp_client, repo, query_workers=2, query_time_limit_s=20.0)
    queries = [
        asyncio.create_task(client.get("/api/query", params={"xpath": HEAVY})) for _ in range(6)
    ]
    try:
        await wait_until_admitted(client.app, 6)
        for _ in range(5):
            response = await asyncio.wait_for(client.get("/api/status"), 15)
            assert response.status == 200
        assert client.app[QUERIES].admitted == 6, "the queries were still running"
    finally:
        for task in queries:
            task.cancel()
        await asyncio.gather(*queries, return_exceptions=True)
    for _ in range(200):  # a cancelled request's worker is killed
        if client.app[QUERIES].admitted == 0:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the cancelled queries' workers were not reaped")


def test_a_worker_is_limited_in_memory_and_priority():
    probe = (
        "import os\n"
        "from xyleme.query_worker import limit_this_process\n"
        "limit_this_process(5.0, 32)\n"
        "print(os.nice(0))\n"
        "try:\n"
        "    bytearray(256 * 2**20)\n"
        "    print('allocated')\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["19", "MemoryError"]


async def test_a_query_whose_client_hangs_up_is_stopped(repo):
    """Served as ``xyleme run --http`` serves it (aiohttp does not cancel a handler whose
    client went away): the dashboard stops the query itself, frees its turn and kills its
    worker, long before the query's time limit."""
    app = create_app(repo, settings=DashboardSettings(query_workers=1, query_time_limit_s=60.0))
    async with serving(app, "127.0.0.1", 0) as url, aiohttp.ClientSession() as session:
        asking = [
            asyncio.create_task(session.get(url + "api/query", params={"xpath": HEAVY}))
            for _ in range(2)  # one running, one queued
        ]
        await wait_until_admitted(app, 2)
        for task in asking:
            task.cancel()  # the client hangs up
        await asyncio.gather(*asking, return_exceptions=True)
        for _ in range(200):  # 10 s at most, the time limit is 60 s
            if app[QUERIES].admitted == 0:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the queries of a client that hung up kept running")
        answer = await session.get(url + "api/query", params={"xpath": LIGHT})
        assert (await answer.json())["results"][0]["value"] == "1000"  # the worker is free


def test_beside_a_daemon_a_worker_takes_only_idle_cpu():
    """Where the kernel groups processes by session, niceness alone would leave the worker
    spending the daemon's group's share: an idle worker's own group goes to niceness 19 too,
    and on Linux the worker runs under SCHED_IDLE."""
    probe = (
        "import os\n"
        "from xyleme.query_worker import AUTOGROUP, in_a_group_of_its_own, lowest_priority\n"
        "lowest_priority(idle=True)\n"
        "print(os.nice(0), os.sched_getscheduler(0) == os.SCHED_IDLE)\n"
        "print(AUTOGROUP.read_text().split()[-1] if in_a_group_of_its_own() else 19)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        start_new_session=True,  # as the dashboard starts it
    )
    assert done.stdout.split() == ["19", "True", "19"]


def test_the_pool_asks_for_idle_workers_while_a_crawl_runs(repo):
    """Beside a daemon sharing the server, or while a daemon holds the repository (``xyleme
    run`` with ``xyleme dashboard`` in another terminal); a dashboard alone has no crawl to
    protect."""

    class Live:
        def live_figures(self):
            return {}

    beside, alone = create_app(repo, live=Live()), create_app(repo)
    try:
        assert beside[QUERIES].idle()
        assert not alone[QUERIES].idle()
        lock = DaemonLock(repo)
        lock.acquire()
        try:
            assert alone[QUERIES].idle()
        finally:
            lock.release()
        assert not alone[QUERIES].idle()
    finally:
        beside[FIGURES].close()
        alone[FIGURES].close()
