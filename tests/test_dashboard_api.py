"""The dashboard's JSON API and views against a repository made by a short simulated-web run."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from metadata import Metadata, PageType
from tests.dashboard_fixtures import POLICY, short_simweb_run
from xyleme.dashboard import DashboardSettings, create_app
from xyleme.dashboard.figures import refresh_weights

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = tmp_path_factory.mktemp("dashboard") / "repo"
    asyncio.run(short_simweb_run(path))
    return path


@pytest.fixture
def md(repo):
    with Metadata.open(repo / "metadata.db", readonly=True) as metadata:
        yield metadata


@pytest.fixture
async def client(aiohttp_client, repo):
    return await aiohttp_client(create_app(repo))


async def get_json(client, path, status=200):
    response = await client.get(path)
    assert response.status == status, await response.text()
    return await response.json()


# ---------------------------------------------------------------------- Overview


async def test_status_counts_pages_by_type(client, md):
    status = await get_json(client, "/api/status")
    expected = {kind.value: count for kind, count in md.count_by_type().items()}
    assert status["pages"] == expected
    assert status["pages_total"] == sum(expected.values())
    assert status["live"] is None
    assert status["growth"]["discovered"][-1] == status["pages_total"]
    read = sum(1 for i in range(1, md.max_url_id() + 1) if md.page(i).first_access is not None)
    assert status["growth"]["read"][-1] == read


async def test_status_policy_follows_the_sqrt_rule(client, md):
    policy = (await get_json(client, "/api/status"))["policy"]
    view = md.refresh_view()
    weight = refresh_weights(view) * view["change_rate"] * POLICY.time_unit_s
    s = np.sqrt(weight[np.isfinite(weight) & (weight > 0)]).sum()
    g_r = 0.9 * 40.0
    assert policy["G"] == 40.0 and policy["theta"] == 0.1 and policy["G_r"] == pytest.approx(g_r)
    assert policy["S"] == pytest.approx(s)
    assert policy["K"] == pytest.approx(s / g_r)
    assert policy["omega"] == pytest.approx(s * s / (2 * g_r))


def test_refresh_weights_normalise_each_type_to_mean_one():
    view = {
        "type": np.array([0, 0, 1, 1, 5], dtype=np.int8),  # HTML, HTML, XML, XML, UNKNOWN
        "importance": np.array([9.0, 9.0, 1.0, 3.0, 9.0]),
        "interest": np.array([1.0, np.nan, 9.0, 9.0, 9.0]),
    }
    assert refresh_weights(view).tolist() == [1.0, 1.0, 0.5, 1.5, 0.0]


# ---------------------------------------------------------------------- Refresh schedule


async def test_schedule_table_is_soonest_first_and_paginated(client, md):
    first = await get_json(client, "/api/schedule?limit=10")
    second = await get_json(client, "/api/schedule?limit=10&offset=10")
    rows = first["pages"] + second["pages"]
    times = [row["next_refresh"] for row in rows]
    assert times == sorted(times) and len(rows) == 20
    planned = np.isfinite(md.refresh_view()["next_refresh"]).sum()
    assert first["matched"] == planned
    row = rows[3]
    record = md.page(row["url_id"])
    assert row["url"] == record.url
    assert row["next_refresh"] == pytest.approx(record.next_refresh)
    assert row["interval_units"] == pytest.approx(
        (record.next_refresh - record.last_access) / POLICY.time_unit_s
    )
    assert row["change_rate_per_unit"] == pytest.approx(record.change_rate * 86_400)


async def test_schedule_search_matches_urls(client, md):
    answer = await get_json(client, "/api/schedule?q=SITE1.simweb&limit=500")
    view = md.refresh_view()
    planned = view["id"][np.isfinite(view["next_refresh"])].tolist()
    expected = [url for url in md.urls_of(planned) if "site1.simweb" in url]
    assert answer["matched"] == len(expected) > 0
    assert sorted(row["url"] for row in answer["pages"]) == sorted(expected)


async def test_due_per_unit_counts_every_recurrence(client, md):
    answer = await get_json(client, "/api/schedule")
    assert len(answer["due_per_unit"]) == DashboardSettings().due_units
    view = md.refresh_view()
    now, unit = answer["now"], POLICY.time_unit_s
    planned = np.isfinite(view["next_refresh"])
    nxt, last = view["next_refresh"][planned], view["last_access"][planned]
    brute = [0] * len(answer["due_per_unit"])
    for when, step in zip(np.maximum(nxt, now).tolist(), (nxt - last).tolist(), strict=True):
        while when < now + len(brute) * unit:
            brute[int((when - now) // unit)] += 1
            when += step
    assert answer["due_per_unit"] == brute


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=100000", "offset=-1", "limit=ten", "q=" + "x" * 3000]
)
async def test_bad_schedule_parameters_are_400_with_a_message(client, query):
    answer = await get_json(client, f"/api/schedule?{query}", status=400)
    assert answer["error"]


# ---------------------------------------------------------------------- Rankings


async def test_rankings_list_the_best_pages_of_each_kind(client, md):
    answer = await get_json(client, "/api/rankings?top=5")
    xml = answer["xml_importance"]["pages"]
    assert [page["rank"] for page in xml] == [1, 2, 3, 4, 5]
    assert all(page["type"] == "XML" for page in xml)
    values = [page["importance"] for page in xml]
    assert values == sorted(values, reverse=True)
    _ids, importance = md.scores("importance")
    types = md.refresh_view()["type"]
    best_xml = max(importance[types == 1])
    assert values[0] == pytest.approx(best_xml)
    assert all(page["type"] == "HTML" for page in answer["html_interest"]["pages"])
    opic = answer["opic"]["distribution"]
    assert sum(opic) == pytest.approx(1.0)  # OPIC's estimates sum to 1
    assert opic == sorted(opic, reverse=True)


# ---------------------------------------------------------------------- Page view


async def test_page_by_url_and_by_id_agree_with_the_metadata(client, md):
    url = md.url_of(1)
    by_url = await get_json(client, f"/api/page?url={url}")
    by_id = await get_json(client, "/api/page?id=1")
    assert by_url == by_id
    assert by_url["page"]["url"] == url
    observations = md.observations(1)
    assert [o["changed"] for o in by_url["observations"]] == [o.changed for o in observations]
    assert [c["url_id"] for c in by_url["children"]] == md.children(1).tolist()
    assert [p["url_id"] for p in by_url["parents"]] == md.parents(1).tolist()


async def test_xml_page_shows_its_versions_and_validity(client, md):
    view = md.refresh_view()
    xml_ids = view["id"][view["type"] == 1].tolist()
    answers = [await get_json(client, f"/api/page?id={i}") for i in xml_ids]
    stored = [a for a in answers if a["versions"]]
    assert stored, "the run stored XML documents"
    version = stored[0]["versions"][-1]
    assert version["validity"]["dtd"] in ("valid", "invalid", "none")
    assert version["md5"] == md.page(stored[0]["page"]["url_id"]).md5


async def test_unknown_and_invalid_pages_are_404_not_500(client):
    for query in ("url=http://nowhere.test/", "url=javascript:alert(1)", "id=999999"):
        answer = await get_json(client, f"/api/page?{query}", status=404)
        assert "no page" in answer["error"]
    assert "say which page" in (await get_json(client, "/api/page", status=400))["error"]


async def test_hostile_url_is_escaped_in_the_page_view(client):
    response = await client.get("/page", params={"url": f"http://a.test/{HOSTILE}"})
    text = await response.text()
    assert response.status == 404
    assert "<script>" not in text
    assert "&lt;script&gt;" in text


# ---------------------------------------------------------------------- Query


async def test_query_pages_through_results(client):
    both = await get_json(client, "/api/query?xpath=count(//*)&limit=2")
    assert len(both["results"]) == 2 and both["more"]
    second = await get_json(client, "/api/query?xpath=count(//*)&limit=1&offset=1")
    assert second["results"] == both["results"][1:]
    assert float(both["results"][0]["value"]) > 0


async def test_bad_xpath_is_a_message_not_a_500(client):
    answer = await get_json(client, "/api/query?xpath=//item[", status=400)
    assert "invalid XPath" in answer["error"]
    response = await client.get("/query", params={"xpath": f"//x[{HOSTILE}"})
    text = await response.text()
    assert response.status == 400
    assert "invalid XPath" in text
    assert "<script>" not in text


# ---------------------------------------------------------------------- HTML views


@pytest.mark.parametrize("path", ["/", "/schedule", "/rankings", "/page?id=1", "/query"])
async def test_every_view_renders_with_security_headers(client, path):
    response = await client.get(path)
    assert response.status == 200
    assert response.content_type == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    text = await response.text()
    assert "<script" not in text and "http://" not in text.split("<main>")[0]


async def test_search_text_is_escaped_in_the_schedule_view(client):
    response = await client.get("/schedule", params={"q": HOSTILE})
    text = await response.text()
    assert response.status == 200
    assert "<script>" not in text and "&lt;script&gt;" in text


# ---------------------------------------------------------------------- /metrics


async def test_metrics_expose_pages_and_policy(client, md):
    response = await client.get("/metrics")
    assert response.status == 200
    families = {f.name: f for f in text_string_to_metric_families(await response.text())}
    pages = {s.labels["type"]: s.value for s in families["xyleme_pages"].samples}
    assert pages == {kind.value: float(n) for kind, n in md.count_by_type().items()}
    status = await get_json(client, "/api/status")
    assert families["xyleme_refresh_s"].samples[0].value == pytest.approx(status["policy"]["S"])
    omega = families["xyleme_obsolescence_omega"].samples[0].value
    assert omega == pytest.approx(status["policy"]["omega"])
    assert not math.isnan(families["xyleme_refresh_due_this_unit"].samples[0].value)


# ---------------------------------------------------------------------- empty repository


async def test_an_empty_repository_shows_zeros(aiohttp_client, tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    client = await aiohttp_client(create_app(tmp_path))
    status = await get_json(client, "/api/status")
    assert status["pages_total"] == 0 and status["pages"][PageType.HTML.value] == 0
    assert (await get_json(client, "/api/schedule"))["pages"] == []
    assert (await get_json(client, "/api/query?xpath=//a"))["results"] == []
    for path in ("/", "/schedule", "/rankings", "/query?xpath=//a"):
        assert (await client.get(path)).status == 200
