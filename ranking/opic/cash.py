"""OPIC: on-line page importance computed while crawling (OPIC paper §2–3, Adaptive OPIC §3.3).

Each page holds *cash*. When a page is read its cash is credited to its *history* and handed
on: a share ``c`` split equally among its children, the share ``1 − c`` (all of it for a page
without links) to the *virtual page*, which every page links to and which links to every page
(§1, the "small" edges). The virtual page pays its cash out at once to all known pages in
proportion to their *weight* (1 by default). With equal weights the fixpoint of this graph,
restricted to the real pages, is exactly the PageRank with damping ``c``, uniform teleport and
dangling pages redistributed uniformly — what the ranking module computes, so the two compare
directly. Giving some pages more weight (focused crawling, §3.3: pages suspected to be XML)
turns it into the PageRank personalised to those weights.

The importance estimate of page ``k`` is its history rate normalised to sum 1; with the
:class:`~ranking.opic.windows.FullHistory` window it is the paper's ``(H[k] + C[k]) / (G + 1)``.

How the virtual page pays everyone in O(1): it adds ``V / W`` (``W`` the total weight) to one
running credit ``U``; page ``k`` owns ``weight[k] · (U − base[k])`` of it on top of
``cash[k]``, where ``base[k]`` is ``U`` when the page last settled (was read, got a new
weight, or was introduced). So a fetch costs O(number of children), never O(pages).

Growing graph (§3.3): pages are indexed by URL-Id and the arrays grow as ids appear. A new
page gets discovery cash taken from the virtual page (``discovery_cash`` times the mean cash
per page, times its weight; less if the virtual page holds less at that moment), and in the
windowed policies a default history: the rate measured on recently introduced pages.

Everything is in memory; :meth:`OPIC.snapshot` / :meth:`OPIC.from_snapshot` turn the whole
state into bytes for a checkpoint. Fetches after the last checkpoint are lost on a crash:
their cash moves are simply not credited, and the restored state is a consistent one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ranking.opic.errors import UnknownPage
from ranking.opic.snapshot import StateStore, pack, unpack
from ranking.opic.windows import FullHistory, HistoryWindow, PerPageState

CashListener = Callable[[np.ndarray], None]
"""Called with the ids whose cash changed (see :meth:`OPIC.watch_cash`)."""


_NONE = np.zeros(0, dtype=np.int64)


class OPIC(PerPageState):
    """On-line page importance with cash, history, a virtual page and a history window.

    Parameters
    ----------
    pages : int
        Number of pages known at the start (URL-Ids ``0..pages-1``); they share the total
        cash of 1 equally (§2, ``C[i] := 1/n``). More pages appear as fetches name them.
    damping : float
        ``c``: the share of a read page's cash that goes to its children (PageRank's damping).
    window : HistoryWindow, optional
        The history policy of the estimates; :class:`~ranking.opic.windows.FullHistory`
        (static OPIC) when omitted.
    extra_windows : sequence of HistoryWindow
        More policies fed by the same reads, e.g. to compare them on one crawl.
    discovery_cash : float
        Cash a newly discovered page takes from the virtual page, in units of the mean
        cash per page (``1 / pages``), times its weight.
    new_page_smoothing : float
        Weight of each new measurement in the running mean rate of recently introduced
        pages (the default history of new pages in windowed policies).

    Examples
    --------
    >>> opic = OPIC(pages=3, damping=0.85)
    >>> opic.on_fetch(0, [1, 2])
    >>> round(opic.total_cash(), 12)
    1.0
    >>> opic.estimates().round(3)
    array([0.262, 0.369, 0.369])

    Notes
    -----
    One read of page ``i`` (§2, the OPIC loop): ``H[i] += C[i]``; each child ``j`` gets
    ``c·C[i]/out[i]``; the virtual page gets ``(1 − c)·C[i]`` (or ``C[i]`` when ``out[i] = 0``);
    ``G += C[i]``; ``C[i] := 0``. Total cash stays 1 (Lemma 2.2) and
    ``H[j] + C[j] = C_0[j] + Σ_i share(i→j)·H[i]`` holds at every step (Lemma 2.3), the
    virtual page included. Children are a set: duplicate links count once.

    References
    ----------
    S. Abiteboul, M. Preda, G. Cobena. Adaptive On-Line Page Importance Computation.
    WWW 2003.
    """

    PAGE_ARRAYS = ("_cash", "_base", "_weight", "_reads", "_introduced", "_granted")

    def __init__(
        self,
        pages: int = 0,
        damping: float = 0.85,
        window: HistoryWindow | None = None,
        extra_windows: Sequence[HistoryWindow] = (),
        discovery_cash: float = 1.0,
        new_page_smoothing: float = 0.05,
    ) -> None:
        if not 0.0 <= damping < 1.0:
            raise ValueError(f"damping must lie in [0, 1), got {damping!r}")
        if pages < 0:
            raise ValueError(f"pages must be >= 0, got {pages!r}")
        if discovery_cash < 0:
            raise ValueError(f"discovery_cash must be >= 0, got {discovery_cash!r}")
        if not 0.0 < new_page_smoothing <= 1.0:
            raise ValueError(f"new_page_smoothing must lie in (0, 1], got {new_page_smoothing!r}")
        self.damping = float(damping)
        self.discovery_cash = float(discovery_cash)
        self.new_page_smoothing = float(new_page_smoothing)
        self.windows: list[HistoryWindow] = [window or FullHistory(), *extra_windows]
        self._n = 0
        self._named = 0
        self._cash = np.zeros(0)
        self._base = np.zeros(0)
        self._weight = np.zeros(0)
        self._reads = np.zeros(0, dtype=np.int64)
        self._introduced = np.zeros(0)
        self._granted = np.zeros(0)
        self._g = 0.0
        self._credit = 0.0
        self._total_weight = 0.0
        self._virtual_cash = 1.0
        self._virtual_history = 0.0
        self._new_page_rate: float | None = None
        self._listeners: list[CashListener] = []
        if pages:
            self._name(np.arange(pages))
            self._pay_virtual_cash()

    # -- reading the state ---------------------------------------------------------------

    @property
    def pages(self) -> int:
        """Length of the per-page arrays: the largest known URL-Id plus one."""
        return self._n

    @property
    def known_pages(self) -> int:
        """Number of known pages. URL-Ids below :attr:`pages` that no fetch or
        :meth:`add_pages` named yet (e.g. 0 when ids start at 1) are placeholders: no cash,
        no weight, estimate 0, never selected."""
        return self._named

    def is_known(self, page: int) -> bool:
        """Whether ``page`` is a known page (not a placeholder nor beyond the arrays)."""
        return 0 <= page < self._n and self._weight[page] > 0

    @property
    def g(self) -> float:
        """The G-time: total cash credited to histories so far (the paper's clock, §3.2)."""
        return self._g

    @property
    def window(self) -> HistoryWindow:
        """The window policy behind :meth:`estimates`."""
        return self.windows[0]

    @property
    def virtual_history(self) -> float:
        """Total cash that passed through the virtual page (its history, for Lemma 2.3)."""
        return self._virtual_history

    def cash(self, ids: Iterable[int] | np.ndarray | None = None) -> np.ndarray:
        """Current cash of ``ids`` (all pages when omitted), virtual-page credit included."""
        if ids is None:
            return self._cash[: self._n] + self._weight[: self._n] * (
                self._credit - self._base[: self._n]
            )
        idx = self._checked(ids)
        return self._cash[idx] + self._weight[idx] * (self._credit - self._base[idx])

    def total_cash(self) -> float:
        """Σ cash of all pages plus the virtual page's: 1 at every step (Lemma 2.2)."""
        return float(self.cash().sum()) + self._virtual_cash

    def weights(self) -> np.ndarray:
        """Each page's share weight in the virtual page's payments (1 unless focused)."""
        return self._weight[: self._n].copy()

    def reads(self) -> np.ndarray:
        """How many times each page was read."""
        return self._reads[: self._n].copy()

    def cash_keys(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(weight, key)`` of ``ids``: cash = key + weight·credit, with key fixed until the
        page's own cash changes. Lets a priority structure stay valid while the virtual page
        pays everyone (see :class:`ranking.opic.select.Greedy`)."""
        return self._weight[ids], self._cash[ids] - self._weight[ids] * self._base[ids]

    def cash_key(self, page: int) -> tuple[float, float]:
        """:meth:`cash_keys` of one page, as plain floats."""
        weight = float(self._weight[page])
        return weight, float(self._cash[page]) - weight * float(self._base[page])

    @property
    def credit(self) -> float:
        """The running credit per unit of weight paid by the virtual page."""
        return self._credit

    def estimates(self, window: HistoryWindow | None = None) -> np.ndarray:
        """Importance estimate of every page, summing to 1 (§2 and §3.2).

        With :class:`~ranking.opic.windows.FullHistory` this is ``(H[k] + C[k]) / (G + 1)``;
        with another window, the cash rate over that window, normalised.
        """
        chosen = self.windows[0] if window is None else window
        if not any(chosen is attached for attached in self.windows):
            raise ValueError("that window is not fed by this OPIC (pass it as window or extra)")
        if self._n == 0:
            return np.zeros(0)
        rates = chosen.rates(self.cash(), self._g)
        total = rates.sum()
        if total > 0:
            return rates / total
        known = (self._weight[: self._n] > 0).astype(float)
        return known / known.sum()

    def unread_by_cash(self, limit: int) -> np.ndarray:
        """Up to ``limit`` never-read pages, most cash first: the discovery order (Greedy).

        The refresh module's discovery share takes unread pages in this order.
        """
        unread = np.flatnonzero((self._reads[: self._n] == 0) & (self._weight[: self._n] > 0))
        if limit <= 0 or unread.size == 0:
            return np.zeros(0, dtype=np.int64)
        cash = self.cash(unread)
        if limit < unread.size:
            top = np.argpartition(-cash, limit - 1)[:limit]
            unread, cash = unread[top], cash[top]
        order = np.lexsort((unread, -cash))
        return unread[order]

    # -- changing the state --------------------------------------------------------------

    def watch_cash(self, listener: CashListener) -> None:
        """Call ``listener(ids)`` whenever the cash of ``ids`` changes by more than the
        virtual page's equal payments (reads, transfers to children, new pages, weights)."""
        self._listeners.append(listener)

    def add_pages(self, ids: Iterable[int] | np.ndarray) -> None:
        """Make URL-Ids ``ids`` known pages (e.g. seeds), with discovery cash from the virtual
        page (all the cash it holds when OPIC was created without pages)."""
        idx = np.unique(np.asarray(ids, dtype=np.int64))
        if idx.size and idx[0] < 0:
            raise UnknownPage(int(idx[0]))
        new = self._name(idx)
        self._grant_discovery_cash(new)
        self._pay_virtual_cash()
        self._notify(new)

    def set_weight(self, ids: Iterable[int] | np.ndarray, weight: float) -> None:
        """Set the share weight of ``ids`` in the virtual page's payments (focused crawl, §3.3).

        A weight above 1 makes the page collect more of the cash that the virtual page hands
        out at every step, hence read sooner by Greedy; the fixpoint becomes the PageRank
        personalised to the weights.
        """
        if not weight > 0:
            raise ValueError(f"a weight must be positive, got {weight!r}")
        idx = np.unique(self._checked(ids))
        placeholders = idx[self._weight[idx] == 0]
        if placeholders.size:
            raise UnknownPage(int(placeholders[0]))
        self._settle(idx)
        self._total_weight += float(weight * idx.size - self._weight[idx].sum())
        self._weight[idx] = weight
        self._notify(idx)

    def on_fetch(
        self,
        url_id: int,
        child_ids: Iterable[int] | np.ndarray,
        *,
        weights: dict[int, float] | None = None,
    ) -> None:
        """Credit one read of ``url_id`` whose links point to ``child_ids`` (§2, OPIC loop).

        The daemon connects this to the crawler's ``page_fetched`` event. Unknown ids (the
        page itself or its children) become known pages first. ``weights`` optionally sets
        the share weight of some children before the cash moves (e.g. suspected XML pages,
        see :func:`ranking.opic.focus.suspect_xml`).
        """
        page = int(url_id)
        if page < 0:
            raise UnknownPage(page)
        children = np.asarray(child_ids, dtype=np.int64).reshape(-1)
        if children.size > 1 and not (children[1:] > children[:-1]).all():
            children = np.unique(children)
        if children.size and children[0] < 0:
            raise UnknownPage(int(children[0]))
        if weights and not set(weights) <= set(children.tolist()):
            raise ValueError("weights may only name children of the fetched page")
        if weights and min(weights.values()) <= 0:
            raise ValueError("a weight must be positive")
        new = self._name(np.union1d(children, [page])) if self._names_new(page, children) else _NONE
        if weights:
            for child, weight in weights.items():
                self.set_weight([child], weight)
        self._hand_on(self._read(page), children)
        self._grant_discovery_cash(new)
        self._pay_virtual_cash()
        self._notify(np.concatenate([children, [page], new]))

    # -- persistence ---------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The whole state as bytes (numpy ``.npz``): a consistent checkpoint, cash conserved."""
        n = self._n
        header = {
            "damping": self.damping,
            "discovery_cash": self.discovery_cash,
            "new_page_smoothing": self.new_page_smoothing,
            "g": self._g,
            "named": self._named,
            "credit": self._credit,
            "total_weight": self._total_weight,
            "virtual_cash": self._virtual_cash,
            "virtual_history": self._virtual_history,
            "new_page_rate": self._new_page_rate,
            "windows": [{"kind": w.kind, "params": w.params()} for w in self.windows],
        }
        arrays = self.arrays(n)
        for index, window in enumerate(self.windows):
            for name, values in window.arrays(n).items():
                arrays[f"window{index}.{name}"] = values
        return pack(header, arrays)

    @classmethod
    def from_snapshot(cls, data: bytes) -> OPIC:
        """Rebuild the OPIC saved by :meth:`snapshot`; raise :class:`CorruptSnapshot` if the
        bytes are not one."""
        header, arrays, windows = unpack(data)
        opic = cls(
            damping=header["damping"],
            window=windows[0],
            extra_windows=windows[1:],
            discovery_cash=header["discovery_cash"],
            new_page_smoothing=header["new_page_smoothing"],
        )
        n = arrays["_cash"].shape[0]
        opic.resize(n)
        opic._n = n
        opic._named = header["named"]
        opic.load(arrays)
        for index, window in enumerate(windows):
            prefix = f"window{index}."
            window.load({k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)})
        opic._g = header["g"]
        opic._credit = header["credit"]
        opic._total_weight = header["total_weight"]
        opic._virtual_cash = header["virtual_cash"]
        opic._virtual_history = header["virtual_history"]
        opic._new_page_rate = header["new_page_rate"]
        return opic

    def checkpoint(self, store: StateStore, key: str = "opic", *, scores: bool = True) -> None:
        """Save the snapshot under ``key`` and the scores ``opic_cash`` (current cash) and
        ``opic_importance`` (the importance estimate) for the CLI and the refresh module
        (``scores=False``: the snapshot only, for a checkpoint more frequent than they need)."""
        store.put_state(key, self.snapshot())
        if not scores:
            return
        ids = np.flatnonzero(self._weight[: self._n] > 0)
        store.set_scores("opic_cash", ids, self.cash(ids))
        store.set_scores("opic_importance", ids, self.estimates()[ids])

    @classmethod
    def restore(cls, store: StateStore, key: str = "opic") -> OPIC | None:
        """The OPIC saved by :meth:`checkpoint` under ``key``, or ``None`` if there is none."""
        data = store.get_state(key)
        return None if data is None else cls.from_snapshot(data)

    # -- internals -----------------------------------------------------------------------

    def _checked(self, ids: Iterable[int] | np.ndarray) -> np.ndarray:
        idx = np.asarray(ids, dtype=np.int64).reshape(-1)
        bad = idx[(idx < 0) | (idx >= self._n)]
        if bad.size:
            raise UnknownPage(int(bad[0]))
        return idx

    def _settle(self, idx: np.ndarray | int) -> None:
        """Move the virtual page's pending credit of ``idx`` into their own cash."""
        self._cash[idx] += self._weight[idx] * (self._credit - self._base[idx])
        self._base[idx] = self._credit

    def _read(self, page: int) -> float:
        """Credit ``page``'s cash to its history (every window) and empty it; return it."""
        self._settle(page)
        amount = float(self._cash[page])
        self._cash[page] = 0.0
        if self._reads[page] == 0:
            self._learn_new_page_rate(page, amount)
        for window in self.windows:
            window.record(page, amount, self._g)
        self._g += amount
        self._reads[page] += 1
        return amount

    def _hand_on(self, amount: float, children: np.ndarray) -> None:
        """A read page's ``amount``: ``c`` of it split among ``children``, the rest (all of
        it without children) to the virtual page (§2). Parts of a distributed OPIC route it."""
        if children.size:
            self._cash[children] += self.damping * amount / children.size
            self._virtual_cash += (1.0 - self.damping) * amount
        else:
            self._virtual_cash += amount

    def _page_share(self) -> float:
        """The mean cash of one page, 1 / known pages: the unit of discovery cash and the
        prior rate of a new page (a part of a distributed OPIC counts every part's pages)."""
        return 1.0 / self._named

    def _learn_new_page_rate(self, page: int, amount: float) -> None:
        """Update the running rate of recently introduced pages at a page's first read."""
        elapsed = self._g - self._introduced[page]
        if elapsed <= 0:
            return
        rate = max(amount - self._granted[page], 0.0) / elapsed
        self._granted[page] = 0.0
        if self._new_page_rate is None:
            self._new_page_rate = rate
        else:
            self._new_page_rate += self.new_page_smoothing * (rate - self._new_page_rate)

    def _extend(self, upto: int) -> None:
        """Make the arrays cover ids ``< upto``; the new slots are placeholders (weight 0)."""
        start = self._n
        if upto <= start:
            return
        if upto > self._cash.shape[0]:
            self.resize(max(upto, 2 * self._cash.shape[0], 1024))
        for array in (self._cash, self._weight, self._introduced, self._granted):
            array[start:upto] = 0.0
        self._base[start:upto] = self._credit
        self._reads[start:upto] = 0
        self._n = upto

    def _names_new(self, page: int, children: np.ndarray) -> bool:
        """Whether a fetch of ``page`` with ``children`` names a page not known yet."""
        if not self.is_known(page):
            return True
        return bool(children.size) and (children[-1] >= self._n or not self._weight[children].all())

    def _name(self, ids: np.ndarray) -> np.ndarray:
        """Turn the sorted unique ``ids`` that are not yet pages into pages; return those."""
        if ids.size == 0:
            return ids
        self._extend(int(ids[-1]) + 1)
        new = ids[self._weight[ids] == 0]
        if new.size == 0:
            return new
        self._base[new] = self._credit
        self._weight[new] = 1.0
        self._introduced[new] = self._g
        self._total_weight += new.size
        self._named += new.size
        prior = self._new_page_rate if self._new_page_rate is not None else self._page_share()
        for window in self.windows:
            window.introduce(new, self._g, prior)
        return new

    def resize(self, capacity: int) -> None:
        """Make room for ``capacity`` pages, in OPIC's arrays and every window's."""
        super().resize(capacity)
        for window in self.windows:
            window.resize(capacity)

    def _grant_discovery_cash(self, new: np.ndarray) -> None:
        """The ``new`` pages take their discovery cash from the virtual page."""
        if new.size == 0 or self.discovery_cash == 0 or self._virtual_cash <= 0:
            return
        wanted = self.discovery_cash * self._page_share() * self._weight[new]
        scale = min(1.0, self._virtual_cash / wanted.sum())
        paid = wanted * scale
        self._cash[new] += paid
        self._granted[new] += paid
        self._virtual_cash -= float(paid.sum())

    def _pay_virtual_cash(self) -> None:
        """The virtual page is read: its cash goes to every page in proportion to weight.
        Only a positive balance: discovery that drains it can leave an ulp below zero,
        which paid out gave pages negative cash (and parts negative transfers); kept, the
        residue is conserved and the next inflow covers it."""
        if self._named == 0 or self._virtual_cash <= 0:
            return
        self._credit += self._virtual_cash / self._total_weight
        self._virtual_history += self._virtual_cash
        self._virtual_cash = 0.0

    def _notify(self, ids: np.ndarray) -> None:
        for listener in self._listeners:
            listener(ids)
