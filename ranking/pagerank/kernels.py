"""The compiled inner loops of sliced ranking (numba): one implementation of each.

Everything that touches every edge or every page is here, written as plain loops that numba
compiles, so no N-sized temporary is ever allocated (the vectors may be memory-mapped files
larger than the memory budget). The Python side only slices, schedules and checks.
"""

from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def count_degrees(src: np.ndarray, dst: np.ndarray, outdeg: np.ndarray, indeg: np.ndarray) -> None:
    """Add one chunk of edges to the out- and in-degree counters."""
    for e in range(src.shape[0]):
        outdeg[src[e]] += 1
        indeg[dst[e]] += 1


@_jit
def balanced_boundaries(
    indeg: np.ndarray, n_slices: int, bytes_per_edge: int, bytes_per_row: int
) -> np.ndarray:
    """Cut the pages 0…N into ``n_slices`` consecutive ranges of about equal slice bytes.

    A slice's bytes are ``bytes_per_row`` per destination page plus ``bytes_per_edge`` per
    in-link; range k ends at the first page where the running total passes (k+1)/S of it.
    """
    n = indeg.shape[0]
    total = 0.0
    for j in range(n):
        total += bytes_per_row + bytes_per_edge * indeg[j]
    bounds = np.empty(n_slices + 1, dtype=np.int64)
    bounds[0] = 0
    running = 0.0
    k = 1
    for j in range(n):
        running += bytes_per_row + bytes_per_edge * indeg[j]
        while k < n_slices and running >= total * k / n_slices:
            bounds[k] = j + 1
            k += 1
    while k <= n_slices:
        bounds[k] = n
        k += 1
    return bounds


@_jit
def scatter_into_slice(
    src: np.ndarray, dst: np.ndarray, lo: int, cursor: np.ndarray, slice_src: np.ndarray
) -> None:
    """Counting-sort one chunk of a slice's edges by destination (CSC order)."""
    for e in range(src.shape[0]):
        row = dst[e] - lo
        slice_src[cursor[row]] = src[e]
        cursor[row] += 1


@_jit
def gauss_seidel_slice(
    indptr: np.ndarray,
    slice_src: np.ndarray,
    lo: int,
    source: np.ndarray,
    outdeg: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    dangling: float,
    in_place: bool,
    renormalise: bool,
    out: np.ndarray,
) -> tuple[float, float, float]:
    """Compute the direct ranking of the pages ``lo…lo+rows`` from their in-links.

    ``source`` holds x_i / OutDeg(i) for pages with links and x_i for dangling pages (no
    edge ever reads a dangling page, so one vector serves both and each edge costs one
    random read). New values go to ``out``.

    Gauss-Seidel (``in_place``) passes the ranking vector itself as ``source`` and its slice
    as ``out``, so later rows read new values at once; it solves each page's own equation
    exactly, self-links included (x_j = (rest)/(1 − c·loops_j/OutDeg(j))), and keeps the
    dangling mass current page by page. Otherwise every row reads the old values and the
    dangling mass stays frozen: block-Jacobi passes a scratch ``out``, the paper's eq. 6–7
    a copy of the previous vector as ``source``. A ``teleport`` of length 1 is uniform.

    Returns (‖Δ‖₁ over the slice, the change of the dangling mass, Σ of the new values).
    """
    uniform = teleport.shape[0] == 1
    delta = 0.0
    mass = 0.0
    change = 0.0
    for row in range(indptr.shape[0] - 1):
        page = lo + row
        inflow = 0.0
        loops = 0
        for e in range(indptr[row], indptr[row + 1]):
            i = slice_src[e]
            if in_place and i == page:
                loops += 1
            else:
                inflow += source[i]
        share = teleport[0] if uniform else teleport[page]
        current = dangling + change if in_place else dangling
        if renormalise:
            new = (damping * inflow + (1.0 - damping) * share) / (1.0 - damping * current)
        else:
            new = damping * inflow + (damping * current + 1.0 - damping) * share
        degree = outdeg[page]
        if loops > 0:
            new /= 1.0 - damping * loops / degree
        mass += new
        if degree > 0:
            delta += abs(new - source[page] * degree)
            out[row] = new / degree
        else:
            delta += abs(new - source[page])
            change += new - source[page]
            out[row] = new
    return delta, change, mass


@_jit
def mark_self_links(indptr: np.ndarray, slice_src: np.ndarray, lo: int, flags: np.ndarray) -> None:
    """flags[j] = 1 for the pages of the slice that link to themselves, else 0."""
    for row in range(indptr.shape[0] - 1):
        page = lo + row
        flags[page] = 0
        for e in range(indptr[row], indptr[row + 1]):
            if slice_src[e] == page:
                flags[page] = 1
                break


@_jit
def inverse_gauss_seidel_slice(
    indptr: np.ndarray,
    slice_src: np.ndarray,
    lo: int,
    outdeg: np.ndarray,
    self_linked: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    r: float,
    interest: np.ndarray,
    children_sum: np.ndarray,
    weights: np.ndarray,
    weights_damping: float,
    lift: float,
    weights_out: np.ndarray,
) -> tuple[float, float]:
    """Update the interest of the pages ``lo…lo+rows`` in place (Gauss-Seidel, §5.2), and
    make the Jacobi step of the bound's weights in the same pass over the in-links.

    ``children_sum[i]`` is kept equal to Σ_{j ∈ Out(i)} interest[j] at all times, so page
    j's new value x_j = r·(c·children_sum[j]/OutDeg(j) + (1 − c)·E'_j) reads the newest
    interest of every child; its own equation is solved exactly for self-links (a page
    linking mostly to itself is otherwise a mode that shrinks only by r·c a sweep), unless
    r·c·loops/OutDeg ≥ 1, possible while r is far from its limit, where it reads its old
    value instead (the same fixed point either way); ``self_linked`` (from
    :func:`mark_self_links`) spares counting the loops of the other pages. The change of
    x_j is then pushed to the sums of its parents, the sources of the slice's in-links of
    j.

    With ``weights_damping`` s > 0, the same loop over j's in-links gathers (M·w)_j from
    ``weights`` (w/OutDeg, w for pages without links, as the direct vector is stored):
    h_j = w_j − s·(M·w)_j (the certificate of :mod:`ranking.pagerank.inverse_bound`, exact:
    ``weights`` is not written) and the next w_j = 1 + ``lift``·w_j + s·(M·w)_j, stored like
    ``weights`` into ``weights_out`` (one value per page of the slice). The parent i of a
    link is then read once for both vectors. Returns (Σ |change| of the interest over the
    slice, min h over the slice, inf without weights).
    """
    moved = 0.0
    lowest = np.inf
    sweep_weights = weights_damping > 0.0
    for row in range(indptr.shape[0] - 1):
        page = lo + row
        degree = outdeg[page]
        new = (1.0 - damping) * teleport[page]
        if degree > 0:
            loops = 0
            if self_linked[page]:
                for e in range(indptr[row], indptr[row + 1]):
                    if slice_src[e] == page:
                        loops += 1
            own = r * damping * loops / degree if loops > 0 else 0.0
            if 0.0 < own < 1.0:
                inflow = children_sum[page] - loops * interest[page]
                new = r * (damping * inflow / degree + new) / (1.0 - own)
            else:
                new = r * (damping * children_sum[page] / degree + new)
        else:
            new *= r
        change = new - interest[page]
        if change != 0.0:
            interest[page] = new
            moved += abs(change)
        if sweep_weights:
            gathered = 0.0
            if change != 0.0:
                for e in range(indptr[row], indptr[row + 1]):
                    parent = slice_src[e]
                    gathered += weights[parent]
                    children_sum[parent] += change
            else:
                for e in range(indptr[row], indptr[row + 1]):
                    gathered += weights[slice_src[e]]
            w = weights[page] * degree if degree > 0 else weights[page]
            lowest = min(lowest, w - weights_damping * gathered)
            ahead = 1.0 + lift * w + weights_damping * gathered
            weights_out[row] = ahead / degree if degree > 0 else ahead
        elif change != 0.0:
            for e in range(indptr[row], indptr[row + 1]):
                children_sum[slice_src[e]] += change
    return moved, lowest


@_jit
def inverse_close_sweep(
    interest: np.ndarray,
    children_sum: np.ndarray,
    outdeg: np.ndarray,
    teleport: np.ndarray,
    damping: float,
) -> tuple[float, float]:
    """Normalise the interest to ℓ₁ norm 1 (with the children sums, which are linear in it).

    Returns (‖x‖₁ before normalising, the next r of eq. 7: 1/‖c·Mᵗ·x + (1 − c)·E'‖₁ for the
    normalised x), the latter read from the children sums without touching the links.
    """
    total = 0.0
    for i in range(interest.shape[0]):
        total += interest[i]
    spread = 0.0
    shrink = 1.0 / total
    for i in range(interest.shape[0]):
        interest[i] *= shrink
        children_sum[i] *= shrink
        degree = outdeg[i]
        spread += (1.0 - damping) * teleport[i]
        if degree > 0:
            spread += damping * children_sum[i] / degree
    return total, 1.0 / spread


@_jit
def extrapolate(current: np.ndarray, saved: np.ndarray, decay: float) -> None:
    """current ← (current − decay·saved)/(1 − decay), in place (no N-sized temporary).

    If current = x* + decay·e and saved = x* + e (one mode of the error, shrunk by ``decay``
    between the two), the result is x*: the extrapolation of :mod:`ranking.pagerank.inverse`.
    """
    keep = 1.0 / (1.0 - decay)
    for i in range(current.shape[0]):
        current[i] = (current[i] - decay * saved[i]) * keep


@_jit
def inverse_scatter_slice(
    indptr: np.ndarray, slice_src: np.ndarray, lo: int, interest: np.ndarray, acc: np.ndarray
) -> None:
    """Add, for every link i → j with j in the slice, the interest of j to acc[i] (a Jacobi
    sweep of eq. 6–7, closed by :func:`inverse_finish_sweep`)."""
    for row in range(indptr.shape[0] - 1):
        value = interest[lo + row]
        if value != 0.0:
            for e in range(indptr[row], indptr[row + 1]):
                acc[slice_src[e]] += value


@_jit
def inverse_finish_sweep(
    acc: np.ndarray,
    outdeg: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    interest: np.ndarray,
    weights: np.ndarray,
) -> tuple[float, float, float, float]:
    """Close an inverse sweep: y = c·acc/OutDeg + (1−c)·E', then x = y/‖y‖₁ (eq. 6–7).

    Writes the new interest in place and zeroes ``acc`` for the next sweep. Returns
    (‖x_new − x_old‖₁, ‖y‖₁, Σ ŵ_i·|x_new − x_old|_i, max over x_old_i > 0 of
    x_old_i/x_new_i), ŵ being ``weights`` stored like the direct vector (divided by OutDeg
    where it is not 0): the last two are the residual and the Collatz–Wielandt ratio of
    :mod:`ranking.pagerank.inverse_bound` for x_old (whose eq. 6–7 image is x_new). The
    normalisation factor r of eq. 7 is 1/‖y‖₁.
    """
    total = 0.0
    for i in range(acc.shape[0]):
        degree = outdeg[i]
        y = (1.0 - damping) * teleport[i]
        if degree > 0:
            y += damping * acc[i] / degree
        acc[i] = y
        total += y
    delta = 0.0
    weighted = 0.0
    ratio = 0.0
    for i in range(acc.shape[0]):
        new = acc[i] / total
        change = abs(new - interest[i])
        delta += change
        weighted += change * (weights[i] * outdeg[i] if outdeg[i] > 0 else weights[i])
        if interest[i] > 0.0:
            ratio = max(ratio, interest[i] / new) if new > 0.0 else np.inf
        interest[i] = new
        acc[i] = 0.0
    return delta, total, weighted, ratio


@_jit
def inverse_residual(
    interest: np.ndarray,
    children_sum: np.ndarray,
    outdeg: np.ndarray,
    teleport: np.ndarray,
    damping: float,
    r: float,
    weights: np.ndarray,
) -> tuple[float, float, float]:
    """The eq. 6–7 image y = r·(c·Mᵗ·x + (1 − c)·E') of the normalised interest x, read from
    its children sums (no scan, nothing written), measured against x.

    Returns (Σ ŵ_i·|y_i − x_i|, max over x_i > 0 of x_i/y_i, min x_i), ŵ being ``weights``
    stored like the direct vector: the residual, the Collatz–Wielandt ratio and the sign
    check of :mod:`ranking.pagerank.inverse_bound`.
    """
    weighted = 0.0
    ratio = 0.0
    lowest = np.inf
    for i in range(interest.shape[0]):
        degree = outdeg[i]
        y = (1.0 - damping) * teleport[i]
        if degree > 0:
            y += damping * children_sum[i] / degree
        y *= r
        x = interest[i]
        weighted += abs(y - x) * (weights[i] * degree if degree > 0 else weights[i])
        if x > 0.0:
            ratio = max(ratio, x / y) if y > 0.0 else np.inf
        lowest = min(lowest, x)
    return weighted, ratio, lowest


@_jit
def weights_jacobi_slice(
    indptr: np.ndarray,
    slice_src: np.ndarray,
    lo: int,
    source: np.ndarray,
    outdeg: np.ndarray,
    damping: float,
    lift: float,
    out: np.ndarray,
) -> float:
    """One Jacobi step of the interest bound's weights over the pages of a slice.

    ``source`` holds w/OutDeg (w for pages without links), like the direct vector. For each
    page, (M·w)_j from its in-links, then h_j = w_j − s·(M·w)_j (exact: the certificate of
    :mod:`ranking.pagerank.inverse_bound`) and the next w_j = 1 + ``lift``·w_j + s·(M·w)_j, stored
    like ``source`` into ``out``. Returns min h over the slice.
    """
    lowest = np.inf
    for row in range(indptr.shape[0] - 1):
        page = lo + row
        inflow = 0.0
        for e in range(indptr[row], indptr[row + 1]):
            inflow += source[slice_src[e]]
        degree = outdeg[page]
        w = source[page] * degree if degree > 0 else source[page]
        lowest = min(lowest, w - damping * inflow)
        new = 1.0 + lift * w + damping * inflow
        out[row] = new / degree if degree > 0 else new
    return lowest


@_jit
def unscale(scaled: np.ndarray, outdeg: np.ndarray, out: np.ndarray) -> None:
    """x_i = scaled_i · OutDeg(i) for pages with links, scaled_i for dangling pages."""
    for i in range(scaled.shape[0]):
        degree = outdeg[i]
        out[i] = scaled[i] * degree if degree > 0 else scaled[i]


@_jit
def dangling_mass(scaled: np.ndarray, outdeg: np.ndarray) -> float:
    """Σ of the values of the pages without links (stored unscaled in ``scaled``)."""
    mass = 0.0
    for i in range(scaled.shape[0]):
        if outdeg[i] == 0:
            mass += scaled[i]
    return mass


@_jit
def scale(values: np.ndarray, outdeg: np.ndarray, out: np.ndarray) -> float:
    """The inverse of :func:`unscale`; returns the dangling mass Σ values over dangling pages."""
    dangling = 0.0
    for i in range(values.shape[0]):
        degree = outdeg[i]
        if degree > 0:
            out[i] = values[i] / degree
        else:
            out[i] = values[i]
            dangling += values[i]
    return dangling
