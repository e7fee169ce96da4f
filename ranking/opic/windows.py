"""History windows of Adaptive OPIC (OPIC paper §3.2–3.3): how a page's past cash is kept.

OPIC credits a page's cash to its history each time the page is read. The *window* decides
what of that history is remembered, and so how fast the estimate forgets an old graph:

* :class:`FullHistory` — static OPIC (§2): every credit since the start, estimate
  ``(H[k] + C[k]) / (G + 1)``.
* :class:`Interpolation` — the Xyleme policy (§3.3): per page one interpolated history ``H[i]``
  (cash over a window of ``T`` before the last read) and the G-time of that read.
* :class:`MeasureWindow` — stored *measures* (cash, G-time of the read): the last ``k``
  (:func:`variable_window`) or those of the last ``T`` with an optional minimum number
  (:func:`fixed_window`, the paper's "Improved Fixed Window" when the minimum is > 0).

Time is the paper's clock, the G-time: ``G`` is the total cash ever credited to histories.
The total cash is 1, so ``G`` grows by about 1 each time every page has been read once; a
window of ``T`` G-units spans about ``T`` crawls of the graph, whatever the wall-clock speed.

Every window answers :meth:`rates`: the cash a page receives per unit of G-time (Σ ≈ 1), the
importance estimate before normalisation. A page that was never read starts with a *prior*
history (§3.3, "default history of recently introduced pages"): ``prior_rate`` per G-unit.
"""

from __future__ import annotations

import math
from typing import ClassVar, Protocol

import numpy as np


class HistoryWindow(Protocol):
    """What OPIC needs of a window policy; OPIC owns the page count and the clock."""

    kind: ClassVar[str]

    def resize(self, capacity: int) -> None:
        """Make room for ``capacity`` pages (existing pages keep their state)."""
        ...

    def introduce(self, ids: np.ndarray, g: float, prior_rate: float) -> None:
        """Pages ``ids`` are new at G-time ``g``, with a prior importance rate."""
        ...

    def record(self, page: int, cash: float, g: float) -> None:
        """``page`` was read at G-time ``g`` and ``cash`` was credited to its history."""
        ...

    def rates(self, cash: np.ndarray, g: float) -> np.ndarray:
        """Cash per G-unit of pages ``0..len(cash)-1`` given their cash not yet credited."""
        ...

    def measures_per_page(self, n: int) -> float:
        """Mean number of stored measures (cash, G-time) per page: the storage cost (Fig. 5)."""
        ...

    def params(self) -> dict[str, float]:
        """The constructor arguments, to rebuild the window from a snapshot."""
        ...

    def arrays(self, n: int) -> dict[str, np.ndarray]:
        """The per-page state of pages ``0..n-1``, for a snapshot."""
        ...

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        """Restore the per-page state saved by :meth:`arrays` (after :meth:`resize`)."""
        ...


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    """``array`` copied into a longer one (first axis), the new rows zero."""
    if capacity <= array.shape[0]:
        return array
    bigger = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


class PerPageState:
    """Per-page numpy arrays, named in :attr:`PAGE_ARRAYS`, grown and saved together."""

    PAGE_ARRAYS: ClassVar[tuple[str, ...]] = ()

    def resize(self, capacity: int) -> None:
        """Make room for ``capacity`` pages (existing pages keep their state)."""
        for name in self.PAGE_ARRAYS:
            setattr(self, name, _grown(getattr(self, name), capacity))

    def arrays(self, n: int) -> dict[str, np.ndarray]:
        """The state of pages ``0..n-1``, by array name, for a snapshot."""
        return {name: getattr(self, name)[:n] for name in self.PAGE_ARRAYS}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        """Restore the state saved by :meth:`arrays` (after :meth:`resize`)."""
        for name in self.PAGE_ARRAYS:
            values = arrays[name]
            getattr(self, name)[: values.shape[0]] = values


class FullHistory(PerPageState):
    """Static OPIC (§2): ``H[i]`` is all the cash ever credited to page ``i``.

    The estimate is the paper's ``(H[k] + C[k]) / (G + 1)``: it converges to the fixpoint on
    a static graph (Theorem 2.1) but never forgets, so it suits a graph that does not change.
    The prior of new pages is ignored: a default history would break ``G = Σ H``.
    """

    kind: ClassVar[str] = "full"
    PAGE_ARRAYS: ClassVar[tuple[str, ...]] = ("history",)

    def __init__(self) -> None:
        self.history = np.zeros(0)

    def introduce(self, ids: np.ndarray, g: float, prior_rate: float) -> None:
        self.history[ids] = 0.0

    def record(self, page: int, cash: float, g: float) -> None:
        self.history[page] += cash

    def rates(self, cash: np.ndarray, g: float) -> np.ndarray:
        return (self.history[: cash.shape[0]] + cash) / (g + 1.0)

    def measures_per_page(self, n: int) -> float:
        return 1.0

    def params(self) -> dict[str, float]:
        return {}


class Interpolation(PerPageState):
    """Interpolated history over a window of ``span`` G-units (§3.3, Figure 1; Xyleme's policy).

    Per page: ``H[i]``, the cash estimated to have reached ``i`` during the ``span`` before its
    last read, and ``last[i]``, the G-time of that read. When ``i`` is read again at G-time
    ``G`` with cash ``C[i]`` (gathered linearly since ``last[i]``)::

        H[i] ← H[i]·(T − (G − last[i]))/T + C[i]   if G − last[i] < T
        H[i] ← C[i]·T/(G − last[i])                 otherwise

    The rate of a page is the same update applied *now* to its current cash, divided by
    ``T``: one measure per page, whatever the crawl speed.
    """

    kind: ClassVar[str] = "interpolation"
    PAGE_ARRAYS: ClassVar[tuple[str, ...]] = ("history", "last")

    def __init__(self, span: float = 4.0) -> None:
        if not span > 0:
            raise ValueError(f"the interpolation window must be positive, got {span!r}")
        self.span = float(span)
        self.history = np.zeros(0)
        self.last = np.zeros(0)

    def introduce(self, ids: np.ndarray, g: float, prior_rate: float) -> None:
        self.history[ids] = prior_rate * self.span
        self.last[ids] = g

    def record(self, page: int, cash: float, g: float) -> None:
        elapsed = g - self.last[page]
        if elapsed < self.span:
            self.history[page] = self.history[page] * (self.span - elapsed) / self.span + cash
        else:
            self.history[page] = cash * self.span / elapsed
        self.last[page] = g

    def rates(self, cash: np.ndarray, g: float) -> np.ndarray:
        n = cash.shape[0]
        elapsed = g - self.last[:n]
        inside = elapsed < self.span
        interpolated = np.where(
            inside,
            self.history[:n] * (self.span - elapsed) / self.span + cash,
            cash * self.span / np.maximum(elapsed, self.span),
        )
        return interpolated / self.span

    def measures_per_page(self, n: int) -> float:
        return 1.0

    def params(self) -> dict[str, float]:
        return {"span": self.span}


class MeasureWindow(PerPageState):
    """Stored measures (cash credited, G-time of the read) per page, in a ring of ``capacity``.

    A page's rate is the cash of its kept measures plus its current cash, over the G-time
    since the read *before* its oldest kept measure (``start``): exact accounting of the cash
    it received in that interval. Measures are dropped when the ring is full (Variable
    Window: the last ``capacity`` reads) and, if ``span`` is finite, when older than ``G −
    span`` while more than ``min_measures`` remain (Fixed Window; "Improved Fixed Window"
    with ``min_measures > 0``, §3.3 and §4.2). For a Fixed Window ``capacity`` only bounds
    memory: a page read more than ``capacity`` times within the span loses its oldest reads.

    A new page holds one pseudo-measure, ``prior_rate·prior_span`` of cash over the
    ``prior_span`` before its introduction, so its rate starts at the prior; its first read
    replaces it, since from then on the page's own cash (received since its introduction)
    says more than the prior.
    """

    kind: ClassVar[str] = "measures"
    PAGE_ARRAYS: ClassVar[tuple[str, ...]] = (
        "cash",
        "when",
        "count",
        "oldest",
        "start",
        "has_prior",
    )

    def __init__(
        self,
        capacity: int,
        span: float = math.inf,
        min_measures: int = 0,
        prior_span: float = 1.0,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"a measure window keeps at least one measure, got {capacity!r}")
        if not span > 0 or not prior_span > 0:
            raise ValueError("window spans must be positive")
        if not 0 <= min_measures <= capacity:
            raise ValueError(f"min_measures must lie in 0..{capacity}, got {min_measures!r}")
        self.capacity = int(capacity)
        self.span = float(span)
        self.min_measures = int(min_measures)
        self.prior_span = float(prior_span)
        self.cash = np.zeros((0, self.capacity))
        self.when = np.zeros((0, self.capacity))
        self.count = np.zeros(0, dtype=np.int32)
        self.oldest = np.zeros(0, dtype=np.int32)
        self.start = np.zeros(0)
        self.has_prior = np.zeros(0, dtype=bool)

    def introduce(self, ids: np.ndarray, g: float, prior_rate: float) -> None:
        self.cash[ids] = 0.0
        self.when[ids] = 0.0
        self.cash[ids, 0] = prior_rate * self.prior_span
        self.when[ids, 0] = g
        self.count[ids] = 1
        self.oldest[ids] = 0
        self.start[ids] = g - self.prior_span
        self.has_prior[ids] = True

    def _drop_oldest(self, page: int) -> None:
        slot = self.oldest[page]
        self.start[page] = self.when[page, slot]
        self.cash[page, slot] = 0.0
        self.oldest[page] = (slot + 1) % self.capacity
        self.count[page] -= 1

    def record(self, page: int, cash: float, g: float) -> None:
        if self.has_prior[page]:
            self._drop_oldest(page)
            self.has_prior[page] = False
        if self.count[page] == self.capacity:
            self._drop_oldest(page)
        slot = (self.oldest[page] + self.count[page]) % self.capacity
        self.cash[page, slot] = cash
        self.when[page, slot] = g
        self.count[page] += 1
        horizon = g - self.span
        while (
            self.count[page] > max(self.min_measures, 1)
            and self.when[page, self.oldest[page]] < horizon
        ):
            self._drop_oldest(page)

    def rates(self, cash: np.ndarray, g: float) -> np.ndarray:
        n = cash.shape[0]
        kept = self.cash[:n].sum(axis=1)
        return (kept + cash) / np.maximum(g - self.start[:n], 1e-300)

    def measures_per_page(self, n: int) -> float:
        return float(self.count[:n].mean()) if n else 0.0

    def params(self) -> dict[str, float]:
        return {
            "capacity": self.capacity,
            "span": self.span,
            "min_measures": self.min_measures,
            "prior_span": self.prior_span,
        }


def variable_window(measures: int = 8, prior_span: float = 1.0) -> MeasureWindow:
    """Variable Window (§3.3): the last ``measures`` reads of each page."""
    return MeasureWindow(capacity=measures, prior_span=prior_span)


def fixed_window(
    span: float, min_measures: int = 0, max_measures: int = 32, prior_span: float | None = None
) -> MeasureWindow:
    """Fixed Window (§3.3): the reads of the last ``span`` G-units, at least ``min_measures``.

    ``min_measures > 0`` is the paper's "Improved Fixed Window" (§4.2 used 3); ``max_measures``
    bounds the memory of pages read very often (their oldest reads are forgotten first).
    """
    return MeasureWindow(
        capacity=max_measures,
        span=span,
        min_measures=min_measures,
        prior_span=span if prior_span is None else prior_span,
    )


WINDOW_KINDS: dict[str, type] = {
    FullHistory.kind: FullHistory,
    Interpolation.kind: Interpolation,
    MeasureWindow.kind: MeasureWindow,
}
"""Window classes by :attr:`kind`, to rebuild a window from a snapshot."""
