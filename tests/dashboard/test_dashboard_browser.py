"""The dashboard in a real headless Chromium (Debian's package), served by ``xyleme dashboard``.

Each view of the standalone server is loaded over a repository made by a short simulated-web
run; the figures the page shows are checked against the JSON API, a link leads to a page
view, an XPath query runs, and every view is saved as a screenshot (in a temporary folder;
``XYLEME_SCREENSHOTS=docs/screenshots`` refreshes the documentation's).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.dashboard_fixtures import short_simweb_run
from tests.deadlines import readline_within
from tests.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)",
    ),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``xyleme dashboard`` on a free loopback port, over a freshly run repository."""
    repo = tmp_path_factory.mktemp("browser") / "repo"
    # In a thread of its own: Playwright's sync API runs an event loop in this one once the
    # browser fixture is set up, and asyncio.run refuses to start inside a running loop.
    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, short_simweb_run(repo)).result(timeout=300)
    process = subprocess.Popen(
        [sys.executable, "-m", "xyleme", "--repo", str(repo), "dashboard", "--http", "127.0.0.1:0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        banner = readline_within(process)
        assert " at http://127.0.0.1:" in banner, banner + process.stderr.read()
        yield banner.split(" at ", 1)[1].split(" ", 1)[0].rstrip("/")
    finally:
        process.terminate()
        assert process.wait(timeout=20) == 0


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = os.environ.get("XYLEME_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    """A fresh tab that records every request it makes (all must stay on the dashboard)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    requested: list[str] = []
    tab.on("request", lambda request: requested.append(request.url))
    yield tab
    context.close()
    assert requested and all(url.startswith(server + "/") for url in requested), requested


def api(server: str, path: str, **params) -> dict:
    query = f"?{urllib.parse.urlencode(params)}" if params else ""
    with urllib.request.urlopen(f"{server}{path}{query}", timeout=20) as response:
        return json.load(response)


def shown(tab, selector: str) -> str:
    return tab.locator(selector).inner_text().strip()


def number(value: float) -> str:
    return f"{value:.4g}"


def test_overview_shows_the_status_figures(page, server, shots):
    page.goto(server + "/")
    status = api(server, "/api/status")
    assert shown(page, "#view-title") == "Overview"
    assert shown(page, "#pages-total") == str(status["pages_total"])
    for page_type, count in status["pages"].items():
        assert shown(page, f"#pages-{page_type}") == str(count)
    policy = status["policy"]
    for key, figure in (("G", "bandwidth_G"), ("S", "S"), ("K", "K"), ("omega", "omega")):
        assert shown(page, f"#policy-{key}") == number(policy[figure])
    assert shown(page, "#policy-floor") == str(policy["pages_at_floor"])
    assert page.locator("svg.chart").count() == 2
    assert "without a daemon" in shown(page, "#no-live")
    page.screenshot(path=shots / "overview.png", full_page=True)


def test_schedule_shows_due_pages_and_searches(page, server, shots):
    page.goto(server + "/schedule")
    schedule = api(server, "/api/schedule")
    assert shown(page, "#due-now") == str(schedule["policy"]["due_now"])
    assert shown(page, "#policy-K") == number(schedule["policy"]["K"])
    rows = page.locator("#schedule-table tr")
    assert rows.count() == 1 + len(schedule["pages"])
    assert (
        shown(page, "#schedule-table tr:nth-child(2) td:first-child") == schedule["pages"][0]["url"]
    )
    assert page.locator("svg.chart").count() == 3
    page.screenshot(path=shots / "schedule.png", full_page=True)
    page.fill("input[name=q]", "site2")
    page.click("form button")
    page.wait_for_url("**/schedule?q=site2*")
    searched = api(server, "/api/schedule", q="site2")
    assert shown(page, "#matched").startswith(f"{searched['matched']} pages")
    urls = page.locator("#schedule-table td:first-child").all_inner_texts()
    assert urls and all("site2" in url for url in urls)


def test_rankings_link_to_a_page_view(page, server, shots):
    page.goto(server + "/rankings")
    rankings = api(server, "/api/rankings")
    best = rankings["xml_importance"]["pages"][0]
    link = page.locator("#table-xml_importance tr:nth-child(2) a")
    assert link.inner_text() == best["url"]
    assert page.locator("svg.chart polyline").count() == 3
    page.screenshot(path=shots / "rankings.png", full_page=True)
    link.click()
    page.wait_for_url(f"**/page?id={best['url_id']}")
    detail = api(server, "/api/page", id=best["url_id"])
    assert best["url"] in shown(page, "#page-url")
    assert page.locator("#timeline span").count() == len(detail["observations"])
    changed = sum(1 for o in detail["observations"] if o["changed"])
    assert page.locator("#timeline span.changed").count() == changed
    assert page.locator("#children li").count() == len(detail["children"])
    if detail["versions"]:
        assert page.locator("#versions tr").count() == 1 + len(detail["versions"])
    page.screenshot(path=shots / "page.png", full_page=True)


def test_query_runs_and_pages(page, server, shots):
    page.goto(server + "/query")
    page.fill("input[name=xpath]", "name(/*)")
    page.click("form button")
    page.wait_for_url("**/query?xpath=*")
    answer = api(server, "/api/query", xpath="name(/*)", limit=50)
    rows = page.locator("#query-results tr")
    assert rows.count() == 1 + len(answer["results"]) > 1
    assert page.locator("#query-results pre").first.inner_text() == answer["results"][0]["value"]
    page.screenshot(path=shots / "query.png", full_page=True)
    page.goto(server + "/query?xpath=name(/*)&limit=2")
    page.click("#next")
    page.wait_for_url("**offset=2*")
    second = api(server, "/api/query", xpath="name(/*)", limit=2, offset=2)
    assert page.locator("#query-results a").all_inner_texts() == [
        match["url"] for match in second["results"]
    ]


def test_hostile_xpath_is_shown_as_text(page, server):
    hostile = '//x[<img src=x onerror="document.title=1">'
    page.goto(server + "/query?" + urllib.parse.urlencode({"xpath": hostile}))
    assert "invalid XPath" in shown(page, "#query-error")
    assert page.locator("main img").count() == 0
    assert page.title() == "Query · xyleme"


def test_the_demo_dashboard_shows_live_figures(browser, shots):
    """The dashboard a running demo serves: live queue sizes and fetch rates."""
    options = ["--days", "8", "--pages", "300", "--speed", "43200", "--http", "127.0.0.1:0"]
    demo = subprocess.Popen(
        [sys.executable, "-m", "xyleme", "demo", *options],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = next(line for line in demo.stdout if line.startswith("dashboard at "))
        url = url.removeprefix("dashboard at ").strip()
        for _ in range(150):  # until the daemon is open and three samples give two rates
            status = api(url.rstrip("/"), "/api/status")
            if "queues" in status["live"] and len(status["live"]["rates"]["fetch_rate"]) > 1:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"the demo's dashboard has no live rates after 30 s: {status['live']}")
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        tab = context.new_page()
        tab.goto(url)
        assert tab.locator("[id^=queue-]").count() == len(status["live"]["queues"])
        assert tab.locator("svg.chart").count() == 4
        tab.screenshot(path=shots / "overview-live.png", full_page=True)
        context.close()
    finally:
        demo.terminate()
        demo.wait(timeout=60)
