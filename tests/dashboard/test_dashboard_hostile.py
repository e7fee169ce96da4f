"""Issue 18, fault 6: the admin actions under hostile requests. The token is checked before
the body is read, only the Bearer scheme is accepted, and bodies are capped in size and
nesting: no request gets a 500."""

from __future__ import annotations

import pytest

from metadata import Metadata
from tests.dashboard.test_dashboard_admin import FakeDaemon
from xyleme.dashboard import DashboardSettings, create_app

TOKEN = "s3cret-token-for-tests"
NESTED = b"[" * 30_000 + b"]" * 30_000  # under the size cap; json.loads recursed on it


@pytest.fixture
def repo(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    return tmp_path


@pytest.fixture
async def admin(aiohttp_client, repo):
    daemon = FakeDaemon()
    client = await aiohttp_client(create_app(repo, admin_token=TOKEN, live=daemon))
    return client, daemon


def json_headers(authorization: str | None = None) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    return headers


async def test_a_deeply_nested_body_without_the_token_is_refused_unread(admin):
    client, daemon = admin
    response = await client.post("/api/admin/seeds", data=NESTED, headers=json_headers())
    assert response.status == 403
    assert "Bearer" in (await response.json())["error"]
    assert daemon.seeds == []


async def test_a_deeply_nested_body_with_the_token_is_a_400(admin):
    client, daemon = admin
    headers = json_headers(f"Bearer {TOKEN}")
    for body in (NESTED, b'{"urls": ' + NESTED + b"}"):
        response = await client.post("/api/admin/seeds", data=body, headers=headers)
        assert response.status == 400, await response.text()
        assert "recursion limit" in (await response.json())["error"]
    assert daemon.seeds == []


@pytest.mark.parametrize("authorization", [TOKEN, f"Basic {TOKEN}", f"Token {TOKEN}", "Bearer"])
async def test_only_the_bearer_scheme_is_accepted(admin, authorization):
    client, daemon = admin
    response = await client.post("/api/admin/pause", headers={"Authorization": authorization})
    assert response.status == 403
    assert not daemon.paused


async def test_the_scheme_is_case_insensitive(admin):
    client, daemon = admin
    response = await client.post("/api/admin/pause", headers={"Authorization": f"bearer {TOKEN}"})
    assert response.status == 200 and daemon.paused


async def test_a_token_inside_a_json_body_is_not_accepted(admin):
    client, daemon = admin
    response = await client.post("/api/admin/pause", json={"token": TOKEN})
    assert response.status == 403
    assert not daemon.paused


async def test_a_body_over_the_size_cap_is_a_413(aiohttp_client, repo):
    daemon = FakeDaemon()
    settings = DashboardSettings(max_body_bytes=1024)
    client = await aiohttp_client(
        create_app(repo, admin_token=TOKEN, live=daemon, settings=settings)
    )
    body = {"urls": [f"http://a.test/{n}" for n in range(200)]}
    response = await client.post(
        "/api/admin/seeds", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status == 413
    assert daemon.seeds == []


async def test_unknown_fields_of_a_json_body_are_named(admin):
    client, daemon = admin
    response = await client.post(
        "/api/admin/seeds",
        json={"urls": ["http://a.test/"], "extra": 1},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert response.status == 400
    assert "extra" in (await response.json())["error"]
    assert daemon.seeds == []
