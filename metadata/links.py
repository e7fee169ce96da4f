"""Link-Data (paper §4, §5): each page's children and dependencies, and the link matrix.

A page's children are replaced whole, never edited (the loader and the crawler state a
page's links afresh on each read); the rankings read them back as one snapshot, either
raw (:meth:`Links.export_links`) or by the rule of :mod:`metadata.link_matrix`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from metadata.dialect import upsert_sql
from metadata.encoding import decode_ids, encode_ids
from metadata.link_matrix import LinkMatrix, link_steps, rechunk
from metadata.store import LOOKUP_CHUNK, Store, chunked, require_page, require_pages

_COLUMNS = ("id", "children", "extra", "dependencies")


class Links(Store):
    """Children and dependencies of pages, and the whole link graph read back."""

    def set_children(
        self,
        url_id: int,
        child_ids: Iterable[int] | np.ndarray,
        *,
        dependencies: Iterable[int] | np.ndarray = (),
    ) -> None:
        """Replace a page's children and dependencies atomically (the loader's results).

        Children are kept distinct, in first-seen order, at most 65,534 (§4); the rest are
        counted. Dependencies are the DTDs and schemas a document needs: not links.
        """
        blob, extra = encode_ids(child_ids)
        dependency_blob, _ = encode_ids(dependencies)
        with self._write() as conn:
            require_page(conn, url_id)
            conn.execute(upsert_sql("links", _COLUMNS), (url_id, blob, extra, dependency_blob))

    def set_children_many(self, rows: Iterable[tuple[int, Iterable[int], Iterable[int]]]) -> None:
        """:meth:`set_children` for many ``(url_id, child_ids, dependency_ids)`` at once.

        One transaction and one ``executemany``: a loader's batch of documents. A page
        given twice ends with its last row. An id without a page raises
        :class:`UnknownPage` and nothing is written.
        """
        values = []
        for url_id, child_ids, dependency_ids in rows:
            blob, extra = encode_ids(child_ids)
            values.append((int(url_id), blob, extra, encode_ids(dependency_ids)[0]))
        with self._write() as conn:
            require_pages(conn, [row[0] for row in values])
            self.dialect.upsert_many(conn, "links", _COLUMNS, values)

    def children(self, url_id: int) -> np.ndarray:
        """A page's stored children (int32, empty if none are known)."""
        return decode_ids(self._link_column(url_id, "children"))

    def children_many(self, url_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """:meth:`children` of many pages in one query per ``LOOKUP_CHUNK`` (a worker's OPIC
        credits a flush's XML fetches at once); a page without stored links is left out."""
        wanted = list(dict.fromkeys(int(url_id) for url_id in url_ids))
        found: dict[int, np.ndarray] = {}
        for chunk in chunked(wanted, LOOKUP_CHUNK):
            where, values = self.dialect.among("id", chunk)
            rows = self._all(f"SELECT id, children FROM links WHERE {where}", values)
            found.update((url_id, decode_ids(blob)) for url_id, blob in rows)
        return found

    def extra_children(self, url_id: int) -> int:
        """How many distinct children a page had beyond the 65,534 stored."""
        return int(self._link_column(url_id, "extra") or 0)

    def dependencies(self, url_id: int) -> np.ndarray:
        """The DTDs / schemas a document references (int32 URL-Ids)."""
        return decode_ids(self._link_column(url_id, "dependencies"))

    def _link_column(self, url_id: int, column: str) -> bytes | int | None:
        row = self._one(f"SELECT {column} FROM links WHERE id = ?", (url_id,))
        return row[0] if row else None

    def parents(self, url_id: int) -> np.ndarray:
        """The pages linking to ``url_id`` (int32, ascending). Scans the whole link matrix."""
        found = [src[dst == url_id] for src, dst in self.export_links()]
        return np.unique(np.concatenate(found)) if found else np.empty(0, dtype=np.int32)

    def export_links(self, chunk_edges: int = 1 << 20) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The whole stored Link-Data as ``(src, dst)`` int32 chunks of ``chunk_edges`` edges.

        Every stored child, whatever it is (the rankings read :meth:`link_matrix` instead).
        The last chunk may be shorter. Edges come in ascending ``src`` order, each page's
        children in their stored order. The export reads one snapshot on a connection of
        its own, so writers go on meanwhile. SQLite itself concatenates the children blobs
        of many pages per statement, so no Python object is made per edge, nor per page.
        """
        if chunk_edges < 1:
            raise ValueError("chunk_edges must be positive")
        with self._reader() as conn:  # one snapshot across the steps
            yield from rechunk(link_steps(conn, self.dialect), chunk_edges)

    @contextmanager
    def link_matrix(
        self, chunk_edges: int = 1 << 20, *, in_scope: Callable[[str], bool] | None = None
    ) -> Iterator[LinkMatrix]:
        """The rankings' link matrix (§5) by the rule of :mod:`metadata.link_matrix`: its
        pages, their types and its edges, all from one snapshot read on a connection of its
        own (writers go on meanwhile). ``in_scope`` is the crawl scope (URL → bool): unread
        URLs outside it stay out. Read it inside the ``with`` block."""
        if chunk_edges < 1:
            raise ValueError("chunk_edges must be positive")
        with self._reader() as conn:
            yield LinkMatrix.read(conn, self.dialect, chunk_edges, in_scope)
