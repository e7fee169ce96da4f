"""`xyleme urls` and `xyleme hosts` on a repository a real crawl filled through the daemon.

A loopback site of three hosts (tests/crawler_site.py): robots.txt with a Crawl-delay and a
Disallow, a 404, a 500, a link out of scope; the daemon's crawler reads it until idle and the
daemon's checkpoint writes the per-host snapshot the CLI reports.
"""

from __future__ import annotations

import csv
import io
import json
import re
import time

import pytest
from click.testing import CliRunner

from metadata import LoadStatus, ManualClock, Metadata
from metadata.reports import HOST_FIELDS, STATUSES, WITH_REASONS
from tests.crawler_site import Page, SiteResolver
from tests.daemon_fixtures import make_repository
from xyleme.cli import cli, urls
from xyleme.cli.hosts import ANSWERS
from xyleme.config import load_config
from xyleme.crawler import Level
from xyleme.daemon import Daemon
from xyleme.dashboard import create_app

CONFIG = """
[crawler]
scope = ["domain:test:*"]
min_delay = 0.0
max_crawl_delay = 1.0
per_host_concurrency = 2
write_interval = 0.01
"""


def xyleme(repo, *args, columns=200):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
async def crawled(tmp_path, site):
    """A repository holding the crawl of the site, and the site."""
    repo = make_repository(tmp_path / "repo", CONFIG)
    robots = b"User-agent: *\nCrawl-delay: 0.2\nDisallow: /private\n"
    site.add("a.test", "/robots.txt", Page(robots, content_type="text/plain"))
    links = ["/x", "/missing", "/boom", "/private/p"]
    site.html(
        "a.test",
        "/",
        [site.url("a.test", path) for path in links]
        + [site.url("b.test", "/"), site.url("c.test", "/"), "http://out.example/page"],
    )
    site.html("a.test", "/x")
    site.add("a.test", "/boom", Page(b"down", status=500))
    site.html("b.test", "/", [site.url("b.test", "/long/" + "y" * 150)])
    site.html("b.test", "/long/" + "y" * 150)
    site.add("c.test", "/robots.txt", Page(b"down", status=500))  # everything refused
    site.html("c.test", "/")
    daemon = Daemon(
        repo, load_config(repo / "xyleme.toml"), clock=ManualClock(1e9), resolver=SiteResolver()
    )
    daemon.open()
    try:
        daemon.crawler.submit(site.url("a.test", "/"))
        await daemon.crawler.run()
        daemon.checkpoints.write()
    finally:
        daemon.close()
    return repo, site


def by_host(repo) -> dict[str, dict]:
    code, out, _ = xyleme(repo, "hosts", "--json")
    assert code == 0
    return {row["host"]: row for row in json.loads(out)}


async def test_hosts_reports_the_crawl_and_the_crawler_s_snapshot(crawled):
    repo, web = crawled
    hosts = by_host(repo)
    a, b = hosts[web.url("a.test", "")], hosts[web.url("b.test", "")]
    assert list(a) == list(HOST_FIELDS)
    # pages: /, /x read; /missing 404 (dead); /boom 500 (error); /private/p refused by robots;
    # fetches (Heritrix counts them, not pages): robots.txt, /, /x 200; /missing; /boom
    assert (a["pages"], a["read"], a["status_2xx"], a["status_4xx"], a["status_5xx"]) == (
        5,
        2,
        3,
        1,
        1,
    )
    assert (a["robots_refused"], a["errors"], a["dead"], a["network_errors"]) == (1, 2, 1, 0)
    assert a["bytes"] > 0 and a["last_error"] in {"HTTP 500", "HTTP 404", "robots.txt disallows"}
    # the crawler's facts, as of the checkpoint
    assert (a["robots"], a["robots_note"], a["crawl_delay"], a["delay"]) == (
        "rules",
        "/ allowed",
        0.2,
        0.2,
    )
    assert (a["queued"], a["in_flight"], a["budget"]) == (0, 0, 100_000)
    assert a["scouted"] == 4 and 0 <= a["robots_age"] < 60
    assert time.time() - 60 < a["stats_written"] <= time.time()
    assert (b["robots"], b["robots_note"], b["delay"]) == ("no rules", "HTTP 404: no rules", 0.0)
    assert (b["read"], b["status_2xx"], b["status_4xx"]) == (2, 2, 1)  # robots.txt: 404
    c = hosts[web.url("c.test", "")]
    assert (c["robots"], c["robots_note"], c["read"], c["robots_refused"], c["status_5xx"]) == (
        "unreachable",
        "HTTP 500",
        0,
        1,
        1,
    )
    assert c["last_error"] == "robots.txt unreachable (HTTP 500): disallowed, retried later"


async def test_hosts_table_detail_and_formats(crawled):
    repo, web = crawled
    code, out, err = xyleme(repo, "hosts", columns=100)
    assert code == 0 and err == ""
    assert "None" not in out and "rules (/ allowed)" in out and " ago" in out
    code, out, _ = xyleme(repo, "hosts", "a.test")
    assert code == 0
    assert f"host          {web.url('a.test', '')}" in out
    assert "Crawl-delay 0.2 s" in out and "0.2 s between requests" in out
    assert "0 waiting, 0 in flight" in out and "4/100000 pages scouted" in out
    assert "None" not in out
    code, out, err = xyleme(repo, "hosts", "--limit", "1", "--csv", "--sort", "host")
    lines = out.splitlines()
    assert code == 0 and lines[0] == ",".join(HOST_FIELDS) and len(lines) == 2
    assert lines[1].startswith(web.url("a.test", ""))
    assert "1 of 3 hosts shown" in err
    assert xyleme(repo, "hosts", "nowhere.test")[0] == 1


async def test_urls_lists_refusals_and_failures_with_their_reasons(crawled):
    repo, web = crawled
    code, out, _ = xyleme(repo, "urls", "--status", "rejected", "--json")
    rejected = json.loads(out)
    assert code == 0
    assert {"url": "http://out.example/page", "referrer": web.url("a.test", "/")}.items() <= (
        rejected[0].items()
    )
    assert rejected[0]["reason"].startswith("out of scope")
    code, out, _ = xyleme(repo, "urls", "--status", "failed", "--by-reason", "--json")
    groups = {group["reason"]: group["count"] for group in json.loads(out)}
    assert groups == {
        "HTTP 404": 1,
        "HTTP 500": 1,
        "robots.txt disallows": 1,
        "robots.txt unreachable (HTTP 500)": 1,
    }
    code, out, _ = xyleme(repo, "urls", "--status", "dead", "--json")
    (dead,) = json.loads(out)
    assert (dead["url"], dead["status"], dead["reason"], dead["type"]) == (
        web.url("a.test", "/missing"),
        404,
        "HTTP 404",
        "DEAD",
    )
    code, out, _ = xyleme(repo, "urls", "--status", "failed", "--reason", "ROBOTS", "--csv")
    rows = {row["url"]: row for row in csv.DictReader(io.StringIO(out))}
    assert sorted(rows) == [web.url("a.test", "/private/p"), web.url("c.test", "/")]
    row = rows[web.url("a.test", "/private/p")]
    assert (row["reason"], row["status"]) == ("robots.txt disallows", "")
    code, out, _ = xyleme(repo, "urls", "--status", "read", "--host", "b.test", "--json")
    assert sorted(row["url"] for row in json.loads(out)) == sorted(
        [web.url("b.test", "/"), web.url("b.test", "/long/" + "y" * 150)]
    )


async def test_urls_tables_never_cut_a_url_and_say_when_rows_are_hidden(crawled):
    repo, web = crawled
    long_url = web.url("b.test", "/long/" + "y" * 150)
    code, out, err = xyleme(repo, "urls", "--status", "read", "--limit", "1", columns=60)
    assert code == 0 and "…" not in out and "None" not in out
    assert "1 of 4 URLs shown; --limit 4 (or 0) shows them all" in err
    code, out, _ = xyleme(repo, "urls", "--status", "read", "--host", "b.test", columns=60)
    folded = re.findall("y{5,}", out)
    assert long_url not in out and sum(map(len, folded)) == 150  # folded, whole
    code, out, _ = xyleme(repo, "urls", "--status", "read", "--wide", columns=60)
    assert long_url in out  # one line
    code, out, err = xyleme(repo, "urls", "--status", "unread")
    assert (code, out, err) == (0, "", "no URLs\n")


@pytest.mark.parametrize(
    "args",
    [
        ["urls", "--status", "read", "--by-reason"],
        ["urls", "--status", "html", "--reason", "x"],
        ["urls", "--status", "nonsense"],
        ["urls"],
        ["urls", "--status", "error", "--limit", "-1"],
        ["hosts", "--sort", "nonsense"],
    ],
)
def test_bad_input_exits_2(tmp_path, args):
    repo = make_repository(tmp_path / "repo")
    code, _, err = xyleme(repo, *args)
    assert code == 2 and "Traceback" not in err


def test_a_folder_that_is_no_repository_exits_1(tmp_path):
    for args in (["urls", "--status", "error"], ["hosts"]):
        code, _, err = xyleme(tmp_path, *args)
        assert code == 1 and "no such database file" in err


def test_an_empty_repository_lists_nothing(tmp_path):
    repo = make_repository(tmp_path / "repo")
    assert xyleme(repo, "hosts", "--json")[1] == "[]\n"
    assert xyleme(repo, "urls", "--status", "rejected", "--by-reason", "--json")[1] == "[]\n"
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.max_url_id() == 0


def test_the_cli_offers_every_status_of_the_reports():
    assert urls.STATUSES == STATUSES and urls.WITH_REASONS == WITH_REASONS


def test_documents_waiting_for_a_dtd_are_listed_with_what_they_wait_for(tmp_path):
    repo = make_repository(tmp_path / "repo")
    with Metadata.open(repo / "metadata.db") as md:
        doc, dtd, other = md.ids_for(
            ["http://a.test/doc.xml", "http://a.test/doc.dtd", "http://a.test/b.xml"]
        )
        md.set_status(doc, LoadStatus.WAITING_DTD, "http://a.test/doc.dtd", waiting_for=[dtd])
        md.set_status(other, LoadStatus.LOADED, "version 1")
    code, out, _ = xyleme(repo, "urls", "--status", "waiting", "--json")
    (row,) = json.loads(out)
    assert (row["url"], row["reason"]) == (
        "http://a.test/doc.xml",
        "WAITING_DTD: http://a.test/doc.dtd",
    )
    code, out, _ = xyleme(repo, "urls", "--status", "waiting", "--by-reason", "--json")
    assert code == 0 and json.loads(out) == [
        {"reason": "WAITING_DTD", "count": 1, "example": "WAITING_DTD: http://a.test/doc.dtd"}
    ]


async def test_the_dashboard_pages_the_same_host_rows(crawled, aiohttp_client):
    repo, web = crawled
    client = await aiohttp_client(create_app(repo))
    first = await (await client.get("/api/hosts?limit=2")).json()
    assert (first["total"], first["limit"]) == (3, 2)
    assert [row["host"] for row in first["hosts"]][-1] == web.url("b.test", "")
    second = await (
        await client.get("/api/hosts", params={"limit": "2", "cursor": first["next_cursor"]})
    ).json()
    assert second["next_cursor"] is None and len(second["hosts"]) == 1
    served = first["hosts"] + second["hosts"]
    cli_rows = sorted(by_host(repo).values(), key=lambda row: row["host"])
    assert [list(row) for row in served] == [list(HOST_FIELDS)] * 3
    drop = ("stats_written", "robots_age")  # the same snapshot; ages differ by the read time
    assert [{k: v for k, v in row.items() if k not in drop} for row in served] == [
        {k: v for k, v in row.items() if k not in drop} for row in cli_rows
    ]
    assert (await client.get("/api/hosts?limit=0")).status == 400


async def test_hosts_counts_every_fetch_and_the_counts_survive_a_restart(tmp_path, site):
    """One page fetched 3 times with 3 answers (503 tried again, 200, then 500 at a refresh
    by a restarted daemon): the report counts each answer, plus each run's robots.txt; the
    page's last answer alone (500) would say 5xx 1 and 2xx 0."""
    repo = make_repository(tmp_path / "repo", CONFIG)
    site.add("d.test", "/robots.txt", Page(b"User-agent: *\n", content_type="text/plain"))
    answers = iter(
        [
            Page(b"busy", status=503, headers={"Retry-After": "0"}),
            Page(b"<doc/>", content_type="text/xml"),
        ]
    )
    page = site.add("d.test", "/p.xml", lambda request: next(answers, Page(b"x", status=500)))
    for run in range(2):
        daemon = Daemon(
            repo,
            load_config(repo / "xyleme.toml"),
            clock=ManualClock(1e9 + run),
            resolver=SiteResolver(),
        )
        daemon.open()
        try:
            if run == 0:
                daemon.crawler.submit(page)
            else:
                daemon.crawler.submit(daemon.md.id_for(page), Level.REFRESH)
            await daemon.crawler.run()
            daemon.checkpoints.write()
        finally:
            daemon.close()
        d = by_host(repo)[site.url("d.test", "")]
        if run == 0:
            assert (d["status_2xx"], d["status_4xx"], d["status_5xx"]) == (2, 0, 1)
    answers_by_class = tuple(d[name] for name in ANSWERS)
    assert answers_by_class == (3, 0, 0, 2, 0)  # robots.txt x2 + 200; 503 + 500; no network
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.page_by_url(page).status == 500
    code, out, _ = xyleme(repo, "hosts", "d.test")
    assert code == 0 and "2xx 3  3xx 0  4xx 0  5xx 2  network 0" in out
