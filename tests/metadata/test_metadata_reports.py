"""The reports (``xyleme urls``, ``xyleme hosts``, the dashboard's host table) read the same
figures from either engine."""

import pytest

from metadata import FetchResult, LoadStatus, ManualClock, Metadata, PageType, reports

NETWORK = min(reports.NETWORK_CODES)  # a fetch that got no answer (a crawl-log code)


@pytest.fixture
def md(store_url):
    with Metadata.create(store_url, clock=ManualClock(100.0)) as manager:
        a, b, c, d = manager.ids_for(
            ["http://a.test/", "http://a.test/gone", "http://b.test:8080/x", "http://b.test:8080/y"]
        )
        manager.record_fetches(
            [
                FetchResult(a, 10.0, PageType.HTML, 200, md5="1" * 32, size=500),
                FetchResult(b, 11.0, PageType.DEAD, 404, reason="not found: 404"),
                FetchResult(c, 12.0, PageType.ERROR, None, reason="timeout: connect"),
                FetchResult(d, 13.0, PageType.ERROR, 503, reason="server error: 503"),
            ]
        )
        manager.set_status(a, LoadStatus.WAITING_DTD, "needs the DTD", waiting_for=[b])
        manager.reject(["http://c.test/1", "http://c.test/2"], "out of scope: host c.test", a)
        reports.write_host_stats(
            manager,
            [
                {"host": "http://a.test", "delay": 1.5, "queued": 3, "fetches": {200: 1, 404: 1}},
                {"host": "http://b.test:8080", "fetches": {NETWORK: 1, 503: 1}},
            ],
            at=14.0,
            written=1.0,
        )
        yield manager


def test_page_urls_by_status_host_and_reason(md):
    rows, total = reports.page_urls(md, "failed")
    assert total == 3
    assert [row["url"] for row in rows] == [
        "http://b.test:8080/y",
        "http://b.test:8080/x",
        "http://a.test/gone",
    ]
    rows, total = reports.page_urls(md, "error", host="b.test", reason="timeout", limit=5)
    assert (total, [row["url"] for row in rows]) == (1, ["http://b.test:8080/x"])
    rows, total = reports.page_urls(md, "waiting")
    assert (total, rows[0]["url"], rows[0]["reason"]) == (
        1,
        "http://a.test/",
        "WAITING_DTD: needs the DTD",
    )


def test_rejected_and_reason_counts(md):
    rows, total = reports.rejected_urls(md, host="c.test", limit=1)
    assert total == 2 and rows[0]["url"] == "http://c.test/2"
    assert rows[0]["referrer"] == "http://a.test/"
    counts = reports.reason_counts(md, "failed")
    assert {row["reason"]: row["count"] for row in counts} == {
        "not found": 1,
        "timeout": 1,
        "server error": 1,
    }
    assert reports.reason_counts(md, "rejected")[0]["count"] == 2


def test_host_report(md):
    by_host = {row["host"]: row for row in reports.host_report(md)}
    assert set(by_host) == {"http://a.test", "http://b.test:8080"}
    a, b = by_host["http://a.test"], by_host["http://b.test:8080"]
    assert (a["pages"], a["read"], a["bytes"], a["dead"], a["status_2xx"]) == (2, 1, 500, 1, 1)
    assert (a["delay"], a["queued"], a["stats_at"]) == (1.5, 3, 14.0)
    assert (b["errors"], b["network_errors"], b["status_5xx"]) == (2, 1, 1)
    assert (b["last_error"], b["last_error_url"]) == ("server error: 503", "http://b.test:8080/y")
    assert [row["host"] for row in reports.host_report(md, "b.test")] == ["http://b.test:8080"]
