"""The aging model of the LiveRank benchmark: each mechanism does what its doc says."""

import aiohttp
import numpy as np
import pytest

from benchmarks.liverank_webgraph import synthetic_web
from metadata import ManualClock
from ranking.liverank import personalised_pagerank
from xyleme.simweb import DAY, GroundTruth, SimWeb, SimWebServer, SimWebSettings
from xyleme.simweb.aging import (
    AgingModel,
    Fate,
    age_graph,
    aging_lifecycle,
    simweb_graph,
)


@pytest.fixture(scope="module")
def web():
    graph = synthetic_web(20_000, seed=4)
    return graph, personalised_pagerank(graph)


def test_synthetic_web_has_contiguous_hosts_with_home_pages(web):
    graph, _ = web
    assert graph.n_pages == 20_000
    assert (np.diff(graph.hosts) >= 0).all()
    home = np.searchsorted(graph.hosts, np.arange(graph.hosts.max() + 1))
    assert (graph.in_degree[home] > np.median(graph.in_degree)).mean() > 0.9


def test_default_model_leaves_a_paper_like_share_alive(web):
    graph, pagerank = web
    aged = age_graph(graph, pagerank=pagerank)
    assert 0.10 <= aged.alive.mean() <= 0.35
    assert sum(aged.fractions().values()) == pytest.approx(1.0)


def test_dead_hosts_take_all_their_pages(web):
    graph, pagerank = web
    fate = age_graph(graph, AgingModel(host_death=0.5), pagerank=pagerank).fate
    down_hosts = np.unique(graph.hosts[fate == Fate.HOST_DOWN])
    assert down_hosts.size
    assert (fate[np.isin(graph.hosts, down_hosts)] == Fate.HOST_DOWN).all()
    assert not (age_graph(graph, AgingModel(host_death=0.0), pagerank=pagerank).fate == 2).any()


def test_important_pages_survive_more(web):
    graph, pagerank = web
    model = AgingModel(host_death=0.0, host_spread=0.0, death_spread=0.0, importance_effect=3)
    alive = age_graph(graph, model, pagerank=pagerank).alive
    top = pagerank >= np.median(pagerank)
    assert alive[top].mean() > alive[~top].mean() + 0.2


def test_death_spreads_along_same_host_links(web):
    graph, pagerank = web
    calm = age_graph(graph, AgingModel(death_spread=0.0), pagerank=pagerank).alive
    spread = age_graph(graph, AgingModel(death_spread=1.0), pagerank=pagerank).alive
    assert spread.sum() < calm.sum()
    assert not (spread & ~calm).any()  # the cascade only kills


def test_soft_404s_are_dead_pages_on_live_hosts(web):
    graph, pagerank = web
    aged = age_graph(graph, AgingModel(soft_404=0.5), pagerank=pagerank)
    soft = aged.fate == Fate.SOFT_404
    assert soft.any() and not aged.alive[soft].any()
    share = soft.sum() / (soft | (aged.fate == Fate.GONE)).sum()
    assert share == pytest.approx(0.5, abs=0.05)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="host_death"):
        AgingModel(host_death=1.5)
    with pytest.raises(ValueError, match="page_survival"):
        AgingModel(page_survival=1.0)


@pytest.fixture(scope="module")
def aged_simweb():
    settings = SimWebSettings(hosts=8, pages=1500, seed=3).without_faults()
    return SimWeb(settings, lifecycle=aging_lifecycle(AgingModel(seed=5), over_days=30))


def test_aged_simweb_kills_the_pages_the_model_kills(aged_simweb):
    web = aged_simweb
    graph = simweb_graph(web.structure)
    assert graph.adjacency.nnz == len(web.structure.link_targets)
    expected = age_graph(graph, AgingModel(seed=5)).alive
    truth = GroundTruth(web)
    assert truth.alive(web.settings.epoch).all()
    assert (truth.alive(web.settings.epoch + 30 * DAY) == expected).all()
    assert 0.05 < expected.mean() < 0.9


async def test_aged_simweb_serves_dead_pages_as_dead(aged_simweb):
    web = aged_simweb
    fate = age_graph(simweb_graph(web.structure), AgingModel(seed=5)).fate
    expected = {Fate.ALIVE: 200, Fate.GONE: 404, Fate.SOFT_404: 200}
    clock = ManualClock(web.settings.epoch + 30 * DAY)
    async with SimWebServer(web, clock) as server, server.client_session() as session:
        for kind, status in expected.items():
            page = int(np.flatnonzero(fate == kind)[0])
            async with session.get(web.url(page)) as response:
                body = await response.text()
                assert response.status == status, kind
                assert ("<title>Page not found" in body) == (kind == Fate.SOFT_404)
        down = int(np.flatnonzero(fate == Fate.HOST_DOWN)[0])
        with pytest.raises(aiohttp.ClientConnectorDNSError):
            await session.get(web.url(down))
        async with (
            aiohttp.ClientSession() as plain,  # the proxy has no name to refuse
            plain.get(web.url(down), proxy=server.proxy_url) as response,
        ):
            assert response.status == 410


async def test_a_dead_host_resolves_until_it_dies(aged_simweb):
    web = aged_simweb
    host_death = web.lifecycles.host_death
    down = int(np.flatnonzero(np.isfinite(host_death))[0])
    name = web.host_names[down]
    clock = ManualClock(host_death[down] - 1)
    async with SimWebServer(web, clock) as server:
        resolver = server.resolver()
        assert (await resolver.resolve(name, 80))[0]["port"] == server.port
        clock.advance(1)
        with pytest.raises(OSError, match="dead"):
            await resolver.resolve(name, 80)
    pages = web.structure.host_of == down
    assert (web.lifecycles.death[pages] == host_death[down]).all()
    assert not GroundTruth(web).alive(host_death[down])[pages].any()
