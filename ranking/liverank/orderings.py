"""The LiveRank orderings of §2.3–2.4 as pure functions over numpy arrays.

Static orderings (R, I, P) use the snapshot alone; sample-based ones (P_a, P_a^{+/-}, ASF)
re-score the untested pages once the answers for a sample Z are known. Every function here is
vectorised: a 100,000-page graph is ordered in well under a second, PageRank aside.
"""

from __future__ import annotations

import numpy as np

from ranking.errors import InvalidGraph
from ranking.liverank.errors import UnknownStrategy
from ranking.liverank.graph import LinkGraph
from ranking.liverank.pagerank import DAMPING, personalised_pagerank
from ranking.liverank.settings import SAMPLE_KINDS


def random_order(n_pages: int, rng: np.random.Generator) -> np.ndarray:
    """R (§2.3): a uniform random permutation, the reference whose cost is about n/n_a."""
    return rng.permutation(n_pages)


def indegree_order(graph: LinkGraph) -> np.ndarray:
    """I (§2.3): pages by decreasing in-degree, equal in-degrees by increasing id."""
    return np.argsort(-graph.in_degree, kind="stable")


def descending_order(scores: np.ndarray) -> np.ndarray:
    """Pages by decreasing score, equal scores by increasing id (P when ``scores`` is PageRank)."""
    return np.argsort(-np.asarray(scores), kind="stable")


def positions(order: np.ndarray) -> np.ndarray:
    """The inverse permutation: ``positions(order)[page]`` is the page's rank in ``order``."""
    result = np.empty(len(order), dtype=np.int64)
    result[order] = np.arange(len(order))
    return result


def draw_sample(
    kind: str,
    size: int,
    *,
    rng: np.random.Generator,
    pagerank_order: np.ndarray,
    indegree_order: np.ndarray,
) -> np.ndarray:
    """The training set Z (§2.4), in the order it is tested.

    ``random`` draws ``size`` distinct pages uniformly (the paper's best choice for web graphs,
    §4.1.2); ``pagerank`` and ``indegree`` take the top ``size`` pages of P or I.
    """
    n_pages = len(pagerank_order)
    if not 0 <= size <= n_pages:
        raise InvalidGraph(f"a sample of {size} pages does not fit in {n_pages} pages")
    if kind == "random":
        return rng.choice(n_pages, size=size, replace=False)
    if kind == "pagerank":
        return np.asarray(pagerank_order[:size])
    if kind == "indegree":
        return np.asarray(indegree_order[:size])
    raise UnknownStrategy("sample kind", kind, SAMPLE_KINDS)


def live_pagerank(
    graph: LinkGraph, sample: np.ndarray, sample_alive: np.ndarray, *, damping: float = DAMPING
) -> np.ndarray:
    """P_a (§2.4): PageRank whose zap vector X is uniform on the live sampled pages a(Z).

    Activity is assumed to flow along links, so pages the live sample points to (directly or
    not) score high. When no sampled page is alive the scores are all zero and the caller's
    tie-break (static PageRank) decides alone.
    """
    live = np.asarray(sample)[np.asarray(sample_alive, dtype=bool)]
    if live.size == 0:
        return np.zeros(graph.n_pages)
    zap = np.zeros(graph.n_pages)
    zap[live] = 1.0
    return personalised_pagerank(graph, zap, damping=damping)


def double_adaptive_scores(
    graph: LinkGraph, sample: np.ndarray, sample_alive: np.ndarray, *, damping: float = DAMPING
) -> np.ndarray:
    """P_a^{+/-} (§2.4): the live PageRank divided by the "anti"-PageRank of the dead sample.

    The anti-PageRank is eq. (1) with X uniform on the dead sampled pages ā(Z): idleness
    diffuses along links as activity does. As §2.4 prescribes, its zero entries are set to
    its smallest non-zero entry before dividing. With no dead page in the sample there is no
    idleness to diffuse and the scores are P_a's.
    """
    sample_alive = np.asarray(sample_alive, dtype=bool)
    live = live_pagerank(graph, sample, sample_alive, damping=damping)
    dead_pages = np.asarray(sample)[~sample_alive]
    if dead_pages.size == 0:
        return live
    zap = np.zeros(graph.n_pages)
    zap[dead_pages] = 1.0
    anti = personalised_pagerank(graph, zap, damping=damping)
    anti[anti <= 0] = anti[anti > 0].min()
    return live / anti


def site_activity_scores(
    graph: LinkGraph, sample: np.ndarray, sample_alive: np.ndarray
) -> np.ndarray:
    """ASF (§2.4): each page scores its host's live fraction |a(Z_i)|/|Z_i| in the sample.

    Pages of hosts the sample missed score −1, so they come after every sampled host, as in
    §4.1.5 ("unsampled websites are crawled after the sampled ones").
    """
    if graph.hosts is None:
        raise InvalidGraph("active-site first (asf) needs each page's host")
    hosts = graph.hosts
    n_hosts = int(hosts.max(initial=-1)) + 1
    sampled_hosts = hosts[np.asarray(sample)]
    tested = np.bincount(sampled_hosts, minlength=n_hosts)
    found_alive = np.bincount(
        sampled_hosts, weights=np.asarray(sample_alive, dtype=np.float64), minlength=n_hosts
    )
    activity = np.divide(found_alive, tested, out=np.full(n_hosts, -1.0), where=tested > 0)
    return activity[hosts]


def order_after_sample(
    sample: np.ndarray, scores: np.ndarray, tie_positions: np.ndarray
) -> np.ndarray:
    """The pages outside ``sample`` by decreasing score, ties by increasing ``tie_positions``.

    This is the second phase of every sample-based LiveRank: the sample has been tested, the
    rest is tested in this order.
    """
    untested = np.ones(len(scores), dtype=bool)
    untested[np.asarray(sample)] = False
    rest = np.flatnonzero(untested)
    return rest[np.lexsort((tie_positions[rest], -scores[rest]))]
