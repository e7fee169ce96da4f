"""The knobs of the simulated web, with documented defaults.

Two typed dataclasses built from plain values: :class:`SimWebSettings` (the shape of the web,
its change rates, its hosts' behaviour) and :class:`FaultSettings` (each fault kind at its own
rate). ``SimWebSettings(...).without_faults()`` gives the same web with every fault off, which
is what the crawler benchmark crawls.

The same settings and seed always generate the same web: every random choice is drawn from a
stream named after what it decides (see :mod:`xyleme.simweb.streams`), so changing one rate
does not reshuffle unrelated choices.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Annotated

from pydantic import Field, ValidationError
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

DAY = 86_400.0
"""Seconds in a simulated day."""

DEFAULT_EPOCH = 1_767_225_600.0
"""2026-01-01T00:00:00Z: the simulated time at which the web starts (version 0 of every page)."""


SettingsError = ValidationError
"""What an out-of-range simulated-web setting raises: pydantic's ``ValidationError`` (a
``ValueError``), whose message names the setting, its value and its range."""

Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
Days = Annotated[float, Field(gt=0.0, le=100_000.0)]
RealSeconds = Annotated[float, Field(ge=0.0, le=3600.0)]
GIB = 1 << 30


@dataclass(frozen=True, config=SETTINGS)
class FaultSettings:
    """How often each fault happens. Rates are fractions of pages (or hosts, where said).

    Every fault is deterministic: which pages are faulty is decided once from the seed, so a
    faulty page is faulty on every request.
    """

    dying_fraction: Fraction = 0.05
    """Pages that die (answer 404 or 410) at a time drawn per page."""
    mean_lifetime_days: Days = 30.0
    """Mean of the exponential time from the epoch to the death of a dying page."""
    gone_fraction: Fraction = 0.3
    """Of the dying pages, the share that answer 410 Gone rather than 404."""
    new_page_fraction: Fraction = 0.05
    """Pages that do not exist at the epoch and appear at a time drawn per page."""
    birth_horizon_days: Days = 30.0
    """New pages appear uniformly within this many days after the epoch."""
    redirect_fraction: Fraction = 0.02
    """Pages whose URL redirects (301/302) to where the content lives; a third are chains."""
    redirect_loop: bool = True
    """One page whose redirects loop forever (when ``redirect_fraction`` > 0)."""
    slow_fraction: Fraction = 0.01
    """Pages whose response waits ``slow_seconds`` of real time."""
    slow_seconds: RealSeconds = 2.0
    """Real-time delay of a slow page."""
    oversize_fraction: Fraction = 0.002
    """Pages whose body is ``oversize_bytes`` long (beyond a sensible crawler cap)."""
    oversize_bytes: Annotated[int, Field(ge=0, le=GIB)] = 12 * 1024 * 1024
    """Length of an over-size body."""
    gzip_fraction: Fraction = 0.05
    """Pages served with ``Content-Encoding: gzip``."""
    gzip_bomb: bool = True
    """One page whose gzip body inflates to ``gzip_bomb_bytes`` (when ``gzip_fraction`` > 0)."""
    gzip_bomb_bytes: Annotated[int, Field(ge=0, le=16 * GIB)] = 1024 * 1024 * 1024
    """Inflated size of the gzip bomb."""
    malformed_fraction: Fraction = 0.02
    """Pages whose markup is broken (unclosed HTML tags, XML that is not well-formed)."""
    wrong_type_fraction: Fraction = 0.02
    """Pages whose Content-Type lies (XML as text/html, HTML as application/xml)."""
    missing_type_fraction: Fraction = 0.01
    """Pages served without a Content-Type header."""
    spider_trap_hosts: Annotated[int, Field(ge=0, le=1000)] = 1
    """Hosts that link to an endless calendar (``/calendar/YYYY/MM/``)."""
    robots_404_fraction: Fraction = 0.05
    """Hosts whose robots.txt answers 404 (everything allowed)."""
    robots_500_fraction: Fraction = 0.03
    """Hosts whose robots.txt answers 500 (a polite crawler stays away for a while)."""
    robots_timeout_fraction: Fraction = 0.02
    """Hosts whose robots.txt never answers within ``robots_timeout_seconds`` of real time."""
    robots_timeout_seconds: RealSeconds = 60.0
    """Real time a timing-out robots.txt waits before it answers."""
    dead_host_link_fraction: Fraction = 0.01
    """Pages that carry one link to a host that does not resolve (a DNS failure)."""

    def __post_init__(self) -> None:
        per_page = (
            self.redirect_fraction
            + self.slow_fraction
            + self.oversize_fraction
            + self.gzip_fraction
            + self.malformed_fraction
            + self.wrong_type_fraction
            + self.missing_type_fraction
        )
        if per_page > 1.0:
            raise ValueError(f"per-page fault fractions add up to {per_page:.3f} > 1")
        robots = self.robots_404_fraction + self.robots_500_fraction + self.robots_timeout_fraction
        if robots > 1.0:
            raise ValueError(f"robots.txt fault fractions add up to {robots:.3f} > 1")

    @classmethod
    def none(cls) -> FaultSettings:
        """Every fault off: no page dies, redirects, stalls or lies about its type."""
        zeroed = {f.name: 0.0 for f in dataclasses.fields(cls) if f.name.endswith("_fraction")}
        return cls(**zeroed, redirect_loop=False, gzip_bomb=False, spider_trap_hosts=0)


@dataclass(frozen=True, config=SETTINGS)
class SimWebSettings:
    """The shape of the simulated web. Same settings, same web, byte for byte."""

    hosts: Annotated[int, Field(ge=1, le=100_000)] = 50
    """Number of virtual hosts, named ``site0.simweb.test`` … ``site{hosts-1}.simweb.test``."""
    pages: Annotated[int, Field(ge=1, le=10_000_000)] = 20_000
    """Number of pages (HTML and XML documents) at the epoch and after, births included."""
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)] = 1
    """Seed of every random choice."""
    epoch: Annotated[float, Field(ge=0.0, le=1e10)] = DEFAULT_EPOCH
    """Simulated time (seconds since the Unix epoch) at which the web starts."""
    xml_fraction: Fraction = 0.2
    """Share of pages that are XML documents (feeds included)."""
    feed_fraction: Fraction = 0.1
    """Share of XML pages that are RSS or Atom feeds."""
    dtd_fraction: Fraction = 0.3
    """Share of XML data documents that declare a DOCTYPE whose DTD the host serves."""
    invalid_fraction: Fraction = 0.3
    """Of the documents with a DTD, the share that are not valid against it."""
    mean_out_degree: Annotated[float, Field(ge=0.0, le=1000.0)] = 12.0
    """Mean number of links per page."""
    intra_host_fraction: Fraction = 0.85
    """Share of links that stay on their page's host."""
    popularity_exponent: Annotated[float, Field(gt=0.0, le=100.0)] = 1.2
    """Pareto shape of the page popularity that drives the power-law in-degree (smaller is
    more skewed)."""
    never_change_fraction: Fraction = 0.2
    """Pages whose change rate λ is 0."""
    min_changes_per_day: Annotated[float, Field(gt=0.0, le=86_400.0)] = 1.0 / 60.0
    """Smallest λ of a changing page (log-uniform between the two bounds)."""
    max_changes_per_day: Annotated[float, Field(gt=0.0, le=86_400.0)] = 24.0
    """Largest λ of a changing page."""
    link_change_fraction: Fraction = 0.3
    """Pages whose links (not only their text) change with each version."""
    lying_host_fraction: Fraction = 0.1
    """Hosts whose Last-Modified lies: missing, always "now", or never updated."""
    disallow_host_fraction: Fraction = 0.3
    """Hosts whose robots.txt disallows ``/private/``, where some of their pages live."""
    private_page_fraction: Fraction = 0.1
    """On those hosts, the share of pages under ``/private/``."""
    crawl_delay_host_fraction: Fraction = 0.1
    """Hosts whose robots.txt asks for a Crawl-delay."""
    crawl_delay_seconds: RealSeconds = 1.0
    """The Crawl-delay those hosts ask for (real seconds)."""
    paragraphs_per_page: Annotated[int, Field(ge=1, le=1000)] = 12
    """Mean number of text paragraphs per page (about 370 bytes each; pages of 3–8 KB)."""
    sitemap_chunk: Annotated[int, Field(ge=1, le=50_000)] = 1000
    """A host with more pages than this serves a sitemap index over several sitemaps."""
    cache_bytes: Annotated[int, Field(ge=0, le=16 * GIB)] = 256 * 1024 * 1024
    """Memory the server may spend on rendered bodies."""
    faults: FaultSettings = field(default_factory=FaultSettings)
    """The fault rates."""

    def __post_init__(self) -> None:
        if self.pages < self.hosts:
            raise ValueError(
                f"pages ({self.pages}) must be at least hosts ({self.hosts}): "
                "every host has a home page"
            )
        if self.min_changes_per_day > self.max_changes_per_day:
            raise ValueError("need min_changes_per_day <= max_changes_per_day")
        if self.epoch != int(self.epoch):
            raise ValueError("epoch must be a whole number of seconds")

    def without_faults(self) -> SimWebSettings:
        """The same web with every fault switched off (the crawler benchmark's web)."""
        return dataclasses.replace(self, faults=FaultSettings.none())

    def to_dict(self) -> dict:
        """Plain values (for JSON and for a child process's command line)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> SimWebSettings:
        """The inverse of :meth:`to_dict`."""
        values = dict(values)
        faults = FaultSettings(**values.pop("faults", {}))
        return cls(**values, faults=faults)
