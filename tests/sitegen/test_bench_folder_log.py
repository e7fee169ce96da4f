"""bench_folder's count of out-of-scope requests, read from a server's access log (its
``--url`` mode): only the lines written during the crawl, robots.txt aside."""

from __future__ import annotations

from benchmarks.bench_folder import out_of_scope_requests

LINE = '127.0.0.1 - - [28/Nov/2026:12:33:47 +0000] "GET {} HTTP/1.1" 200 224 "-" "xyro"\n'


def test_requests_outside_the_scope_are_counted_from_the_crawls_start(tmp_path):
    log = tmp_path / "access.log"
    log.write_text(LINE.format("/elsewhere/before.html"))  # an earlier run's
    start = log.stat().st_size
    paths = ["/robots.txt", "/doc/html/", "/doc/html/a%20b.html", "/doc/other.html", "/"]
    log.write_text(log.read_text() + "".join(LINE.format(path) for path in paths))
    scope = "http://127.0.0.1:18081/doc/html/"
    assert out_of_scope_requests(log, start, scope) == 2  # /doc/other.html and /
