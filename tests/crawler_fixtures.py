"""What the crawler's loopback tests share besides conftest's ``site`` and ``md``:
:func:`make_crawler`, a crawler of ``*.test`` on them, with :data:`FAST` settings.
"""

from __future__ import annotations

from tests.crawler_site import SiteResolver
from xyleme.crawler import Crawler, CrawlerSettings, Scope

FAST = {"min_delay": 0.0, "concurrency": 8, "per_host_concurrency": 2, "write_interval": 0.01}
"""No politeness delay, quick commits: the tests' crawler settings unless they say otherwise."""


def make_crawler(md, scope=None, sink=None, **settings) -> Crawler:
    """A crawler of ``*.test`` (the scope unless ``scope``) with :data:`FAST` settings."""
    return Crawler(
        md,
        CrawlerSettings(**{**FAST, **settings}),
        scope or Scope(["domain:test:*"]),
        clock=md.clock,
        resolver=SiteResolver(),
        sink=sink,
    )


def children_urls(md, url) -> list[str]:
    """The URLs a stored page links to, sorted."""
    page = md.page_by_url(url)
    return sorted(md.urls_of(md.children(page.url_id).tolist()))


def listen(crawler, signal) -> list:
    """Every event of ``signal`` the crawler sends from now on, in a list."""
    heard = []
    crawler.signals.connect(signal, heard.append)
    return heard
