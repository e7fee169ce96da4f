"""The aging model: which pages of an old crawl are still alive after a long time.

A pure function over a link graph, so the LiveRank benchmark and tests can age a repository
the way the paper's uk-2002 crawl aged in eleven years (seed 001, §3.1, Table 1), with the
structural correlations it observes (§3.3):

1. **Whole hosts die** (every page fails to resolve: DNS failure, a quarter of uk-2002's
   pages) with probability ``host_death`` for a host of median importance; important hosts
   die less: logit(p_host) = logit(``host_death``) − ``host_importance_effect``·(q_h − ½),
   where q_h is the percentile of the host's total PageRank.
2. **On a live host a page survives** with a probability that grows with its importance:
   logit(p) = logit(``page_survival``) + ``importance_effect``·(q − ½) + h, where q is the
   page's static PageRank percentile in [0, 1] and h ~ N(0, ``host_spread``²) is its host's
   upkeep (some sites are kept, others reorganised and mostly gone).
3. **Death spreads along same-host links**, as a cascade: a page whose same-host parents
   died follows them with probability ``death_spread`` × the share of those parents that
   died (a removed section takes its sub-pages with it, but one dead page does not kill the
   home page every page links to).
4. **Soft 404s**: a fraction ``soft_404`` of the pages that died on live hosts still answer
   200 with a "page not found" body (half of uk-2002's 200s, §3.1); only a GET sees it.

The truth (:attr:`AgedWeb.alive`) counts soft 404s as dead.

:func:`aging_lifecycle` plugs the model into the simulated web's lifecycle hook
(``SimWeb(settings, lifecycle=aging_lifecycle(...))``), so an aged simweb serves those pages as
dead: 404, 200 with a "Page not found" body, and for a dead host a DNS failure (its
``Lifecycles.host_death``; the server's resolver refuses the name from then on; through the
proxy, which has no name to refuse, its pages answer 410). See docs/simweb.md.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit
from scipy.stats import rankdata

from ranking.liverank import LinkGraph, personalised_pagerank
from xyleme.simweb.lifecycle import SOFT_404, LifecycleModel, Lifecycles
from xyleme.simweb.settings import DAY
from xyleme.simweb.structure import WebStructure


class Fate(enum.IntEnum):
    """What a page of the old crawl answers today."""

    ALIVE = 0
    GONE = 1
    """404 or 410 on a live host."""
    HOST_DOWN = 2
    """The host no longer resolves (DNS failure)."""
    SOFT_404 = 3
    """200 with a "not found" body: dead, but only a GET can tell."""


@dataclass(frozen=True)
class AgingModel:
    """The parameters of :func:`age_graph`; the defaults leave about 15–20 % of pages alive."""

    host_death: float = 0.3
    host_importance_effect: float = 2.0
    page_survival: float = 0.4
    importance_effect: float = 1.5
    host_spread: float = 1.5
    death_spread: float = 0.15
    soft_404: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("host_death", "death_spread", "soft_404"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} is a probability in [0, 1], not {getattr(self, name)}")
        if not 0.0 < self.page_survival < 1.0:
            raise ValueError(f"page_survival must lie in (0, 1), not {self.page_survival}")
        if self.host_spread < 0:
            raise ValueError(f"host_spread is a standard deviation ≥ 0, not {self.host_spread}")


@dataclass(frozen=True)
class AgedWeb:
    """The outcome of aging: one :class:`Fate` code per page."""

    fate: np.ndarray

    @property
    def alive(self) -> np.ndarray:
        """The truth a: True for the pages that really still exist."""
        return self.fate == Fate.ALIVE

    def fractions(self) -> dict[str, float]:
        """The share of pages in each fate, like the paper's Table 1."""
        counts = np.bincount(self.fate, minlength=len(Fate)) / max(len(self.fate), 1)
        return {fate.name.lower(): float(counts[fate]) for fate in Fate}


def age_graph(
    graph: LinkGraph, model: AgingModel | None = None, *, pagerank: np.ndarray | None = None
) -> AgedWeb:
    """Age the snapshot ``graph`` (which must carry hosts) by ``model``; see the module doc.

    ``pagerank`` is the static PageRank, computed when omitted.

    Examples
    --------
    >>> g = LinkGraph.from_edges([0, 1, 2], [1, 2, 0], hosts=np.array([0, 0, 1]))
    >>> age_graph(g, AgingModel(host_death=1.0)).fractions()["host_down"]
    1.0
    """
    model = model or AgingModel()
    if graph.hosts is None:
        raise ValueError("aging needs each page's host")
    rng = np.random.default_rng(model.seed)
    hosts = graph.hosts
    n_hosts = int(hosts.max(initial=-1)) + 1
    if pagerank is None:
        pagerank = personalised_pagerank(graph)

    host_rank = _percentile(np.bincount(hosts, weights=pagerank, minlength=n_hosts))
    host_death = expit(logit(model.host_death) - model.host_importance_effect * (host_rank - 0.5))
    host_down = (rng.random(n_hosts) < host_death)[hosts]
    percentile = _percentile(pagerank)
    upkeep = rng.normal(0.0, model.host_spread, n_hosts)[hosts]
    survival = expit(
        logit(model.page_survival) + model.importance_effect * (percentile - 0.5) + upkeep
    )
    dead = host_down | (rng.random(graph.n_pages) >= survival)
    dead |= _spread_death(graph, dead & ~host_down, dead, model.death_spread, rng)

    fate = np.full(graph.n_pages, Fate.ALIVE, dtype=np.int8)
    fate[dead] = Fate.GONE
    fate[host_down] = Fate.HOST_DOWN
    soft = (fate == Fate.GONE) & (rng.random(graph.n_pages) < model.soft_404)
    fate[soft] = Fate.SOFT_404
    return AgedWeb(fate=fate)


def _percentile(values: np.ndarray) -> np.ndarray:
    """Each value's rank among ``values`` scaled to [0, 1] (ties share their mean rank)."""
    return (rankdata(values) - 1) / max(len(values) - 1, 1)


def _spread_death(
    graph: LinkGraph,
    frontier: np.ndarray,
    dead: np.ndarray,
    probability: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """The pages killed by the cascade from ``frontier`` along same-host links.

    In each round a page dies with ``probability`` × the share of its same-host parents that
    died in the round before: a page many others link to (a home page, a section index) is
    not killed by one dead sub-page, a page linked only from a removed section follows it.
    """
    killed = np.zeros(graph.n_pages, dtype=bool)
    coo = graph.adjacency.tocoo()
    same_host = graph.hosts[coo.row] == graph.hosts[coo.col]
    sources, targets = coo.row[same_host], coo.col[same_host]
    parents = np.bincount(targets, minlength=graph.n_pages)
    while frontier.any():
        dead_parents = np.bincount(targets, weights=frontier[sources], minlength=graph.n_pages)
        share = np.divide(dead_parents, parents, out=np.zeros(graph.n_pages), where=parents > 0)
        frontier = ~(dead | killed) & (rng.random(graph.n_pages) < probability * share)
        killed |= frontier
    return killed


def simweb_graph(structure: WebStructure) -> LinkGraph:
    """The simulated web's base links (what a crawl at its epoch sees) as a :class:`LinkGraph`."""
    n_pages = structure.page_count
    sources = np.repeat(np.arange(n_pages), np.diff(structure.link_offsets))
    hosts = structure.host_of.astype(np.int64)
    return LinkGraph.from_edges(sources, structure.link_targets, n_pages, hosts=hosts)


def aging_lifecycle(model: AgingModel | None = None, *, over_days: float = 365.0) -> LifecycleModel:
    """A simweb lifecycle model that ages the web by ``model`` within ``over_days`` of its epoch.

    Every page exists at the epoch (the old crawl); each page the model kills dies at a whole
    second drawn uniformly in the ``over_days`` after it, so from ``epoch + over_days·DAY`` on
    the web is fully aged. Dead pages answer 404 (GONE) or 200 with a "not found" body
    (SOFT_404); a dead host (HOST_DOWN) dies as a whole at one such time, with all its
    pages: its name no longer resolves through the server's resolver (410 through the proxy).

    Examples
    --------
    >>> from xyleme.simweb import SimWeb, SimWebSettings
    >>> web = SimWeb(SimWebSettings(hosts=4, pages=400, seed=2), lifecycle=aging_lifecycle())
    >>> bool(web.lifecycles.death.min() > web.settings.epoch)
    True
    """
    model = model or AgingModel()
    if over_days <= 0:
        raise ValueError(f"over_days must be positive, not {over_days}")

    def lifecycle(structure: WebStructure) -> Lifecycles:
        fate = age_graph(simweb_graph(structure), model).fate
        n_pages = structure.page_count
        epoch = structure.settings.epoch
        dead = np.flatnonzero(fate != Fate.ALIVE)
        rng = np.random.default_rng([model.seed, 1])
        death = np.full(n_pages, math.inf)
        death[dead] = epoch + np.ceil(rng.uniform(1.0, over_days * DAY, dead.size))
        host_down = fate == Fate.HOST_DOWN
        host_death = np.full(structure.host_count, math.inf)
        down_hosts = np.unique(structure.host_of[host_down])
        host_death[down_hosts] = epoch + np.ceil(rng.uniform(1.0, over_days * DAY, down_hosts.size))
        death[host_down] = host_death[structure.host_of[host_down]]
        status = np.full(n_pages, 404, dtype=np.int16)
        status[fate == Fate.SOFT_404] = SOFT_404
        status[host_down] = 410
        return Lifecycles(
            birth=np.full(n_pages, epoch), death=death, dead_status=status, host_death=host_death
        )

    return lifecycle
