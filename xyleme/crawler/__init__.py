"""The crawler, Xyro (paper §3): the only module of xyleme that touches the network.

One component per job, Scrapy's way: :mod:`~xyleme.crawler.frontier` (five priority levels
over per-host queues), :mod:`~xyleme.crawler.politeness` (per-host slots: delay,
Crawl-delay, Retry-After), :mod:`~xyleme.crawler.robots` (robots.txt via Protego, RFC 9309),
:mod:`~xyleme.crawler.fetcher` (one aiohttp session, caps, decoding),
:mod:`~xyleme.crawler.content`, :mod:`~xyleme.crawler.htmlencoding` and
:mod:`~xyleme.crawler.htmlparse` (what a body is, how an HTML page is decoded and what it
links to), :mod:`~xyleme.crawler.scope` and :mod:`~xyleme.crawler.denylist` (what may be
fetched),
:mod:`~xyleme.crawler.seen` (the seen-URL table), :mod:`~xyleme.crawler.stats`; the
crawler's own steps: :mod:`~xyleme.crawler.admission` (which links are taken in),
:mod:`~xyleme.crawler.fetching` (one request's fetch), :mod:`~xyleme.crawler.classify` (what
a response means), :mod:`~xyleme.crawler.writer` (batched writes, then the events and the
lane to the loader), and the :mod:`~xyleme.crawler.engine` that runs them. See
docs/crawler.md.
"""

from xyleme.crawler.addresses import literal_refusal
from xyleme.crawler.engine import Crawler
from xyleme.crawler.fetcher import SPOOLED_BODIES, FetchError
from xyleme.crawler.frontier import Level, Request, host_key
from xyleme.crawler.htmlparse import DOCUMENT_RELATIONS, RESOURCE_RELATIONS
from xyleme.crawler.liveness import Liveness, Verdict
from xyleme.crawler.probe import METHODS, CrawlerProbe
from xyleme.crawler.scope import Scope
from xyleme.crawler.scoperules import Kind, Rule, ScopeError, parse_rule
from xyleme.crawler.seen import SeenURLs
from xyleme.crawler.settings import CrawlerSettings, ScopeRules
from xyleme.crawler.traps import TrapGuard
from xyleme.crawler.writer import CrawlEvent

__all__ = [
    "DOCUMENT_RELATIONS",
    "METHODS",
    "RESOURCE_RELATIONS",
    "SPOOLED_BODIES",
    "CrawlEvent",
    "Crawler",
    "CrawlerProbe",
    "CrawlerSettings",
    "FetchError",
    "Kind",
    "Level",
    "Liveness",
    "Request",
    "Rule",
    "Scope",
    "ScopeError",
    "ScopeRules",
    "SeenURLs",
    "TrapGuard",
    "Verdict",
    "host_key",
    "literal_refusal",
    "parse_rule",
]
