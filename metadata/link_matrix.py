"""The link matrix of the rankings (§5), read from Link-Data by one rule.

The matrix holds the pages that are, or may still turn out to be, documents: the HTML and
XML pages read, and the URLs known but not read yet (UNKNOWN without a redirect). Everything
else stays out, whatever links to it: errors and dead pages, resources (RESOURCE) and any
other type that is not a document (only :data:`MATRIX_TYPES` are in), redirecting URLs, and
the dependencies of documents (DTDs, entities, schemas, style sheets: what a document's
``dependencies`` or ``waiting`` rows name, whatever type it was read as), and, when the
caller gives its crawl scope, the URLs not read yet that lie outside it (a document's links
get URL-Ids whatever their scope; the crawler refuses to fetch those outside).

A link to a redirecting URL counts for the end of its redirect chain (if that is in the
matrix); a self-link and repeated links between the same two pages count once; a page's
out-degree is its number of distinct children in the matrix. The reason: a link to a
missing page, an image or a DTD is no vote for a page of the warehouse, and counting it in
the out-degree would dilute the page's real votes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from metadata.dialect import Connection, Dialect
from metadata.types import PAGE_TYPE_CODE, PageType

#: The page types that may be documents: the only ones in the matrix.
MATRIX_TYPES = frozenset({PageType.HTML, PageType.XML, PageType.UNKNOWN})
#: Redirect chains longer than this (or loops) lead nowhere: their links are dropped.
MAX_REDIRECT_HOPS = 20
#: Pages per export step: SQLite concatenates their children blobs in one statement.
_STEP_PAGES = 32_768


@functools.cache
def _export_step(dialect: Dialect) -> str:
    """Up to ? pages after id ?, in id order: their ids, child counts and children,
    aggregated by the engine. The three aggregates step over the same rows in the same
    order, so they stay aligned."""
    return f"""
SELECT max(id), {dialect.join_text("id", "id")},
       {dialect.join_text("length(children) / 4", "id")}, {dialect.join_bytes("children", "id")}
FROM (SELECT id, children FROM links WHERE id > ? ORDER BY id LIMIT ?) AS step
"""


@functools.cache
def _dependencies(dialect: Dialect) -> str:
    return f"""
SELECT {dialect.join_bytes("dependencies", "id")} FROM links
WHERE dependencies IS NOT NULL AND length(dependencies) > 0
"""


_PAGES = "SELECT id, type, redirect_to FROM pages ORDER BY id"
_WAITED_FOR = "SELECT DISTINCT dependency FROM waiting"
_UNREAD = "SELECT id, url FROM pages WHERE type = ? AND redirect_to IS NULL ORDER BY id"


def link_steps(conn: Connection, dialect: Dialect) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every stored link as ``(src, dst)`` int32 URL-Ids, a few thousand whole pages at a time
    (ascending ``src``, each page's children in their stored order), inside the caller's
    transaction. No Python object is made per edge, nor per page."""
    after = 0
    while True:
        step = conn.execute(_export_step(dialect), (after, _STEP_PAGES))
        last, ids, counts, blob = step.fetchone()
        if last is None:
            return
        after = last
        dst = np.frombuffer(blob or b"", dtype="<i4").astype(np.int32, copy=False)
        src = np.repeat(
            np.fromstring(ids, dtype=np.int32, sep=","),
            np.fromstring(counts, dtype=np.int64, sep=","),
        )
        yield src, dst


def rechunk(
    steps: Iterator[tuple[np.ndarray, np.ndarray]], chunk_edges: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The same edges in chunks of exactly ``chunk_edges`` (the last may be shorter)."""
    if chunk_edges < 1:
        raise ValueError("chunk_edges must be positive")
    pending_src: list[np.ndarray] = []
    pending_dst: list[np.ndarray] = []
    pending = 0
    for src, dst in steps:
        pending_src.append(src)
        pending_dst.append(dst)
        pending += dst.size
        if pending >= chunk_edges:
            src_all, dst_all = np.concatenate(pending_src), np.concatenate(pending_dst)
            full = pending - pending % chunk_edges
            for start in range(0, full, chunk_edges):
                yield src_all[start : start + chunk_edges], dst_all[start : start + chunk_edges]
            pending_src, pending_dst = [src_all[full:]], [dst_all[full:]]
            pending -= full
    if pending:
        yield np.concatenate(pending_src), np.concatenate(pending_dst)


def _in_sorted(sorted_ids: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(found, position) of each of ``ids`` in the ascending ``sorted_ids``."""
    position = np.searchsorted(sorted_ids, ids)
    inside = position < sorted_ids.size
    found = np.zeros(ids.shape, dtype=bool)
    found[inside] = sorted_ids[position[inside]] == ids[inside]
    return found, position


@dataclass
class LinkMatrix:
    """One snapshot of the §5 link matrix: its pages, their types, and its edges.

    ``ids`` are the URL-Ids of the matrix's pages (ascending; page k of the rankings is
    ``ids[k]``), ``types`` their :data:`~metadata.types.PAGE_TYPE_CODE`; ``all_ids`` every
    page of the repository, ``in_matrix`` which of them are in. :meth:`edges` streams the
    links as positions in ``ids``. Made by :meth:`Metadata.link_matrix`, inside whose
    ``with`` block it is read.
    """

    conn: Connection
    dialect: Dialect
    all_ids: np.ndarray
    in_matrix: np.ndarray
    ids: np.ndarray
    types: np.ndarray
    redirect_from: np.ndarray
    redirect_to: np.ndarray
    chunk_edges: int

    @classmethod
    def read(
        cls,
        conn: Connection,
        dialect: Dialect,
        chunk_edges: int,
        in_scope: Callable[[str], bool] | None = None,
    ) -> LinkMatrix:
        """Read the pages, redirects and dependencies (the caller holds a read transaction);
        ``in_scope`` (a URL → bool), when given, leaves out the unread URLs outside it."""
        rows = conn.execute(_PAGES).fetchall()
        all_ids = np.fromiter((row[0] for row in rows), np.int64, len(rows))
        codes = {page_type.value: code for page_type, code in PAGE_TYPE_CODE.items()}
        types = np.fromiter((codes[row[1]] for row in rows), np.int8, len(rows))
        redirects = np.fromiter((row[2] is not None for row in rows), bool, len(rows))
        unknown = PAGE_TYPE_CODE[PageType.UNKNOWN]
        redirecting = redirects & (types == unknown)
        matrix_codes = [PAGE_TYPE_CODE[page_type] for page_type in MATRIX_TYPES]
        in_matrix = np.isin(types, matrix_codes) & ~redirecting
        blob = conn.execute(_dependencies(dialect)).fetchone()[0]
        waited = [row[0] for row in conn.execute(_WAITED_FOR)]
        dependencies = np.union1d(
            np.frombuffer(blob or b"", dtype="<i4").astype(np.int64), np.array(waited, np.int64)
        )
        in_matrix &= ~np.isin(all_ids, dependencies)
        if in_scope is not None:
            unread = conn.execute(_UNREAD, (PageType.UNKNOWN.value,))
            outside = [url_id for url_id, url in unread if not in_scope(url)]
            in_matrix &= ~np.isin(all_ids, np.array(outside, dtype=np.int64))
        targets = np.array([row[2] for row in rows if row[2] is not None], dtype=np.int64)
        return cls(
            conn=conn,
            dialect=dialect,
            all_ids=all_ids,
            in_matrix=in_matrix,
            ids=all_ids[in_matrix],
            types=types[in_matrix],
            redirect_from=all_ids[redirecting],
            redirect_to=targets[redirecting[redirects]],
            chunk_edges=chunk_edges,
        )

    def resolve(self, dst: np.ndarray) -> np.ndarray:
        """Each URL-Id of ``dst`` replaced by the end of its redirect chain (−1: none)."""
        dst = dst.astype(np.int64)
        for _ in range(MAX_REDIRECT_HOPS + 1):
            redirected, position = _in_sorted(self.redirect_from, dst)
            if not redirected.any():
                return dst
            dst[redirected] = self.redirect_to[position[redirected]]
        dst[_in_sorted(self.redirect_from, dst)[0]] = -1  # a loop, or too long a chain
        return dst

    def _matrix_steps(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        n = max(int(self.ids.size), 1)
        for src, dst in link_steps(self.conn, self.dialect):
            from_page, src_position = _in_sorted(self.ids, src.astype(np.int64))
            to_page, dst_position = _in_sorted(self.ids, self.resolve(dst[from_page]))
            # distinct (src, dst) pairs: the step holds whole pages, so this is per page
            keys = np.unique(src_position[from_page][to_page] * n + dst_position[to_page])
            yield (keys // n).astype(np.int32), (keys % n).astype(np.int32)

    def edges(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The links of the matrix as ``(src, dst)`` int32 positions in :attr:`ids`, in
        chunks of ``chunk_edges``: redirects followed, left-out pages dropped, each pair of
        pages once, ascending by source."""
        return rechunk(self._matrix_steps(), self.chunk_edges)
