"""The rankings of a site's true link matrix, computed without the ``ranking`` package.

Importance is networkx's PageRank (``nx.pagerank``), which hands the rank of a page without
links out uniformly, as ``ranking`` does (docs/ranking.md). Interest is eq. 6–7 of §5.2 of
the acquisition paper run literally with scipy.sparse on the inverse graph:
x ← r·(c·Mᵗ·x + (1 − c)·E'), Mᵗ[i, j] = 1/OutDeg(i) for j ∈ Out(i), E' uniform on the XML
pages, r the factor that keeps ‖x‖₁ = 1, from x = E' until the relative ℓ₁ change is below
``tol``. These are the reference the daemon's rankings of the same site are compared with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

DAMPING = 0.85
"""c, as the ranking settings' default (``[ranking] damping``)."""


def importance(n: int, edges: Sequence[tuple[int, int]], damping: float = DAMPING) -> np.ndarray:
    """Direct PageRank of the graph of ``n`` pages (networkx; dangling pages uniform)."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    ranks = nx.pagerank(graph, alpha=damping, tol=1e-12, max_iter=10_000)
    return np.array([ranks[i] for i in range(n)])


def interest(
    n: int,
    edges: Sequence[tuple[int, int]],
    is_xml: Sequence[bool],
    damping: float = DAMPING,
    tol: float = 1e-12,
    max_iterations: int = 100_000,
) -> np.ndarray:
    """Eq. 6–7 over E' uniform on the XML pages (§5.2), by power iteration."""
    xml = np.asarray(is_xml, dtype=bool)
    if not xml.any():
        raise ValueError("interest needs at least one XML page (E' is uniform on them)")
    pairs = np.array(sorted(set(edges)), dtype=np.int64).reshape(-1, 2)
    out_degree = np.bincount(pairs[:, 0], minlength=n).astype(float)
    weights = 1.0 / out_degree[pairs[:, 0]]
    m_t = sparse.csr_matrix((weights, (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    teleport = xml / xml.sum()
    x = teleport.copy()
    for _ in range(max_iterations):
        y = damping * (m_t @ x) + (1 - damping) * teleport
        y /= y.sum()  # r = ‖x‖₁ / ‖c·Mᵗ·x + (1 − c)·E'‖₁ with ‖x‖₁ = 1 (eq. 7)
        change = np.abs(y - x).sum()
        x = y
        if change <= tol:
            return x
    raise RuntimeError(f"eq. 6-7 did not converge in {max_iterations} iterations")


def top(scores: np.ndarray, labels: Sequence[str], k: int = 20) -> list[str]:
    """The labels of the ``k`` highest scores (ties broken by label, so it is stable)."""
    order = sorted(range(len(labels)), key=lambda i: (-scores[i], labels[i]))
    return [labels[i] for i in order[:k]]
