"""The dashboard's JSON API and views against a repository made by a short simulated-web run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from metadata import FetchResult, Metadata, PageType
from tests.dashboard_fixtures import built_repository
from xyleme.cli import cli
from xyleme.dashboard import DashboardSettings, create_app

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return built_repository(tmp_path_factory, "dashboard")


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


def cli_schedule(repo, now: float, units: int, top: int) -> dict:
    """What ``xyleme schedule`` says at the same simulated time: its ``--summary --json``
    figures as ``repository``, its first ``top`` pages (``--json``) as ``pages``."""

    def ask(*args: str) -> object:
        base = ["--repo", str(repo), "schedule", "--now", repr(now), "--units", str(units)]
        result = CliRunner().invoke(cli, [*base, *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    pages = ask("--json", "--limit", str(top)) if top else []
    return {"repository": ask("--summary", "--json"), "pages": pages}


async def test_status_policy_is_the_refresh_modules(client, repo):
    status = await get_json(client, "/api/status")
    expected = cli_schedule(repo, status["now"], DashboardSettings().due_units, 0)["repository"]
    policy = status["policy"]
    assert policy["bandwidth_G"] == 40.0 and policy["discovery_share_theta"] == 0.1
    for key in ("S", "K", "omega", "omega_without_floor", "pages_at_floor", "due_now"):
        assert policy[key] == pytest.approx(expected[key])
    assert policy["S"] > 0


# ---------------------------------------------------------------------- Refresh schedule


async def test_schedule_table_is_soonest_first_and_paginated(client, repo):
    first = await get_json(client, "/api/schedule?limit=10")
    second = await get_json(client, "/api/schedule?limit=10&offset=10")
    rows = first["pages"] + second["pages"]
    times = [row["next_refresh"] for row in rows]
    assert times == sorted(times) and len(rows) == 20
    expected = cli_schedule(repo, first["now"], DashboardSettings().due_units, 20)
    assert first["due_per_unit"] == expected["repository"]["due_per_unit"]
    planned = [page for page in expected["pages"] if page["next_refresh"] is not None]
    assert first["matched"] >= len(planned) == 20
    for row, page in zip(rows, planned, strict=True):
        assert row["url"] == page["url"]
        for key in ("next_refresh", "interval_units", "change_rate_per_unit", "r"):
            assert row[key] == pytest.approx(page[key])
        assert row["method"] == page["method"]


async def test_schedule_search_matches_urls(client):
    everything = await get_json(client, "/api/schedule?limit=500")
    answer = await get_json(client, "/api/schedule?q=SITE1.simweb&limit=500")
    expected = [row for row in everything["pages"] if "site1.simweb" in row["url"]]
    assert answer["matched"] == len(expected) > 0
    assert answer["pages"] == expected


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
    ids, importance = md.scores("importance")  # the pages of the link matrix
    view = md.refresh_view()
    types = view["type"][np.isin(view["id"], ids)]
    best_xml = max(importance[types == 1])
    assert values[0] == pytest.approx(best_xml)
    assert all(page["type"] == "HTML" for page in answer["html_interest"]["pages"])
    opic = answer["opic"]  # the distribution: log-spaced ranks of every ranked page
    assert opic["distribution_ranks"][0] == 1
    assert opic["distribution_ranks"][-1] == opic["ranked_pages"]
    assert opic["distribution"] == sorted(opic["distribution"], reverse=True)
    assert opic["distribution"][0] == opic["pages"][0]["opic_importance"]
    made = answer["provenance"]
    assert made["importance"]["converged"] and made["interest"]["converged"]
    assert made["importance"]["figure_name"] == "l1_error_bound"


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
    schedule = await get_json(client, "/api/schedule?q=site0.simweb.test/&limit=500")
    row = next(r for r in schedule["pages"] if r["url_id"] == 1)
    assert by_url["schedule"] == {k: row[k] for k in by_url["schedule"]}


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
    for url in (f"http://a.test/{HOSTILE}", f"javascript:{HOSTILE}", f"http://{HOSTILE}/"):
        response = await client.get("/page", params={"url": url})
        text = await response.text()
        assert response.status == 404
        assert "<script>" not in text
    assert "&lt;script&gt;" in text  # the invalid URL is echoed, escaped


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
    due = [s.value for s in families["xyleme_refresh_due_per_unit"].samples]
    assert due == (await get_json(client, "/api/schedule"))["due_per_unit"]


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


async def test_two_reads_at_the_same_instant_still_give_a_schedule(aiohttp_client, tmp_path):
    """A page fetched as a link and as a dependency at once on a manual clock: the refresh
    module counts one access, and the schedule is computed."""
    with Metadata.create(tmp_path / "metadata.db") as md:
        (page,) = md.ids_for(["http://a.test/"])
        for md5 in ("a" * 32, "a" * 32):
            md.record_fetch(FetchResult(page, 1_000.0, PageType.HTML, 200, md5=md5))
    client = await aiohttp_client(create_app(tmp_path))
    answer = await get_json(client, "/api/schedule")
    assert [row["url"] for row in answer["pages"]] == ["http://a.test/"]


async def test_a_schedule_the_refresh_module_refuses_is_a_message(
    aiohttp_client, tmp_path, monkeypatch
):
    """When the refresh module refuses the history, the schedule views answer 503 with its
    reason and the other views are unharmed."""

    def refuse(*args, **kwargs):
        raise ValueError("a history the estimators refuse")

    monkeypatch.setattr("xyleme.jobs.schedule.schedule_report", refuse)
    with Metadata.create(tmp_path / "metadata.db") as md:
        (page,) = md.ids_for(["http://a.test/"])
        md.record_fetch(FetchResult(page, 1_000.0, PageType.HTML, 200, md5="a" * 32))
    client = await aiohttp_client(create_app(tmp_path))
    answer = await get_json(client, "/api/schedule", status=503)
    assert "refresh schedule cannot be computed" in answer["error"]
    status = await get_json(client, "/api/status")
    assert "cannot be computed" in status["policy"]["error"] and status["pages"]["HTML"] == 1
    assert (await get_json(client, "/api/page?id=1"))["schedule"] is None
    assert "cannot be computed" in await (await client.get("/")).text()
    assert (await client.get("/schedule")).status == 503
    assert (await client.get("/metrics")).status == 200
