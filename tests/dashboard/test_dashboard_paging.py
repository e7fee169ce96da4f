"""Issue 17: every list of the JSON API pages with ``limit`` and an opaque keyset ``cursor``.

The tests enumerate the app's routes, so a new ``/api/`` endpoint fails here until it is
given sample parameters below, and then until its answer is bounded: with ``limit=1`` and
every size setting at 3, no array in any answer may hold more than 4 items on a repository
of about a hundred pages. Each paged list is then walked cursor by cursor and compared with
one large page.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from click.testing import CliRunner

from metadata import Metadata
from tests.dashboard_fixtures import built_repository
from xyleme.cli import cli as cli_group
from xyleme.dashboard import DashboardSettings, create_app
from xyleme.dashboard.pagelists import LISTS
from xyleme.dashboard.paging import decode_cursor, encode_cursor, paged_lists
from xyleme.dashboard.params import InputError

SMALL = DashboardSettings(
    top_pages=3,
    page_size=3,
    due_units=3,
    growth_points=3,
    histogram_bins=3,
    distribution_points=3,
    max_neighbours=3,
)
BOUND = 4  # histogram_bins + 1 edges: the longest fixed-size array
SAMPLES: dict[str, list[dict[str, str]]] = {
    "/api/status": [{}],
    "/api/schedule": [{}, {"q": "site0"}],
    "/api/rankings": [{}],
    "/api/page": [{"id": "1"}],
    "/api/page/{list}": [{"list": name, "id": "1"} for name in LISTS],
    "/api/query": [{"xpath": "name(/*)"}],
    "/api/hosts": [{}],
    "/api/urls": [
        {"status": "read"},
        {"status": "unread"},
        {"status": "failed"},
        {"status": "rejected"},
        {"status": "redirect"},
    ],
}
"""Parameters each GET route under /api/ is exercised with (``list`` fills the path)."""


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return built_repository(tmp_path_factory, "paging")


@pytest.fixture
async def client(aiohttp_client, repo):
    return await aiohttp_client(create_app(repo, settings=SMALL))


def api_routes(app) -> dict[str, Any]:
    """Every GET route under /api/: its path and handler."""
    return {
        route.resource.canonical: route.handler
        for route in app.router.routes()
        if route.method == "GET" and route.resource.canonical.startswith("/api/")
    }


def url_of(path: str, params: dict[str, str], **extra: Any) -> tuple[str, dict[str, str]]:
    params = {**params, **{k: str(v) for k, v in extra.items()}}
    if "{list}" in path:
        path = path.replace("{list}", params.pop("list"))
    return path, params


async def get(client, path: str, params: dict[str, str], status: int = 200) -> dict:
    response = await client.get(path, params=params)
    assert response.status == status, (path, params, await response.text())
    return await response.json()


def arrays(value: Any, where: str = "") -> list[tuple[str, int]]:
    """Every array in a JSON value, with its place and length."""
    if isinstance(value, list):
        return [(where, len(value))] + [
            found for i, item in enumerate(value) for found in arrays(item, f"{where}[{i}]")
        ]
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in arrays(v, f"{where}.{k}")]
    return []


def holder(answer: dict, dotted: str) -> dict:
    """The object holding the list ``dotted`` (``a.b``: list ``b`` of ``a``) and its
    ``next_cursor``; empty when the answer has no such list."""
    *parents, _ = dotted.split(".")
    for parent in parents:
        answer = answer.get(parent) or {}
    return answer


def lists_in(answer: dict, declared: tuple[str, ...]) -> list[tuple[dict, str, str]]:
    """``(holder, key, dotted)`` of each declared list present in the answer."""
    found = []
    for dotted in declared:
        key = dotted.split(".")[-1]
        if key in holder(answer, dotted):
            found.append((holder(answer, dotted), key, dotted))
    return found


async def test_every_api_route_is_exercised_here(aiohttp_client, repo):
    client = await aiohttp_client(create_app(repo, settings=SMALL))
    missing = set(api_routes(client.server.app)) - set(SAMPLES)
    assert not missing, f"give these routes sample parameters in SAMPLES: {missing}"


async def test_no_answer_holds_an_unbounded_list(client):
    for path in api_routes(client.server.app):
        for params in SAMPLES[path]:
            answer = await get(client, *url_of(path, params, limit=1))
            too_long = [(where, n) for where, n in arrays(answer) if n > BOUND]
            assert not too_long, (path, params, too_long)


async def test_every_list_of_a_paged_route_honours_limit(client):
    paged = 0
    for path, handler in api_routes(client.server.app).items():
        for params in SAMPLES[path]:
            answer = await get(client, *url_of(path, params, limit=1))
            for found, key, dotted in lists_in(answer, paged_lists(handler)):
                paged += 1
                assert len(found[key]) <= 1, (path, dotted)
                assert "next_cursor" in found, (path, dotted)
    assert paged >= 16  # schedule ×2, three rankings, four page lists, query, hosts, urls ×5


async def walk(client, path: str, params: dict[str, str], dotted: str) -> list:
    """Every row of one list, two at a time by following ``next_cursor`` (with a bound on
    the number of pages, so a cursor that loops fails instead of hanging)."""
    rows: list = []
    cursor, key = None, dotted.split(".")[-1]
    for _ in range(500):
        extra = {"limit": 2} if cursor is None else {"limit": 2, "cursor": cursor}
        page = holder(await get(client, *url_of(path, params, **extra)), dotted)
        assert len(page[key]) <= 2
        rows.extend(page[key])
        cursor = page["next_cursor"]
        if cursor is None:
            return rows
    pytest.fail(f"{path} {key}: still a next_cursor after 500 pages")


async def test_following_the_cursors_gives_every_row_once_in_order(client):
    walked = 0  # lists of more than one page
    for path, handler in api_routes(client.server.app).items():
        for params in SAMPLES[path]:
            whole = await get(client, *url_of(path, params, limit=500))
            for found, key, dotted in lists_in(whole, paged_lists(handler)):
                assert found["next_cursor"] is None, (path, dotted)
                rows = await walk(client, path, params, dotted)
                assert rows == found[key], (path, params, dotted)
                walked += len(rows) > 2
    assert walked >= 8  # all but the lists of page 1 with at most two rows


async def test_rankings_continue_their_rank_numbers(client):
    first = await get(client, "/api/rankings", {"limit": "2"})
    cursor = first["opic"]["next_cursor"]
    second = await get(client, "/api/rankings", {"limit": "2", "cursor": cursor})
    assert set(second) >= {"opic"} and "xml_importance" not in second
    assert [page["rank"] for page in second["opic"]["pages"]] == [3, 4]


async def test_schedule_with_a_small_limit_is_small(aiohttp_client, repo):
    client = await aiohttp_client(create_app(repo))  # the default settings
    response = await client.get("/api/schedule", params={"limit": "2"})
    body = await response.read()
    assert response.status == 200 and len(body) < 8_000, len(body)
    assert len(json.loads(body)["pages"]) == 2


BAD = ["limit=0", "limit=501", "limit=two", "limit=-1", "cursor=not-a-cursor", "cursor=%25"]


async def test_bad_limits_and_cursors_are_400_with_a_message(aiohttp_client, repo):
    client = await aiohttp_client(create_app(repo))
    other = encode_cursor("elsewhere", (1,))
    for path, handler in api_routes(client.server.app).items():
        if not paged_lists(handler):
            continue
        for bad in [*BAD, f"cursor={other}"]:
            target, params = url_of(path, SAMPLES[path][0])
            query = "&".join([*(f"{k}={v}" for k, v in params.items()), bad])
            response = await client.get(f"{target}?{query}")
            assert response.status == 400, (path, bad)
            assert (await response.json())["error"], (path, bad)


async def test_a_cursor_of_another_list_or_with_an_offset_is_refused(client):
    hosts = await get(client, "/api/hosts", {"limit": "1"})
    answer = await get(client, "/api/schedule", {"cursor": hosts["next_cursor"]}, status=400)
    assert "cursor" in answer["error"]
    schedule = await get(client, "/api/schedule", {"limit": "1"})
    both = {"cursor": schedule["next_cursor"], "offset": "1"}
    assert "not both" in (await get(client, "/api/schedule", both, status=400))["error"]


def test_cursors_round_trip_and_check_their_types():
    cursor = encode_cursor("schedule", (1767571200.5, 42))
    assert cursor.isascii() and "=" not in cursor
    assert decode_cursor(cursor, ["schedule"], [float, int]) == ("schedule", (1767571200.5, 42))
    for types in ([int, int], [float], [float, int, int]):
        with pytest.raises(InputError):
            decode_cursor(cursor, ["schedule"], types)
    with pytest.raises(InputError):
        decode_cursor(encode_cursor("schedule", (True, 1)), ["schedule"], [float, int])


async def test_api_urls_rows_are_the_clis(client, repo):
    for status in ("read", "rejected", "failed"):
        rows = await walk(client, "/api/urls", {"status": status}, "urls")
        cli = CliRunner().invoke(
            cli_group, ["--repo", str(repo), "urls", "--status", status, "--json", "--limit", "0"]
        )
        assert cli.exit_code == 0, cli.output
        assert rows == json.loads(cli.stdout), status
        assert rows or status == "rejected", status  # this web refuses nothing


async def test_a_cursor_holds_while_newer_rows_arrive(aiohttp_client, tmp_path):
    """Newest first, so rows written between two requests land before the cursor: the next
    page neither repeats a row (as an offset would) nor skips one."""
    with Metadata.create(tmp_path / "metadata.db") as md:
        md.reject([f"http://a.test/{i}" for i in range(5)], "out of scope: a.test")
    client = await aiohttp_client(create_app(tmp_path))
    first = await get(client, "/api/urls", {"status": "rejected", "limit": "2"})
    assert [row["url"] for row in first["urls"]] == ["http://a.test/4", "http://a.test/3"]
    with Metadata.open(tmp_path / "metadata.db") as md:
        md.reject(["http://a.test/new"], "out of scope: a.test")
    params = {"status": "rejected", "limit": "5", "cursor": first["next_cursor"]}
    second = await get(client, "/api/urls", params)
    assert [row["url"] for row in second["urls"]] == [f"http://a.test/{i}" for i in (2, 1, 0)]
    assert second["next_cursor"] is None and second["total"] == 6


async def test_api_urls_refuses_what_xyleme_urls_refuses(client):
    for params in ({}, {"status": "nope"}, {"status": "read", "reason": "HTTP"}):
        assert "status" in (await get(client, "/api/urls", params, status=400))["error"]
    error = await get(
        client,
        "/api/urls",
        {"status": "failed", "cursor": encode_cursor("urls-read", (1.0, 1))},
        400,
    )
    assert "cursor" in error["error"]


async def test_the_rankings_view_links_to_the_rest_of_each_table(client):
    page = await (await client.get("/rankings", params={"limit": "2"})).text()
    link = re.search(r'id="more-opic" href="([^"]+)"', page)
    assert link, "no link to more of the OPIC table"
    more = await client.get(html.unescape(link[1]))
    text = await more.text()
    assert more.status == 200 and 'id="table-opic"' in text
    assert 'id="table-xml_importance"' not in text
    assert re.search(r'<td class="num">3</td>', text)
