"""A synthetic host-structured web graph for the LiveRank benchmark and tests.

A stand-in for the simulated web's link structure (``xyleme.simweb``), built in memory in a
second for 100,000 pages so the benchmark needs no server: host sizes follow a Zipf law,
page popularity (hence in-degree) a Pareto law, most links stay on their host and many in
their section (directory) of it, as on the real web, where §4.1.2 notes the locality of
sites. Each host is also a navigation tree: its home page links to every section's first
page, which links to every page of its section, and pages link back to the home page with
some probability.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ranking.liverank import LinkGraph


@dataclass(frozen=True)
class WebGraphShape:
    """The parameters of :func:`synthetic_web`, with defaults close to a crawl of the web.

    ``pages_per_host``: mean host size.
    ``host_size_exponent``: host sizes follow a Zipf law of this exponent (rank^−s).
    ``mean_out_degree``: mean number of links per page (log-normal spread).
    ``local_fraction``: share of links that stay on the page's host.
    ``section_size``: pages per section (directory) of a host, consecutive ids.
    ``section_fraction``: share of a host's local links that stay in the page's section.
    ``home_link``: probability that a page links to its host's home page.
    ``popularity_exponent``: Pareto shape of page popularity; smaller means heavier tails.
    """

    pages_per_host: int = 200
    host_size_exponent: float = 0.7
    mean_out_degree: float = 8.0
    local_fraction: float = 0.8
    section_size: int = 10
    section_fraction: float = 0.6
    home_link: float = 0.6
    popularity_exponent: float = 1.5


def synthetic_web(n_pages: int, shape: WebGraphShape | None = None, *, seed: int = 0) -> LinkGraph:
    """A random web graph of ``n_pages`` pages with hosts; pages of a host are contiguous ids.

    The first page of each host is its home page.

    Examples
    --------
    >>> graph = synthetic_web(1000, seed=1)
    >>> graph.n_pages, bool(graph.hosts[0] == 0)
    (1000, True)
    """
    shape = shape or WebGraphShape()
    rng = np.random.default_rng(seed)
    n_hosts = max(1, n_pages // shape.pages_per_host)
    host_weight = np.arange(1, n_hosts + 1, dtype=np.float64) ** -shape.host_size_exponent
    drawn = np.sort(rng.choice(n_hosts, size=n_pages, p=host_weight / host_weight.sum()))
    _, hosts = np.unique(drawn, return_inverse=True)
    host_start = np.searchsorted(hosts, np.arange(hosts.max() + 1))
    host_end = np.append(host_start[1:], n_pages)

    popularity = rng.pareto(shape.popularity_exponent, n_pages) + 1.0
    cumulative = np.concatenate(([0.0], np.cumsum(popularity)))
    out_degree = np.rint(rng.lognormal(np.log(shape.mean_out_degree) - 0.5, 1.0, n_pages)).astype(
        np.int64
    )
    sources = np.repeat(np.arange(n_pages), out_degree)
    section_start = host_start[hosts] + (
        (np.arange(n_pages) - host_start[hosts]) // shape.section_size * shape.section_size
    )
    section_end = np.minimum(section_start + shape.section_size, host_end[hosts])
    draw = rng.random(sources.size)
    local = draw < shape.local_fraction
    in_section = draw < shape.local_fraction * shape.section_fraction
    low = np.where(local, cumulative[host_start[hosts[sources]]], 0.0)
    high = np.where(local, cumulative[host_end[hosts[sources]]], cumulative[-1])
    low = np.where(in_section, cumulative[section_start[sources]], low)
    high = np.where(in_section, cumulative[section_end[sources]], high)
    targets = np.searchsorted(cumulative, rng.uniform(low, high), side="right") - 1
    targets = np.clip(targets, 0, n_pages - 1)

    to_home = np.flatnonzero(rng.random(n_pages) < shape.home_link)
    pages = np.arange(n_pages)
    heads = np.unique(section_start)
    sources = np.concatenate((sources, to_home, host_start[hosts[heads]], section_start))
    targets = np.concatenate((targets, host_start[hosts[to_home]], heads, pages))
    return LinkGraph.from_edges(sources, targets, n_pages, hosts=hosts)
