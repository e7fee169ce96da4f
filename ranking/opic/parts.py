"""One part of a distributed OPIC (OPIC paper §4.1): the cash of the pages one worker owns.

§4.1: "Each crawler is in charge of a portion of the pages [...] made using a hash function
h_url [...]. It distributes the current cash of the page to the pages it points to. For each
such page, it uses h_url to obtain the name of the server in charge of that page. It sends a
'money transfer' to that server indicating the URL of the page and the amount. This is a
buffered network call." :class:`OPICPart` is :class:`~ranking.opic.cash.OPIC` over the pages
an ``owner`` function gives to its part: a read pays the children of its own part at once
and puts the shares of other parts' children in an *outbox* (the buffered transfers, summed
per part and page); :meth:`OPICPart.receive` takes what the other parts sent. Moving the
outbox to its owners is the caller's (``xyleme.jobs.opic_part``, through the store).

**The virtual page.** One OPIC's virtual page gets ``1 − c`` of every read (all of a page
without links) and pays every page ``w_k / W`` of it (§1's "small" edges). Here each part has
a virtual page, and the share a read gives it is split between the parts in proportion to
their total weights ``W_q / W`` (each other part's as it last published it, :class:`PartView`):
this part's fraction pays its own pages at once; each other fraction goes in the outbox to
that part's virtual page (page :data:`VIRTUAL`), which pays its own pages on receipt. The
parts' virtual pages together pay page ``k`` ``w_k / W``, as one virtual page would: the
fixpoint stays PageRank(c), and no cash is created or lost by the split (the local fraction
is what remains once the others are sent).

**The clock.** G-time is the cash credited by every part's reads: a part's ``g`` is its own
credits plus the others' as last published, so a window of ``T`` spans ``T`` crawls of the
whole graph as in one OPIC. Estimates are normalised by every part's rate sum, so the parts'
estimates together sum to about 1 and compare with one OPIC's page by page.

**Conservation** (Lemma 2.2 across parts): a part's cash, its outbox included
(:meth:`OPICPart.total_cash`), changes only by :meth:`~OPICPart.receive` (up) and
:meth:`~OPICPart.take_outbox` (down, by exactly what the caller must deliver); a read moves
cash inside the part or into the outbox. A fresh part holds ``cash`` (``1 / parts``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ranking.opic.cash import OPIC
from ranking.opic.errors import BadTransfer, ForeignPage, UnknownPage
from ranking.opic.windows import HistoryWindow

VIRTUAL = -1
"""The page id of a part's virtual page in transfers (URL-Ids are never negative)."""

Owner = Callable[[np.ndarray], np.ndarray]
"""The part of each URL-Id of an array (``host_hash % parts`` in the store)."""


@dataclass(frozen=True)
class PartView:
    """What a part publishes of itself for the others (at each flush)."""

    part: int
    weight: float
    """the total weight of its known pages: its share of every virtual page's payments"""
    g: float
    """the cash its own reads credited: its share of the G-time"""
    named: int
    """its known pages"""
    rate_sum: float
    """the sum of its pages' rates: its share of the estimates' normaliser"""


class OPICPart(OPIC):
    """The OPIC of the pages ``owner`` gives to ``part`` of ``parts`` (§4.1).

    Parameters
    ----------
    part, parts : int
        This part, ``0 <= part < parts``.
    owner : callable
        The part of each URL-Id of an array; may be omitted for one part.
    cash : float, optional
        The cash a fresh part starts with (held by its virtual page until it knows pages);
        ``1 / parts`` when omitted, so the parts together hold 1.
    damping, window, extra_windows, discovery_cash, new_page_smoothing
        As :class:`~ranking.opic.cash.OPIC`.

    Examples
    --------
    >>> halves = [OPICPart(p, 2, lambda ids: ids % 2) for p in range(2)]
    >>> halves[0].add_pages([0, 2]); halves[1].add_pages([1])
    >>> halves[0].on_fetch(0, [1, 2])
    >>> sent = halves[0].take_outbox()
    >>> halves[1].receive(*sent[1])
    >>> round(sum(half.total_cash() for half in halves), 12)
    1.0
    """

    def __init__(
        self,
        part: int = 0,
        parts: int = 1,
        owner: Owner | None = None,
        *,
        cash: float | None = None,
        damping: float = 0.85,
        window: HistoryWindow | None = None,
        extra_windows: Sequence[HistoryWindow] = (),
        discovery_cash: float = 1.0,
        new_page_smoothing: float = 0.05,
    ) -> None:
        self._bind(part, parts, owner)
        super().__init__(
            damping=damping,
            window=window,
            extra_windows=extra_windows,
            discovery_cash=discovery_cash,
            new_page_smoothing=new_page_smoothing,
        )
        self._virtual_cash = 1.0 / parts if cash is None else float(cash)
        if not self._virtual_cash >= 0:
            raise ValueError(f"a part's cash must be >= 0, got {cash!r}")

    def _bind(self, part: int, parts: int, owner: Owner | None) -> None:
        if parts < 1 or not 0 <= part < parts:
            raise ValueError(f"part {part} is not in 0..{parts - 1}")
        if owner is None and parts > 1:
            raise ValueError("several parts need an owner function")
        self.part, self.parts = int(part), int(parts)
        self._owner: Owner = owner or (lambda ids: np.zeros(len(ids), dtype=np.int64))
        self._outbox: dict[int, dict[int, float]] = {}
        self._others: dict[int, PartView] = {}
        self._remote_g = 0.0
        self._remote_weight = 0.0

    @classmethod
    def from_part_snapshot(
        cls, data: bytes, part: int, parts: int, owner: Owner | None, own_g: float
    ) -> OPICPart:
        """The part saved by :meth:`snapshot`, whose own reads had credited ``own_g`` (the
        rest of its G-time being the other parts' as it saw them then)."""
        opic = cls.from_snapshot(data)
        assert isinstance(opic, OPICPart)
        opic._bind(part, parts, owner)
        opic._remote_g = max(opic.g - own_g, 0.0)
        return opic

    # -- reading the state ---------------------------------------------------------------

    def owns(self, ids: Iterable[int] | np.ndarray) -> np.ndarray:
        """Whether each URL-Id belongs to this part."""
        idx = np.asarray(ids, dtype=np.int64).reshape(-1)
        if self.parts == 1 or idx.size == 0:
            return np.ones(idx.size, dtype=bool)
        return np.asarray(self._owner(idx)) == self.part

    @property
    def own_g(self) -> float:
        """The cash this part's own reads credited (its share of the G-time)."""
        return self.g - self._remote_g

    def outbox_total(self) -> float:
        """The cash waiting in the outbox for other parts."""
        return float(sum(sum(box.values()) for box in self._outbox.values()))

    def total_cash(self) -> float:
        """This part's cash: its pages', its virtual page's and its outbox's."""
        return super().total_cash() + self.outbox_total()

    def view(self) -> PartView:
        """What this part publishes of itself (:meth:`see_parts` of the others reads it)."""
        return PartView(self.part, self._total_weight, self.own_g, self._named, self._rate_sum())

    def estimates(self, window: HistoryWindow | None = None) -> np.ndarray:
        """Each page's estimate over every part: this part's, normalised by the rate sums of
        all parts (the others' as last published), so all parts together sum to about 1."""
        local = super().estimates(window)
        mine = self._rate_sum(window)
        total = mine + sum(view.rate_sum for view in self._others.values())
        return local * (mine / total) if total > 0 else local

    # -- exchanging with the other parts -------------------------------------------------

    def see_parts(self, views: Iterable[PartView]) -> None:
        """Take the other parts' published views: their weights share the virtual page's
        payments, their credits advance this part's G-time (never backwards)."""
        for view in views:
            if view.part != self.part:
                self._others[view.part] = view
        self._remote_weight = sum(view.weight for view in self._others.values())
        advance = max(sum(view.g for view in self._others.values()) - self._remote_g, 0.0)
        self._remote_g += advance
        self._g += advance

    def take_outbox(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """The transfers for each other part, ``{part: (page ids, amounts)}`` (page
        :data:`VIRTUAL` is that part's virtual page), and empty the outbox: the caller now
        owes that cash to those parts."""
        taken = {
            to: (np.fromiter(box, dtype=np.int64), np.fromiter(box.values(), dtype=float))
            for to, box in sorted(self._outbox.items())
            if box
        }
        self._outbox = {}
        return taken

    def receive(self, pages: Iterable[int] | np.ndarray, amounts: Iterable[float]) -> None:
        """Add transfers from other parts: ``amounts[i]`` to page ``pages[i]`` of this part
        (:data:`VIRTUAL`: to its virtual page, which pays its pages at once). Pages this part
        did not know yet become pages first. Nothing changes if one is refused."""
        ids = np.asarray(pages, dtype=np.int64).reshape(-1)
        values = np.asarray(amounts, dtype=float).reshape(-1)
        if ids.shape != values.shape:
            raise ValueError(f"{ids.size} pages but {values.size} amounts")
        bad = ~(np.isfinite(values) & (values >= 0))
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            raise BadTransfer(int(bad.sum()), int(ids[first]), float(values[first]))
        virtual = ids == VIRTUAL
        real, paid = ids[~virtual], values[~virtual]
        if real.size and real.min() < 0:
            raise UnknownPage(int(real.min()))
        foreign = real[~self.owns(real)]
        if foreign.size:
            raise ForeignPage(int(foreign[0]), self.part, int(self._owner(foreign[:1])[0]))
        self._virtual_cash += float(values[virtual].sum())
        new = self._name(np.unique(real))
        np.add.at(self._cash, real, paid)
        self._grant_discovery_cash(new)
        self._pay_virtual_cash()
        self._notify(np.concatenate([real, new]))

    # -- OPIC's hooks --------------------------------------------------------------------

    def on_fetch(
        self,
        url_id: int,
        child_ids: Iterable[int] | np.ndarray,
        *,
        weights: dict[int, float] | None = None,
    ) -> None:
        """:meth:`OPIC.on_fetch` of a page of this part (:class:`ForeignPage` otherwise,
        nothing changed); the shares of other parts' children go to the outbox."""
        if url_id >= 0 and not self.owns([url_id])[0]:
            raise ForeignPage(int(url_id), self.part, int(self._owner(np.array([url_id]))[0]))
        super().on_fetch(url_id, child_ids, weights=weights)

    def snapshot(self) -> bytes:
        """:meth:`OPIC.snapshot`, refused while the outbox holds cash (it would be lost)."""
        if self._outbox:
            raise ValueError("the outbox holds cash: take_outbox() and deliver it first")
        return super().snapshot()

    def _hand_on(self, amount: float, children: np.ndarray) -> None:
        """Children of this part are paid at once, the others' shares go to the outbox; the
        virtual page's share is split between the parts' virtual pages by weight."""
        if not children.size:
            self._to_virtual(amount)
            return
        share = self.damping * amount / children.size
        owners = np.asarray(self._owner(children)) if self.parts > 1 else None
        if owners is None:
            self._cash[children] += share
        else:
            mine = owners == self.part
            self._cash[children[mine]] += share
            for page, to in zip(children[~mine].tolist(), owners[~mine].tolist(), strict=True):
                self._send(to, page, share)
        self._to_virtual((1.0 - self.damping) * amount)

    def _to_virtual(self, amount: float) -> None:
        """The virtual pages' share of a read: ``W_q / W`` to each other part, the rest here."""
        total = self._total_weight + self._remote_weight
        sent = 0.0
        if total > 0 and self._remote_weight > 0:
            for to, view in self._others.items():
                if view.weight > 0:
                    share = amount * view.weight / total
                    self._send(to, VIRTUAL, share)
                    sent += share
        self._virtual_cash += amount - sent

    def _send(self, to: int, page: int, amount: float) -> None:
        box = self._outbox.setdefault(to, {})
        box[page] = box.get(page, 0.0) + amount

    def _name(self, ids: np.ndarray) -> np.ndarray:
        """Only this part's pages become pages here; the others are their owners'."""
        return super()._name(ids[self.owns(ids)] if self.parts > 1 else ids)

    def _page_share(self) -> float:
        return 1.0 / (self._named + sum(view.named for view in self._others.values()))

    def _notify(self, ids: np.ndarray) -> None:
        """Tell the listeners only of this part's known pages (a selector indexes them)."""
        ids = ids[(ids >= 0) & (ids < self._n)]
        super()._notify(ids[self._weight[ids] > 0])

    def _rate_sum(self, window: HistoryWindow | None = None) -> float:
        if self._n == 0:
            return 0.0
        return float((window or self.window).rates(self.cash(), self.g).sum())
