"""Sitemaps: the first page read from a host queues the sitemaps its robots.txt names.

The loader reads a sitemap's URLs as its links, and they are scouted like any. A sitemap is
submitted as one (``sitemap=True``): its suffix is not refused (``sitemap.xml.gz``), a gzip
body is unpacked and a plain-text one read line by line (:mod:`xyleme.crawler.sitemapbody`).
"""

from __future__ import annotations

import time

from xyleme import signals
from xyleme.crawler import Crawler, CrawlEvent, Level, host_key


class SitemapQueue:
    """Listens to the crawler's ``page_fetched`` and queues each new host's sitemaps once."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self._hosts: set[str] = set()
        crawler.signals.connect(signals.page_fetched, self._on_fetched)

    def _on_fetched(self, event: CrawlEvent) -> None:
        host = host_key(event.url)
        if host in self._hosts:
            return
        self._hosts.add(host)
        rules = self.crawler.robots.lookup(host, time.monotonic())
        if rules is not None and rules.parser is not None:
            for sitemap in rules.parser.sitemaps:
                self.crawler.submit(sitemap, Level.SCOUTING, sitemap=True)
