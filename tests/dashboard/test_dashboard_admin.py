"""Admin actions need --http-admin and the token; live figures from a daemon are shown."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from prometheus_client.parser import text_string_to_metric_families

from metadata import Metadata
from xyleme.dashboard import AdminActions, DashboardSettings, LiveFigures, create_app
from xyleme.dashboard.live import LiveHistory
from xyleme.status import save_live_status

TOKEN = "s3cret-token-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Answer:
    message: str
    ok: bool = True


class FakeDaemon:
    """What the daemon hands the dashboard: live figures and the command target's methods."""

    def __init__(self) -> None:
        self.paused = False
        self.seeds: list[str] = []
        self.fetched = 0

    def live_figures(self):
        self.fetched += 10
        return {
            "fetched": self.fetched,
            "errors": 1,
            "queues": {0: 2, 1: 30, 3: 400},
            "paused": self.paused,
        }

    async def set_paused(self, paused: bool) -> Answer:  # a coroutine, like the daemon's
        self.paused = paused
        return Answer("fetching paused" if paused else "fetching running")

    def add_seeds(self, urls: list[str]) -> Answer:
        self.seeds.extend(urls)
        return Answer(f"{len(urls)} seed(s) added")


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    return tmp_path


def test_the_fake_daemon_has_the_shapes_the_dashboard_expects():
    assert isinstance(FakeDaemon(), LiveFigures) and isinstance(FakeDaemon(), AdminActions)


async def test_admin_actions_are_refused_without_http_admin(aiohttp_client, repo):
    daemon = FakeDaemon()
    client = await aiohttp_client(create_app(repo, live=daemon))
    for action in ("pause", "resume", "seeds"):
        response = await client.post(f"/api/admin/{action}", headers=BEARER, json={})
        assert response.status == 403
        assert "disabled" in (await response.json())["error"]
    assert not daemon.paused and daemon.seeds == []


@pytest.mark.parametrize("token", ["", "wrong-token-123", TOKEN + "x"])
async def test_admin_actions_need_the_right_token(aiohttp_client, repo, token):
    daemon = FakeDaemon()
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN, live=daemon))
    response = await client.post("/api/admin/pause", data={"token": token})
    assert response.status == 403
    assert not daemon.paused


async def test_admin_actions_with_the_token(aiohttp_client, repo):
    daemon = FakeDaemon()
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN, live=daemon))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    response = await client.post("/api/admin/pause", headers=headers)
    assert response.status == 200 and (await response.json())["message"] == "fetching paused"
    assert daemon.paused
    response = await client.post("/api/admin/resume", data={"token": TOKEN})
    assert response.status == 200 and not daemon.paused
    response = await client.post(
        "/api/admin/seeds", data={"token": TOKEN, "urls": "http://a.test/ http://b.test/"}
    )
    assert response.status == 200 and daemon.seeds == ["http://a.test/", "http://b.test/"]


@pytest.mark.parametrize("body", [{"urls": []}, {"urls": [1, 2]}, {"urls": ["x" * 3000]}, {}])
async def test_bad_seed_requests_are_400(aiohttp_client, repo, body):
    daemon = FakeDaemon()
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN, live=daemon))
    response = await client.post("/api/admin/seeds", headers=BEARER, json=body)
    assert response.status == 400
    assert daemon.seeds == []


async def test_admin_without_a_daemon_says_so(aiohttp_client, repo):
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN))
    response = await client.post("/api/admin/pause", headers=BEARER, json={})
    assert response.status == 503
    assert "no daemon" in (await response.json())["error"]


async def test_reads_are_not_admin_actions(aiohttp_client, repo):
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN))
    assert (await client.post("/api/status")).status == 405
    assert (await client.get("/api/admin/pause")).status == 405


def test_short_tokens_are_refused(repo):
    with pytest.raises(ValueError, match="8 characters"):
        create_app(repo, admin_token="short")


async def test_live_figures_appear_in_status_overview_and_metrics(aiohttp_client, repo):
    daemon = FakeDaemon()
    settings = DashboardSettings(live_sample_seconds=0.01)
    client = await aiohttp_client(create_app(repo, live=daemon, settings=settings))
    for _ in range(3000):  # until two samples give a rate; at least 30 s, a deadline
        live = (await (await client.get("/api/status")).json())["live"]
        if len(live.get("rates", {}).get("fetch_rate", [])) >= 2:
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail(f"fewer than two live samples in 30 s: {live}")
    assert live["queues"] == {"0": 2, "1": 30, "3": 400}
    assert all(rate > 0 for rate in live["rates"]["fetch_rate"])
    text = await (await client.get("/")).text()
    assert 'id="queue-3">400<' in text and "Fetch rate and errors" in text
    families = {
        f.name: f
        for f in text_string_to_metric_families(await (await client.get("/metrics")).text())
    }
    queues = {s.labels["level"]: s.value for s in families["xyleme_queue_requests"].samples}
    assert queues == {"0": 2.0, "1": 30.0, "3": 400.0}


def test_live_history_rates_between_samples():
    class Counter:
        fetched = 0

        def live_figures(self):  # errors by kind, as the crawler counts them
            by_kind = {"dns": self.fetched // 10 - self.fetched // 20, "http": self.fetched // 20}
            return {"fetched": self.fetched, "errors": by_kind}

    source = Counter()
    history = LiveHistory(source, keep=3)
    for second, fetched in enumerate([0, 50, 150, 300]):
        source.fetched = fetched
        history.sample(now=float(second))
    rates = history.rates()  # the first sample fell out (keep=3)
    assert rates == {"at": [2.0, 3.0], "fetch_rate": [100.0, 150.0], "error_rate": [10.0, 15.0]}


async def test_standalone_overview_shows_the_daemons_last_checkpoint(aiohttp_client, repo):
    with Metadata.open(repo / "metadata.db") as md:
        save_live_status(
            md,
            {
                "at": 1_767_225_600.0,
                "fetch_rate": 12.5,
                "fetched": 300,
                "queues": {"1": 7, "3": 90},
                "errors": {"dns": 1},
            },
        )
    client = await aiohttp_client(create_app(repo))
    status = await (await client.get("/api/status")).json()
    assert status["live"] is None
    assert status["daemon"]["pid"] is None and status["daemon"]["checkpoint"]["fetched"] == 300
    text = await (await client.get("/")).text()
    assert 'id="checkpoint-queue-3">90<' in text and 'id="checkpoint-rate">12.5<' in text
    assert "is not running" in text
