"""Fixtures shared by the crawler's loopback tests: a test module takes them with
``site, md = crawler_fixtures.site, crawler_fixtures.md``.

``site`` is a virtual-host web on 127.0.0.1 (tests/crawler_site.py), ``md`` a fresh
metadata store on a manual clock, :func:`make_crawler` a crawler of ``*.test`` on them.
"""

from __future__ import annotations

import pytest

from metadata import Metadata
from metadata.clock import ManualClock
from tests.crawler_site import Site, SiteResolver
from xyleme.crawler import Crawler, CrawlerSettings, Scope

FAST = {"min_delay": 0.0, "concurrency": 8, "per_host_concurrency": 2, "write_interval": 0.01}
"""No politeness delay, quick commits: the tests' crawler settings unless they say otherwise."""


@pytest.fixture
async def site():
    web = Site()
    await web.start()
    yield web
    await web.stop()


@pytest.fixture
def md(tmp_path):
    with Metadata.create(tmp_path / "metadata.db", clock=ManualClock(1_000_000.0)) as metadata:
        yield metadata


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
