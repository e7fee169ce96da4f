"""The web's static structure: hosts, pages, links, change rates and faults, drawn from the seed.

:class:`WebStructure` is everything decided once from the seed, as numpy arrays with one entry
per page or per host (vectorised, so a million-page web builds in seconds), with the names of
what a page can be (:class:`Kind`, :class:`Fault`, ...) and the fixed paths every host serves.
What depends on simulated time is :class:`xyleme.simweb.web.SimWeb`'s; the lifecycle model
reads this structure, so it lives apart from both (no import circle).

Shape of the web:

* hosts ``site0.simweb.test`` … with Zipf-like sizes; page ids are contiguous per host and
  the first page of each host is its home page ``/`` (HTML, never faulty, never dies);
* a page's popularity is Pareto-distributed, and every link picks its target in proportion
  to popularity (within its own host with probability ``intra_host_fraction``), which gives
  the power-law in-degree of the web;
* every non-home page also gets one link from an earlier HTML page of its host, so the whole
  host is reachable from its home page;
* HTML pages and feeds link to any page; XML data documents link only to XML documents.
"""

from __future__ import annotations

import enum
import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from xyleme.simweb.settings import DAY, SimWebSettings
from xyleme.simweb.streams import numpy_stream

DOMAIN = "simweb.test"
"""Every simulated host is a subdomain of this reserved (RFC 2606) name."""

RELINK_SHARE = 0.3
"""Share of a link-changing page's links that are drawn afresh at each version."""

STYLESHEET_PATH = "/style/catalog.xsl"
DTD_PATH = "/dtd/catalog.dtd"
ENTITY_PATH = "/ent/notice.ent"
SCHEMA_PATH = "/schema/record.xsd"
SITEMAP_PATH = "/sitemap.xml"
CALENDAR_PREFIX = "/calendar/"


def dead_host_url(page: int) -> str:
    """A link to a host that does not resolve (a DNS failure for the crawler)."""
    return f"http://gone{page}.{DOMAIN}/"


def calendar_path(at: float, day: int | None = None) -> str:
    """The spider trap's page for the month (or day) of simulated time ``at``."""
    tm = time.gmtime(at)
    path = f"{CALENDAR_PREFIX}{tm.tm_year}/{tm.tm_mon:02d}/"
    return path if day is None else f"{path}{day:02d}/"


class Kind(enum.IntEnum):
    """What a page is."""

    HTML = 0
    XML = 1
    RSS = 2
    ATOM = 3


class Fault(enum.IntEnum):
    """The one fault (or none) a page has on every request."""

    NONE = 0
    REDIRECT = 1
    REDIRECT_CHAIN = 2
    REDIRECT_LOOP = 3
    SLOW = 4
    OVERSIZE = 5
    GZIP = 6
    GZIP_BOMB = 7
    MALFORMED = 8
    WRONG_TYPE = 9
    MISSING_TYPE = 10


class Robots(enum.IntEnum):
    """How a host's robots.txt answers."""

    NORMAL = 0
    NOT_FOUND = 1
    SERVER_ERROR = 2
    TIMEOUT = 3


class LastModified(enum.IntEnum):
    """How truthful a host's Last-Modified header is."""

    HONEST = 0
    MISSING = 1
    ALWAYS_NOW = 2
    NEVER_UPDATED = 3


class PageState(enum.Enum):
    """A page's existence at a simulated time."""

    UNBORN = "unborn"
    ALIVE = "alive"
    DEAD = "dead"


def _exact_subset(rng: np.random.Generator, candidates: np.ndarray, fraction: float) -> np.ndarray:
    """Exactly ``round(fraction * len(candidates))`` of the candidates, chosen at random."""
    return rng.permutation(candidates)[: round(fraction * len(candidates))]


@dataclass
class _Sampler:
    """Picks link targets in proportion to a weight, within a host or over the whole web."""

    cumulative: np.ndarray
    host_start: np.ndarray

    def pick(self, hosts: np.ndarray, intra: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        cw, start = self.cumulative, self.host_start
        total = cw[-1]
        first = start[hosts]
        lo = np.where(first > 0, cw[np.maximum(first - 1, 0)], 0.0)
        hi = cw[start[hosts + 1] - 1]
        local = intra & (hi > lo)
        lo = np.where(local, lo, 0.0)
        hi = np.where(local, hi, total)
        picked = np.searchsorted(cw, lo + uniforms * (hi - lo), side="right")
        return np.minimum(picked, len(cw) - 1)


class WebStructure:
    """Everything about the web that is decided once from the seed (no time involved).

    Attributes
    ----------
    host_start, host_of, home, is_home
        Pages of host *h* are ``host_start[h]:host_start[h+1]``; ``home[h]`` is its home page.
    robots, crawl_delay, disallow, last_modified, trap, feed_of_host
        Per host: :class:`Robots` variant, Crawl-delay or not, ``Disallow: /private/`` or
        not, :class:`LastModified` policy, spider trap or not, first feed (-1: none).
    kind, private, opaque_path, has_dtd, invalid, has_schema, has_xinclude, has_stylesheet
        Per page: :class:`Kind` and the forms its document takes.
    popularity, rate, relinks
        Per page: the weight links follow, λ (changes per simulated second), and whether
        its links change with its versions.
    link_offsets, link_targets
        The base link graph in CSR form (targets of page *i* are
        ``link_targets[link_offsets[i]:link_offsets[i+1]]``).
    fault, dead_host_link
        Per page: its :class:`Fault`, and whether it links to a host that does not resolve.
    """

    def __init__(self, settings: SimWebSettings) -> None:
        self.settings = settings
        self.host_count = settings.hosts
        self.page_count = settings.pages
        self._build_hosts()
        self._build_pages()
        self._build_links()
        self._build_faults()

    # -- hosts ---------------------------------------------------------------------------
    def _build_hosts(self) -> None:
        s, h = self.settings, self.settings.hosts
        rng = numpy_stream(s.seed, "hosts")
        weights = 1.0 / np.arange(1, h + 1) ** 0.8
        sizes = rng.multinomial(s.pages - h, weights / weights.sum()) + 1
        self.host_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.host_of = np.repeat(np.arange(h, dtype=np.int32), sizes)
        self.home = self.host_start[:-1].copy()
        self.is_home = np.zeros(s.pages, dtype=bool)
        self.is_home[self.home] = True

        faults = s.faults
        order = rng.permutation(h)
        self.robots = np.full(h, Robots.NORMAL, dtype=np.int8)
        cut = 0
        for variant, fraction in (
            (Robots.NOT_FOUND, faults.robots_404_fraction),
            (Robots.SERVER_ERROR, faults.robots_500_fraction),
            (Robots.TIMEOUT, faults.robots_timeout_fraction),
        ):
            count = round(fraction * h)
            self.robots[order[cut : cut + count]] = variant
            cut += count
        normal = np.flatnonzero(self.robots == Robots.NORMAL)
        self.crawl_delay = np.zeros(h, dtype=bool)
        self.crawl_delay[_exact_subset(rng, normal, s.crawl_delay_host_fraction)] = True
        self.disallow = np.zeros(h, dtype=bool)
        self.disallow[_exact_subset(rng, np.arange(h), s.disallow_host_fraction)] = True
        self.last_modified = np.full(h, LastModified.HONEST, dtype=np.int8)
        liars = _exact_subset(rng, np.arange(h), s.lying_host_fraction)
        self.last_modified[liars] = 1 + np.arange(liars.size) % 3
        self.trap = np.zeros(h, dtype=bool)
        self.trap[rng.permutation(h)[: min(faults.spider_trap_hosts, h)]] = True

    # -- pages ---------------------------------------------------------------------------
    def _build_pages(self) -> None:
        s, n = self.settings, self.settings.pages
        rng = numpy_stream(s.seed, "pages")
        others = np.flatnonzero(~self.is_home)
        self.kind = np.full(n, Kind.HTML, dtype=np.int8)
        xml = np.sort(
            _exact_subset(rng, others, min(1.0, s.xml_fraction * n / max(len(others), 1)))
        )
        feeds = _exact_subset(rng, xml, s.feed_fraction)
        self.kind[xml] = Kind.XML
        self.kind[feeds] = np.where(np.arange(feeds.size) % 2 == 0, Kind.RSS, Kind.ATOM)
        data = np.flatnonzero(self.kind == Kind.XML)
        self.has_dtd = np.zeros(n, dtype=bool)
        with_dtd = _exact_subset(rng, data, s.dtd_fraction)
        self.has_dtd[with_dtd] = True
        self.invalid = np.zeros(n, dtype=bool)
        self.invalid[_exact_subset(rng, with_dtd, s.invalid_fraction)] = True
        plain = np.flatnonzero((self.kind == Kind.XML) & ~self.has_dtd)
        self.has_schema = np.zeros(n, dtype=bool)
        self.has_schema[_exact_subset(rng, plain, 0.5)] = True
        self.has_xinclude = np.zeros(n, dtype=bool)
        self.has_xinclude[_exact_subset(rng, plain, 0.3)] = True
        self.has_stylesheet = (self.kind == Kind.XML) & (np.arange(n) % 2 == 0)
        self.opaque_path = np.zeros(n, dtype=bool)
        self.opaque_path[_exact_subset(rng, data, 0.2)] = True
        self.private = (
            self.disallow[self.host_of] & ~self.is_home & (rng.random(n) < s.private_page_fraction)
        )
        feeds = np.flatnonzero((self.kind == Kind.RSS) | (self.kind == Kind.ATOM))
        hosts_with_feeds, first = np.unique(self.host_of[feeds], return_index=True)
        self.feed_of_host = np.full(s.hosts, -1, dtype=np.int64)
        self.feed_of_host[hosts_with_feeds] = feeds[first]
        self.popularity = rng.pareto(s.popularity_exponent, n) + 1.0
        self.popularity[self.home] *= 20.0

        rate_rng = numpy_stream(s.seed, "rates")
        low, high = math.log(s.min_changes_per_day), math.log(s.max_changes_per_day)
        self.rate = np.exp(rate_rng.uniform(low, high, n)) / DAY
        self.rate[_exact_subset(rate_rng, np.arange(n), s.never_change_fraction)] = 0.0
        self.relinks = np.zeros(n, dtype=bool)
        changing = np.flatnonzero(self.rate > 0)
        self.relinks[_exact_subset(rate_rng, changing, s.link_change_fraction)] = True

    @cached_property
    def is_xml(self) -> np.ndarray:
        return self.kind != Kind.HTML

    @cached_property
    def samplers(self) -> tuple[_Sampler, _Sampler]:
        """(any page, XML pages only) target samplers, weighted by popularity."""
        any_page = _Sampler(np.cumsum(self.popularity), self.host_start)
        xml_only = _Sampler(np.cumsum(self.popularity * self.is_xml), self.host_start)
        return any_page, xml_only

    # -- links ---------------------------------------------------------------------------
    def _build_links(self) -> None:
        s, n = self.settings, self.settings.pages
        rng = numpy_stream(s.seed, "links")
        degree = rng.poisson(s.mean_out_degree * rng.gamma(2.0, 0.5, n))
        feeds = (self.kind == Kind.RSS) | (self.kind == Kind.ATOM)
        degree[feeds] = np.maximum(degree[feeds], 3)
        src = np.repeat(np.arange(n, dtype=np.int64), degree)
        dst = self.draw_targets(
            src, rng.random(src.size) < s.intra_host_fraction, rng.random(src.size)
        )

        # One link from an earlier HTML page of the same host keeps every page reachable.
        html = ~self.is_xml
        html_ids = np.flatnonzero(html)
        html_before = np.cumsum(html) - html  # HTML pages with a smaller id
        first_html = html_before[self.host_start[:-1]]  # index in html_ids of each home page
        child = np.flatnonzero(~self.is_home)
        host = self.host_of[child]
        choices = html_before[child] - first_html[host]
        parent = html_ids[first_html[host] + (rng.random(child.size) * choices).astype(np.int64)]

        # Home pages declare their host's first feed (<link rel="alternate">); every feed's
        # channel links back to its host's home page.
        feed_hosts = np.flatnonzero(self.feed_of_host >= 0)
        feeds = np.flatnonzero((self.kind == Kind.RSS) | (self.kind == Kind.ATOM))
        src = np.concatenate([src, parent, self.home[feed_hosts], feeds])
        dst = np.concatenate(
            [dst, child, self.feed_of_host[feed_hosts], self.home[self.host_of[feeds]]]
        )
        keep = src != dst
        edges = np.sort(src[keep] * n + dst[keep])
        edges = edges[np.concatenate([edges[:1] == edges[:1], edges[1:] != edges[:-1]])]
        src, dst = edges // n, edges % n
        self.link_offsets = np.searchsorted(src, np.arange(n + 1)).astype(np.int64)
        self.link_targets = dst.astype(np.int32)

    def draw_targets(
        self, sources: np.ndarray, intra: np.ndarray, uniforms: np.ndarray
    ) -> np.ndarray:
        """Link targets for ``sources``: XML data documents link only to XML documents."""
        any_page, xml_only = self.samplers
        hosts = self.host_of[sources]
        targets = any_page.pick(hosts, intra, uniforms)
        xml_src = self.kind[sources] == Kind.XML
        if xml_src.any():
            targets[xml_src] = xml_only.pick(hosts[xml_src], intra[xml_src], uniforms[xml_src])
        return targets

    # -- faults --------------------------------------------------------------------------
    def _build_faults(self) -> None:
        faults = self.settings.faults
        rng = numpy_stream(self.settings.seed, "faults")
        candidates = rng.permutation(np.flatnonzero(~self.is_home))
        self.fault = np.full(self.page_count, Fault.NONE, dtype=np.int8)
        cut = 0
        for fault, fraction in (
            (Fault.REDIRECT, faults.redirect_fraction),
            (Fault.SLOW, faults.slow_fraction),
            (Fault.OVERSIZE, faults.oversize_fraction),
            (Fault.GZIP, faults.gzip_fraction),
            (Fault.MALFORMED, faults.malformed_fraction),
            (Fault.WRONG_TYPE, faults.wrong_type_fraction),
            (Fault.MISSING_TYPE, faults.missing_type_fraction),
        ):
            chosen = candidates[cut : cut + round(fraction * len(candidates))]
            cut += chosen.size
            self.fault[chosen] = fault
            if fault is Fault.REDIRECT and chosen.size:
                self.fault[chosen[: chosen.size // 3]] = Fault.REDIRECT_CHAIN
                if faults.redirect_loop:
                    self.fault[chosen[-1]] = Fault.REDIRECT_LOOP
            if fault is Fault.GZIP and chosen.size and faults.gzip_bomb:
                self.fault[chosen[-1]] = Fault.GZIP_BOMB
        self.dead_host_link = np.zeros(self.page_count, dtype=bool)
        self.dead_host_link[
            _exact_subset(rng, np.arange(self.page_count), faults.dead_host_link_fraction)
        ] = True
