"""OPIC across crawl workers (OPIC §4.1): the OPIC of one worker's part, fed by its crawler's
events, its transfers and checkpoint flushed through the store in one transaction.

Worker I of N keeps the cash and history of the pages of its part (host hash ≡ I mod N,
:mod:`metadata.claims`) in a :class:`ranking.opic.OPICPart`. A read pays the children of
its part at once; the shares of other parts' pages (and of their virtual pages) wait in its
outbox. :meth:`PartOPIC.flush` is one transaction (:mod:`metadata.cash_transfers`): write
the outbox as a batch of transfer rows, take (delete) the rows addressed to this part and
add them to its cash, commit its checkpoint and its books (fenced by epoch).

**What a kill -9 keeps.** The committed state is every part's last checkpoint plus the
transfer rows in flight, and every flush moves it from one whole state to another with the
same total cash. A worker killed between two flushes loses its part's work since its last
flush, nothing else: the reads it credited since then are not credited (their fetch records,
committed by the crawler, stay; those pages keep their cash and pay it at their next read,
as after a crash of the single daemon), and the transfers it had received are still rows,
taken by its next flush. Cash other parts send it meanwhile waits in rows. Flushed inside
the transaction that records the fetches (``with md.transaction(): md.record_fetches(...);
part.flush(md)``), a read's credit commits with its fetch record, or neither does.

A flush that fails leaves the part's memory ahead of the store: the object refuses further
use (:class:`PartStale`) and the worker restores it, as after a crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from metadata import TOTAL_CASH, CashPart, FetchResult, Metadata, UnknownPage
from ranking.opic import CorruptSnapshot, ForeignPage, OPICError, OPICPart, OPICSettings, PartView
from xyleme import signals
from xyleme.jobs.opic import FetchListener, LinkSource


class PartStale(OPICError):
    """A part whose flush failed: its memory is no longer what the store committed."""

    def __init__(self, part: int) -> None:
        super().__init__(
            f"a flush of OPIC part {part} failed: restore the part from the store "
            "(PartOPIC.restore) before crediting more reads"
        )
        self.part = part


def part_key(key: str, part: int, parts: int) -> str:
    """The state key of a part's checkpoint: ``opic/part-1-of-3``."""
    return f"{key}/part-{part}-of-{parts}"


class PartOwners:
    """The part of each URL-Id (its host's hash mod N), asked of the store once per id: a
    URL-Id's URL, hence its host, never changes."""

    def __init__(self, store: Metadata, parts: int) -> None:
        self._store = store
        self.parts = parts
        self._known = np.full(1024, -1, dtype=np.int32)

    def learn(self, ids: np.ndarray, part: int) -> None:
        """Record that ``ids`` belong to ``part`` (the pages a part scanned for itself)."""
        if ids.size:
            self._grow(int(ids.max()))
            self._known[ids] = part

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return np.zeros(0, dtype=np.int64)
        self._grow(int(ids.max()))
        unknown = np.unique(ids[self._known[ids] < 0])
        if unknown.size:
            found = self._store.parts_of(unknown, self.parts)
            if (found < 0).any():
                raise UnknownPage(int(unknown[found < 0][0]))
            self._known[unknown] = found
        return self._known[ids].astype(np.int64)

    def _grow(self, largest: int) -> None:
        if largest >= self._known.size:
            grown = np.full(max(largest + 1, 2 * self._known.size), -1, dtype=np.int32)
            grown[: self._known.size] = self._known
            self._known = grown


@dataclass(frozen=True)
class Flushed:
    """What one flush moved."""

    epoch: int
    sent: int
    """transfer rows written"""
    cash_sent: float
    received: int
    """transfer rows taken"""
    cash_received: float


def _views(books: Iterable[CashPart]) -> list[PartView]:
    return [PartView(b.part, b.weight, b.g, b.named, b.rate_sum) for b in books]


class PartOPIC:
    """The OPIC of one part of the hosts, checkpointed with its transfers (OPIC §4.1).

    Build it with :meth:`restore`; credit reads with :class:`PartOPICListener` (or
    :meth:`on_fetch`); call :meth:`flush` every checkpoint period, from the thread that
    credits the reads.
    """

    def __init__(self, opic: OPICPart, book: CashPart, key: str) -> None:
        self.opic = opic
        self.book = book
        self.key = key
        self._stale = False

    @property
    def part(self) -> int:
        return self.opic.part

    @property
    def parts(self) -> int:
        return self.opic.parts

    @classmethod
    def restore(cls, store: Metadata, part: int, parts: int, settings: OPICSettings) -> PartOPIC:
        """Part ``part`` of ``parts`` as its last flush committed it (fresh, with 1/N of the
        cash, before its first), knowing every page of its part the store knows.

        Raises :class:`~metadata.cash_transfers.CashPartsMismatch` when the store's OPIC is
        split into another number of parts, :class:`CorruptSnapshot` when the checkpoint its
        books name is missing or unreadable."""
        if parts < 1 or not 0 <= part < parts:
            raise ValueError(f"part {part} is not in 0..{parts - 1}")
        books = store.open_cash_parts(parts)
        book = books[part]
        owners = PartOwners(store, parts)
        key = part_key(settings.checkpoint_key, part, parts)
        if book.epoch == 0:
            opic = OPICPart(
                part,
                parts,
                owners,
                cash=book.cash,
                damping=settings.damping,
                window=settings.build_window(),
                discovery_cash=settings.discovery_cash,
            )
        else:
            data = store.get_state(key)
            if data is None:
                raise CorruptSnapshot(
                    f"OPIC part {part} flushed {book.epoch} times but its checkpoint "
                    f"{key!r} is missing"
                )
            opic = OPICPart.from_part_snapshot(data, part, parts, owners, book.g)
        opic.see_parts(_views(books))
        own = store.part_page_ids(part, parts)
        owners.learn(own, part)
        opic.add_pages(own)
        return cls(opic, book, key)

    def on_fetch(self, url_id: int, children: np.ndarray) -> None:
        """Credit one read of a page of this part (:class:`ForeignPage` for another's)."""
        if self._stale:
            raise PartStale(self.part)
        self.opic.on_fetch(url_id, children)

    def flush(self, store: Metadata, *, scores: bool = True) -> Flushed:
        """In one transaction: send the outbox as batch ``epoch + 1``, take the transfers
        addressed to this part into its cash, commit its checkpoint and books, and (unless
        ``scores`` is False) the ``opic_cash`` and ``opic_importance`` of its pages. Writing
        those scores is most of a flush's cost (a row update per page of the part): a part
        that flushes often for its transfers' sake writes them every few flushes.

        Raises :class:`~metadata.cash_transfers.CashPartTaken` if another process flushed
        this part since it was restored; after any failure the part is stale. Called inside
        an outer ``md.transaction()``, it commits with it; should that one roll back, the
        next flush fails with ``CashPartTaken`` (the books are behind the object): restore."""
        if self._stale:
            raise PartStale(self.part)
        self._stale = True  # until the transaction commits
        with store.transaction():
            outgoing = self.opic.take_outbox()
            sent = store.send_cash(self.part, self.book.epoch + 1, outgoing)
            pages, amounts = store.take_cash(self.part)
            self.opic.receive(pages, amounts)
            self.opic.see_parts(_views(store.cash_parts()))
            view = self.opic.view()
            book = store.save_cash_part(
                CashPart(
                    self.part,
                    self.parts,
                    self.book.epoch,
                    self.opic.total_cash(),
                    view.weight,
                    view.g,
                    view.named,
                    view.rate_sum,
                    None,
                )
            )
            self.opic.checkpoint(store, self.key, scores=scores)
        self.book = book
        self._stale = False
        return Flushed(
            epoch=book.epoch,
            sent=sent,
            cash_sent=float(sum(float(values.sum()) for _, values in outgoing.values())),
            received=int(pages.size),
            cash_received=float(amounts.sum()),
        )


class PartOPICListener(FetchListener):
    """:class:`~xyleme.jobs.opic.FetchListener` for one part: each committed fetch of a page
    of the part is credited to it, with the same children. A fetch of another part's page
    (a worker reads its own part's pages; a DTD the loader asked for may not be) is not
    credited, only counted in :attr:`foreign`: that page's cash is its owner's."""

    def __init__(
        self,
        part_opic: PartOPIC,
        links: LinkSource,
        events: signals.SignalManager | None = None,
    ) -> None:
        self.part_opic = part_opic
        self.foreign = 0
        super().__init__(part_opic.opic, links, events)

    def __call__(self, result: FetchResult) -> None:
        try:
            self.part_opic.on_fetch(result.url_id, self.children_of(result))
        except ForeignPage:
            self.foreign += 1


def total_cash(store: Metadata) -> float:
    """The committed total cash: every part's checkpointed cash plus the transfers in flight
    (:data:`~metadata.cash_transfers.TOTAL_CASH` when conserved)."""
    return store.cash_total().total


def cash_drift(store: Metadata) -> float:
    """``|total − initial| / initial`` of the committed total cash."""
    return abs(total_cash(store) - TOTAL_CASH) / TOTAL_CASH
