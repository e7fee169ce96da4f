"""Beside a daemon, the overview's figures are computed in a process of their own (issue 18:
the status scan must not hold the GIL the daemon's event loop needs); a crashed worker is
replaced and the last figures are served meanwhile."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from metadata import Metadata
from xyleme.dashboard import DashboardSettings, create_app
from xyleme.dashboard.keys import STATUS_PROCESS
from xyleme.dashboard.statusprocess import StatusProcess


class Live:
    def live_figures(self) -> dict:
        return {"fetched": 7, "now": 1_000.0}


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    return tmp_path


def _worker_pids(process: StatusProcess) -> set[int]:
    pool = process._pool
    return set() if pool is None else {p.pid for p in pool._processes.values()}


async def test_beside_a_daemon_the_status_is_computed_by_another_process(aiohttp_client, repo):
    app = create_app(repo, live=Live(), settings=DashboardSettings(cache_seconds=0.0))
    client = await aiohttp_client(app)
    assert not _worker_pids(app[STATUS_PROCESS]), "no process before a status is asked"
    status = await (await client.get("/api/status")).json()  # from a thread: none waits
    assert status["pages_total"] == 0 and status["live"]["fetched"] == 7
    workers = _worker_pids(app[STATUS_PROCESS])
    assert workers and os.getpid() not in workers
    from_worker = await asyncio.wait_for(app[STATUS_PROCESS].status({"now": 5.0}), 60)
    assert from_worker["pages_total"] == 0 and from_worker["now"] == 5.0


async def test_a_standalone_dashboard_starts_no_process(aiohttp_client, repo):
    app = create_app(repo)
    client = await aiohttp_client(app)
    assert (await client.get("/api/status")).status == 200
    assert STATUS_PROCESS not in app


async def test_a_killed_worker_is_replaced_and_the_last_figures_served(aiohttp_client, repo):
    app = create_app(repo, live=Live(), settings=DashboardSettings(cache_seconds=0.0))
    client = await aiohttp_client(app)
    assert (await client.get("/api/status")).status == 200
    (killed,) = _worker_pids(app[STATUS_PROCESS])
    os.kill(killed, signal.SIGKILL)
    for _ in range(200):  # each request starts a refresh; the first ones meet the dead pool
        response = await client.get("/api/status")
        assert response.status == 200  # the last figures, while no fresh ones come
        fresh = _worker_pids(app[STATUS_PROCESS])
        if fresh and killed not in fresh:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("no new status worker within 10 s")
