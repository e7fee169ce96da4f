"""The exchange's loops over a peer's pages, compiled: one pass each, no temporaries.

A slice worker moves a peer's values in and out of its whole-size vectors every sweep: about
9M values each way at 20M pages / 151M links on two workers. numpy's fancy indexing makes
two or three passes and as many 72 MB temporaries for ``acc[pages] += new - old``
(measured here: 105–235 ms, against 29 ms for the loop below), and the interest's figures of
eq. 7 over a worker's range took another three passes (~90 ms) after each sweep: together
about a tenth of a 20M interest sweep on a worker, which one process does not pay.
"""

from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True)


@_jit
def gather(source: np.ndarray, pages: np.ndarray) -> np.ndarray:
    """``source[pages]``, a new array (it is sent: the caller must not reuse it)."""
    out = np.empty(pages.shape[0])
    for i in range(pages.shape[0]):
        out[i] = source[pages[i]]
    return out


@_jit
def put(target: np.ndarray, pages: np.ndarray, values: np.ndarray) -> None:
    """``target[pages] = values``: a peer's newest values of the pages this block reads."""
    for i in range(pages.shape[0]):
        target[pages[i]] = values[i]


@_jit
def add(target: np.ndarray, pages: np.ndarray, values: np.ndarray) -> None:
    """``target[pages] += values`` (``pages`` distinct): a peer's partial sums added."""
    for i in range(pages.shape[0]):
        target[pages[i]] += values[i]


@_jit
def replace_share(
    target: np.ndarray, pages: np.ndarray, values: np.ndarray, heard: np.ndarray
) -> None:
    """A peer's new partial sums replace its last ones: ``target[pages] += values − heard``,
    then ``heard = values`` (``pages`` distinct)."""
    for i in range(pages.shape[0]):
        target[pages[i]] += values[i] - heard[i]
        heard[i] = values[i]


@_jit
def range_figures(
    interest: np.ndarray, acc: np.ndarray, outdeg: np.ndarray, lo: int, hi: int
) -> tuple[float, float]:
    """Σ x and Σ acc/OutDeg (pages with out-links) over ``lo…hi``: a worker's two shares of
    eq. 7's global sums (§5.2)."""
    mass = 0.0
    spread = 0.0
    for j in range(lo, hi):
        mass += interest[j]
        if outdeg[j] > 0:
            spread += acc[j] / outdeg[j]
    return mass, spread
