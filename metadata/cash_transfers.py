"""OPIC's cash across crawl workers (OPIC §4.1, issue 20): the parts' books and the transfers.

Worker I of N keeps the OPIC cash of the pages of its part (:mod:`metadata.claims`: the pages
whose host hash is I modulo N). Cash a read hands to a page of another part is a *transfer*:
a ``cash_transfers`` row (to part, from part, batch, page, amount; page -1 is the receiving
part's virtual page), written by the sender and deleted by the receiver when it adds the cash
to its own. ``cash_parts`` holds one row per part: the cash its last checkpoint holds, what it
publishes for the others (total weight, G-time credited, known pages, rate sum) and its
*epoch*, the number of flushes it committed.

The rules that make a transfer count exactly once and keep the total cash exact:

* a part's flush is one transaction: its outgoing rows, the deletion of its incoming rows,
  its checkpoint (``state``) and its ``cash_parts`` row commit together or not at all, so
  Σ ``cash_parts.cash`` + Σ ``cash_transfers.amount`` is the same after every commit;
* a row is deleted by one transaction only (``DELETE … RETURNING``: PostgreSQL's row locks,
  SQLite's one writer), so the receiver adds it once; a batch is keyed by (from part,
  batch), so the same batch cannot be sent twice;
* a flush names the epoch it restored from, and commits only if the row still has it: a
  second process running the same part (a worker restarted while the old one still lives)
  fails with :class:`CashPartTaken` instead of overwriting the other's books.

The parts are opened once with their count N, sharing the total cash of 1 by their pages;
opening them with another N is refused (:class:`CashPartsMismatch`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from metadata.dialect import Connection
from metadata.errors import MetadataError
from metadata.store import Store, chunked

TOTAL_CASH = 1.0
"""The cash of the whole system, split equally between the parts when they are opened."""


class CashPartsMismatch(MetadataError):
    """The store's OPIC is split into another number of parts than the caller's."""

    def __init__(self, stored: int, asked: int) -> None:
        super().__init__(
            f"OPIC's cash is split into {stored} parts in this store, not {asked}: run "
            f"{stored} workers, or start OPIC afresh for {asked}"
        )
        self.stored, self.asked = stored, asked


class CashPartTaken(MetadataError):
    """A flush of a part whose books another process committed since this one read them."""

    def __init__(self, part: int, epoch: int) -> None:
        super().__init__(
            f"OPIC part {part} was flushed by another process since epoch {epoch}: two "
            "workers run this part; stop one and restore the other from the store"
        )
        self.part, self.epoch = part, epoch


@dataclass(frozen=True)
class CashPart:
    """One part's row of ``cash_parts``: its books as of its last committed flush."""

    part: int
    parts: int
    epoch: int
    """flushes committed (0: never flushed, no checkpoint)"""
    cash: float
    """the cash its checkpoint holds (its pages' and its virtual page's)"""
    weight: float
    g: float
    named: int
    rate_sum: float
    written: float | None
    """wall-clock time of its last flush"""


@dataclass(frozen=True)
class CashTotal:
    """The whole system's cash as committed: the parts' books plus the transfers in flight."""

    in_parts: float
    in_flight: float
    transfers: int

    @property
    def total(self) -> float:
        return self.in_parts + self.in_flight


_PART_COLUMNS = "part, parts, epoch, cash, weight, g, named, rate_sum, written"


class CashTransfers(Store):
    """The books of OPIC's parts and the cash transfers between them."""

    def open_cash_parts(self, parts: int) -> list[CashPart]:
        """The books of the ``parts`` parts, made on first use (epoch 0, each part holding
        its share of the pages known then, 1/``parts`` in an empty store, so every page
        starts with the same cash as in one OPIC); :class:`CashPartsMismatch` if the store's
        OPIC has another count."""
        if parts < 1:
            raise ValueError("parts must be at least 1")
        with self._write() as conn:
            rows = conn.execute(f"SELECT {_PART_COLUMNS} FROM cash_parts ORDER BY part").fetchall()
            if not rows:  # two workers may get here at once: the first one's rows stand
                conn.executemany(
                    "INSERT INTO cash_parts(part, parts, epoch, cash, weight, g, named, "
                    "rate_sum) VALUES (?, ?, 0, ?, 0, 0, 0, 0) ON CONFLICT (part) DO NOTHING",
                    [(part, parts, cash) for part, cash in enumerate(_shares(conn, parts))],
                )
                rows = conn.execute(
                    f"SELECT {_PART_COLUMNS} FROM cash_parts ORDER BY part"
                ).fetchall()
        books = [CashPart(*row) for row in rows]
        if len(books) != parts or any(book.parts != parts for book in books):
            raise CashPartsMismatch(books[0].parts, parts)
        return books

    def cash_parts(self) -> list[CashPart]:
        """Every part's books, by part (none before :meth:`open_cash_parts`)."""
        return [
            CashPart(*row)
            for row in self._all(f"SELECT {_PART_COLUMNS} FROM cash_parts ORDER BY part")
        ]

    def send_cash(
        self, from_part: int, batch: int, transfers: Mapping[int, tuple[np.ndarray, np.ndarray]]
    ) -> int:
        """Write the transfers ``{to part: (pages, amounts)}`` of ``from_part``'s ``batch``
        (``COPY`` on PostgreSQL); returns the rows written. A batch sent twice fails."""
        rows = [
            (to, from_part, batch, page, amount)
            for to, (pages, amounts) in transfers.items()
            for page, amount in zip(pages.tolist(), amounts.tolist(), strict=True)
        ]
        if rows:
            with self._write() as conn:
                self.dialect.insert_many(
                    conn,
                    "cash_transfers",
                    ("to_part", "from_part", "batch", "page", "amount"),
                    rows,
                )
        return len(rows)

    def take_cash(self, to_part: int) -> tuple[np.ndarray, np.ndarray]:
        """Delete the transfers addressed to ``to_part`` and return them ``(pages, amounts)``:
        the caller adds them to that part in the same transaction."""
        with self._write() as conn:
            rows = conn.execute(
                "DELETE FROM cash_transfers WHERE to_part = ? RETURNING page, amount", (to_part,)
            ).fetchall()
        pages = np.array([row[0] for row in rows], dtype=np.int64)
        return pages, np.array([row[1] for row in rows], dtype=float)

    def save_cash_part(self, book: CashPart) -> CashPart:
        """Commit ``book`` as its part's next epoch, if the stored one is still at
        ``book.epoch`` (:class:`CashPartTaken` otherwise); returns the row as stored."""
        written = time.time()
        with self._write() as conn:
            changed = conn.execute(
                "UPDATE cash_parts SET epoch = epoch + 1, cash = ?, weight = ?, g = ?, "
                "named = ?, rate_sum = ?, written = ? WHERE part = ? AND parts = ? AND epoch = ?",
                (
                    book.cash,
                    book.weight,
                    book.g,
                    book.named,
                    book.rate_sum,
                    written,
                    book.part,
                    book.parts,
                    book.epoch,
                ),
            ).rowcount
            if changed != 1:
                raise CashPartTaken(book.part, book.epoch)
        return CashPart(**{**book.__dict__, "epoch": book.epoch + 1, "written": written})

    def cash_total(self) -> CashTotal:
        """The committed total: Σ the parts' books + Σ the transfers in flight, read in one
        snapshot (a flush commits between no two of its sums)."""
        with self._read() as conn:
            in_parts = conn.execute("SELECT coalesce(sum(cash), 0) FROM cash_parts").fetchone()
            flight = conn.execute(
                "SELECT coalesce(sum(amount), 0), count(*) FROM cash_transfers"
            ).fetchone()
        return CashTotal(float(in_parts[0]), float(flight[0]), int(flight[1]))

    def parts_of(self, url_ids: np.ndarray, parts: int) -> np.ndarray:
        """The part (of ``parts``) of each URL-Id's host, -1 for an id without a page."""
        ids = np.asarray(url_ids, dtype=np.int64).reshape(-1)
        found: dict[int, int] = {}
        with self._lock:
            for chunk in chunked(list(dict.fromkeys(ids.tolist())), 900):
                where, values = self.dialect.among("id", chunk)
                found.update(
                    self._all(
                        f"SELECT id, host_hash % ? FROM pages WHERE {where}", (parts, *values)
                    )
                )
        return np.array([found.get(url_id, -1) for url_id in ids.tolist()], dtype=np.int64)

    def part_page_ids(self, part: int, parts: int) -> np.ndarray:
        """The URL-Ids of the pages of ``part`` (of ``parts``), ascending (a whole scan)."""
        rows = self._scan("SELECT id FROM pages WHERE host_hash % ? = ? ORDER BY id", (parts, part))
        return np.array([row[0] for row in rows], dtype=np.int64)


def _shares(conn: Connection, parts: int) -> list[float]:
    """Each part's share of :data:`TOTAL_CASH`: its share of the pages there are (equal
    shares when there are none); the last part takes the rest, so they sum to it (to an ulp)."""
    counts = dict(
        conn.execute(
            "SELECT part, count(*) FROM (SELECT host_hash % ? AS part FROM pages) AS parts "
            "GROUP BY part",
            (parts,),
        ).fetchall()
    )
    total = sum(counts.values())
    shares = [
        TOTAL_CASH * (counts.get(part, 0) / total if total else 1 / parts)
        for part in range(parts - 1)
    ]
    return [*shares, max(TOTAL_CASH - sum(shares), 0.0)]
