"""What nginx, Apache httpd and lighttpd answer that ``http.server`` does not, reproduced on an
aiohttp server (the real-server trial, docs/realsite.md "Real servers")."""

from __future__ import annotations

import gzip

from aiohttp import web

from tests.crawler.test_crawler_scope import FAST, LOOPBACK, paths, serving
from tests.crawler_site import Page
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope

MODIFIED = "Fri, 13 Nov 2026 11:12:04 GMT"

APACHE_SORTS = ("?C=N;O=D", "?C=M;O=A", "?C=S;O=A", "?C=D;O=A")
"""mod_autoindex's column links on a listing sorted by name, ascending."""


def apache_listing(names: list[str], sorted_by: str = "") -> bytes:
    """A listing as Apache's ``FancyIndexing`` writes it: its column links (each re-sorting
    the listing), the parent folder, the entries."""
    flips = {"?C=N;O=D": "?C=N;O=A"} if sorted_by == "?C=N;O=D" else {}
    columns = [flips.get(query, query) for query in APACHE_SORTS]
    rows = "".join(f'<tr><td><a href="{name}">{name}</a></td></tr>' for name in names)
    heads = "".join(f'<th><a href="{query}">col</a></th>' for query in columns)
    return (
        f"<html><body><table><tr>{heads}</tr>"
        f'<tr><td><a href="/">Parent Directory</a></td></tr>{rows}</table></body></html>'
    ).encode()


async def test_an_apache_listing_re_sorted_is_the_listing_itself(md):
    async with serving() as site:
        home = site.url(LOOPBACK, "/doc/")
        site.add(LOOPBACK, "/doc/", lambda request: _listing(request.query_string))
        for query in ("C=N;O=A", "C=N;O=D", "C=M;O=A", "C=M;O=D", "C=S;O=A", "C=D;O=A"):
            site.add(LOOPBACK, f"/doc/?{query}", lambda request: _listing(request.query_string))
        site.html(LOOPBACK, "/doc/a.html", ["./?C=M;O=D", "b.html"])
        site.html(LOOPBACK, "/doc/b.html")
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope([home]), clock=md.clock)
        crawler.submit(home)
        await crawler.run()
    assert sorted(paths(site)) == ["/doc/", "/doc/a.html", "/doc/b.html", "/robots.txt"]
    children = set(md.urls_of(md.children(md.id_for(home, create=False)).tolist()))
    assert children == {home, site.url(LOOPBACK, "/doc/a.html"), site.url(LOOPBACK, "/doc/b.html")}


def _listing(query: str) -> Page:
    return Page(apache_listing(["a.html", "b.html"], f"?{query}" if query else ""))


def apache_deflated(request: web.Request) -> Page:
    """A page as Apache's mod_deflate serves it: gzip, the ETag ``"…-gzip"``, and a 304 only
    to an ``If-Modified-Since`` sent alone (``If-None-Match`` is compared with the ETag of
    the uncompressed file, which nobody was ever sent)."""
    headers = {"ETag": '"31bc-5f2-gzip"', "Last-Modified": MODIFIED, "Vary": "Accept-Encoding"}
    matches = request.headers.get("If-None-Match") == '"31bc-5f2"'
    if "If-None-Match" not in request.headers:
        matches = request.headers.get("If-Modified-Since") == MODIFIED
    if matches:
        return Page(b"", 304, headers=headers)
    body = gzip.compress(b"<html><body><p>the same page</p></body></html>")
    return Page(body, headers={**headers, "Content-Encoding": "gzip"})


async def test_a_host_whose_etags_never_validate_is_asked_if_modified_since(md):
    async with serving() as site:
        home = site.add(LOOPBACK, "/doc/", apache_deflated)
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope([home]), clock=md.clock)
        crawler.submit(home)
        await crawler.run()
        url_id = md.id_for(home, create=False)
        statuses = []
        for _ in range(3):
            md.clock.advance(3600.0)
            crawler.submit(url_id, Level.REFRESH)
            await crawler.run()
            statuses.append(md.page(url_id).status)
    sent = [hit.headers for hit in site.hits if hit.path == "/doc/"]
    assert statuses == [200, 304, 304]
    assert [("If-None-Match" in h, "If-Modified-Since" in h) for h in sent] == [
        (False, False),
        (True, True),
        (False, True),
        (False, True),
    ]
    assert [obs.changed for obs in md.observations(url_id)] == [None, False, False, False]
