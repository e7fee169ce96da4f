"""Small graphs and their exact PageRank for the OPIC tests (dense solves, no iteration)."""

from __future__ import annotations

import numpy as np

from ranking.opic import OPIC, PageSelector


def random_graph(rng: np.random.Generator, n: int, max_out: int = 5) -> list[np.ndarray]:
    """Children of each of ``n`` pages: up to ``max_out`` random links, some pages none."""
    return [np.unique(rng.integers(0, n, rng.integers(0, max_out + 1))) for _ in range(n)]


def dense_pagerank(
    children: list[np.ndarray], damping: float, weights: np.ndarray | None = None
) -> np.ndarray:
    """PageRank(c) by a dense linear solve, teleport and dangling pages ∝ ``weights``.

    Solves ``x = M x`` with ``M[:, i] = c·(children of i)/out[i] + (1 − c)·w/W`` (or ``w/W``
    for a page without links) and ``Σ x = 1``: the fixpoint OPIC must reach.
    """
    n = len(children)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    teleport = w / w.sum()
    matrix = np.zeros((n, n))
    for i, kids in enumerate(children):
        if len(kids):
            matrix[kids, i] += damping / len(kids)
            matrix[:, i] += (1.0 - damping) * teleport
        else:
            matrix[:, i] += teleport
    system = np.eye(n) - matrix
    system[0, :] = 1.0
    rhs = np.zeros(n)
    rhs[0] = 1.0
    return np.linalg.solve(system, rhs)


def crawl(opic: OPIC, selector: PageSelector, children: list[np.ndarray], steps: int) -> None:
    """Read ``steps`` pages chosen by ``selector``, reporting each fetch to ``opic``."""
    for _ in range(steps):
        page = selector.next_page()
        opic.on_fetch(page, children[page])
