"""Small graphs and dense reference solutions for the ranking tests."""

from __future__ import annotations

import numpy as np


def random_graph(n: int, links: int, *, dangling: float = 0.15, seed: int = 0):
    """A random graph of ``n`` pages, about ``links`` distinct links per linking page, with a
    share of dangling pages and some host-like locality (ids close together link more)."""
    rng = np.random.default_rng(seed)
    linking = np.flatnonzero(rng.random(n) >= dangling)
    src = np.repeat(linking, links)
    near = (src + rng.integers(-5, 6, src.size)) % n
    far = rng.integers(0, n, src.size)
    dst = np.where(rng.random(src.size) < 0.6, near, far)
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    return pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32)


def link_matrix(src, dst, n) -> np.ndarray:
    """Dense M with M[j, i] = multiplicity/OutDeg(i) for links i → j (dangling columns 0)."""
    matrix = np.zeros((n, n))
    np.add.at(matrix, (dst, src), 1.0)
    outdeg = matrix.sum(axis=0)
    return np.divide(matrix, outdeg, out=np.zeros_like(matrix), where=outdeg > 0)


def dense_pagerank(src, dst, n, damping=0.85, personalization=None) -> np.ndarray:
    """Solve (I − c·(M + E·dᵀ))·x = (1 − c)·E exactly."""
    teleport = (
        np.full(n, 1.0 / n) if personalization is None else personalization / personalization.sum()
    )
    matrix = link_matrix(src, dst, n)
    dangling = matrix.sum(axis=0) == 0
    full = matrix + np.outer(teleport, dangling)
    return np.linalg.solve(np.eye(n) - damping * full, (1 - damping) * teleport)


def perron(matrix: np.ndarray) -> tuple[np.ndarray, float]:
    """The non-negative Perron vector (ℓ₁ norm 1) of a non-negative matrix, and its root."""
    values, vectors = np.linalg.eig(matrix)
    k = int(np.argmax(values.real))
    vector = np.abs(vectors[:, k].real)
    return vector / vector.sum(), float(values[k].real)


def dense_inverse(src, dst, n, teleport, damping=0.85) -> tuple[np.ndarray, float]:
    """PR' = r·(c·Mᵗ·x + (1−c)·E'), ‖x‖₁ = 1: Perron vector of c·Mᵗ + (1−c)·E'·1ᵀ; r = 1/ρ."""
    teleport = teleport / teleport.sum()
    m_out = link_matrix(src, dst, n).T
    vector, root = perron(damping * m_out + (1 - damping) * np.outer(teleport, np.ones(n)))
    return vector, 1.0 / root


def dense_renormalised(src, dst, n, damping=0.85) -> np.ndarray:
    """The fixed point of eq. 6–7: Perron vector of c·M + (1−c)·E·1ᵀ."""
    matrix = link_matrix(src, dst, n)
    return perron(damping * matrix + (1 - damping) * np.full((n, n), 1.0 / n))[0]


def literal_inverse(src, dst, n, teleport, damping=0.85, tol=1e-14) -> tuple[np.ndarray, int]:
    """Eq. 6–7 on Mᵗ as written, x ← r·(c·Mᵗ·x + (1−c)·E') from x = E' (Jacobi), until the
    ℓ₁ change is below ``tol``: the paper's PR(M_Out, E', E'). Returns (x, sweeps)."""
    teleport = teleport / teleport.sum()
    m_out = link_matrix(src, dst, n).T
    x = teleport
    for sweep in range(1, 100_000):
        y = damping * (m_out @ x) + (1 - damping) * teleport
        y /= y.sum()
        if np.abs(y - x).sum() <= tol:
            return y, sweep
        x = y
    raise AssertionError("eq. 6–7 did not converge")


def sparse_random_graph(seed: int):
    """A small, sparse random graph (often fewer links than pages, some self-links) and its
    XML pages: where r·c can exceed 1 and Gauss-Seidel on the interest can oscillate."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    links = int(rng.integers(1, 4 * n))
    src, dst = rng.integers(0, n, links), rng.integers(0, n, links)
    if rng.random() < 0.5:
        looped = np.arange(int(rng.integers(1, n)))
        src, dst = np.concatenate([src, looped]), np.concatenate([dst, looped])
    is_xml = rng.random(n) < rng.uniform(0.05, 0.6)
    is_xml[0] |= not is_xml.any()
    return src, dst, is_xml
