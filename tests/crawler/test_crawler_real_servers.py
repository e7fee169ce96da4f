"""What nginx, Apache httpd and lighttpd answer that ``http.server`` does not, reproduced on an
aiohttp server (the real-server trial, docs/realsite.md "Real servers")."""

from __future__ import annotations

from tests.crawler.test_crawler_scope import FAST, LOOPBACK, paths, serving
from tests.crawler_site import Page
from xyleme.crawler import Crawler, CrawlerSettings, Scope

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
