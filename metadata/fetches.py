"""Refresh-Data (paper §4, §6.1): what each fetch found, and the history of observations.

A fetch result updates its page's record (type, dates, validators, counters) and appends an
observation — when it was read, whether it had changed — to the page's bounded history; the
change-rate estimators read those histories back as arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import numpy as np

from metadata.dialect import Connection, Dialect
from metadata.encoding import (
    OBSERVATION_BYTES,
    decode_observations,
    encode_ids,
    encode_observation,
    history_arrays,
)
from metadata.errors import UnknownPage, translated
from metadata.glance import type_counts
from metadata.page_ids import PageIds
from metadata.store import as_columns, lookup_pages, require_pages
from metadata.types import FetchResult, Observation, PageRecord, PageType
from metadata.urls import canonicalize_url

_FAILED_TYPES = frozenset({PageType.ERROR, PageType.DEAD})

# PageRecord's fields and the pages columns that hold them (the same name but for two).
_RECORD_FIELDS = [name for name in PageRecord.__slots__ if name != "observations"]
_RECORD_COLUMNS = ", ".join(
    {"url_id": "id", "page_type": "type"}.get(name, name) for name in _RECORD_FIELDS
)

# ?1 type, ?2 status, ?3 at, ?4 last_change, ?5 md5, ?6 etag, ?7 last_modified,
# ?8 content_type, ?9 size, ?10 refreshed (0/1), ?11 unchanged (0/1), ?12 redirect_to, ?13 id,
# ?14 robots, ?15 canonical_to.
# A 200 (md5 given) states the validators afresh; a 304 keeps the old ones unless resent,
# and keeps the robots directives and canonical target (it has no body to state them).
# (PostgreSQL cannot type a bare "?5 IS NULL": the CAST says it.)
_UPDATE_READ = """
UPDATE pages SET type = ?1, status = ?2, reason = NULL, failures = 0,
  first_access = coalesce(first_access, ?3), last_access = ?3,
  last_change = coalesce(?4, last_change),
  md5 = coalesce(?5, md5),
  etag = CASE WHEN CAST(?5 AS TEXT) IS NULL THEN coalesce(?6, etag) ELSE ?6 END,
  last_modified = CASE WHEN CAST(?5 AS TEXT) IS NULL THEN coalesce(?7, last_modified) ELSE ?7 END,
  content_type = coalesce(?8, content_type), size = coalesce(?9, size),
  refreshes = refreshes + ?10, unchanged_accesses = unchanged_accesses + ?11,
  redirect_to = ?12,
  robots = CASE WHEN ?2 = 304 THEN robots ELSE ?14 END,
  canonical_to = CASE WHEN ?2 = 304 THEN canonical_to ELSE ?15 END
WHERE id = ?13
"""
# ?1 type, ?2 status, ?3 reason, ?4 at, ?5 id.
_UPDATE_FAILED = """
UPDATE pages SET type = ?1, status = ?2, reason = ?3, failures = failures + 1,
  first_access = coalesce(first_access, ?4), last_access = ?4
WHERE id = ?5
"""
_CHILDREN = ("id", "children", "extra")  # a page's children, replaced by each read


@functools.cache
def _append_observation(dialect: Dialect) -> str:
    """The upsert that appends an observation and keeps the last ``?3`` bytes."""
    return f"""
INSERT INTO observations(id, history) VALUES (?1, ?2)
ON CONFLICT(id) DO UPDATE SET
  history = {dialect.tail("observations.history || excluded.history", "?3")}
"""


class Fetches(PageIds):
    """Fetch records and their observations (by URL too, hence over :class:`PageIds`)."""

    def record_fetch(self, result: FetchResult) -> bool | None:
        """Record one fetch in its own transaction; returns whether the page changed."""
        return self.record_fetches([result])[0]

    def record_fetches(self, results: Sequence[FetchResult]) -> list[bool | None]:
        """Record fetch results in one transaction: page records, children, observations.

        A successful read (any type but ERROR/DEAD) updates the dates, validators and
        counters and appends an observation; ``changed`` is decided here from the stored MD5
        unless the result states it: None on the first read, False for a 304 (no MD5) or an
        equal MD5, True otherwise. ``refreshes`` counts the reads that could be compared
        with a previous one (the N access intervals of §6.1.1), ``unchanged_accesses`` the
        no-change ones. A failed fetch (ERROR/DEAD) records its status and reason and
        counts a failure; it is no observation. Children are replaced when the result has a
        list. Returns the ``changed`` of each result, for the crawler's events.
        Raises :class:`UnknownPage` (and writes nothing) if a URL-Id is unknown.
        """
        if not results:
            return []
        # Runs of reads and of failures, in the batch's order: a page fetched twice in one
        # batch ends as its last fetch left it.
        page_updates: list[tuple[str, list[tuple]]] = []
        histories: list[tuple[int, bytes, int]] = []
        children: list[tuple[int, bytes, int]] = []
        verdicts: list[bool | None] = []
        history_bytes = self.settings.observation_limit * OBSERVATION_BYTES
        with self._write() as conn:
            previous_md5 = _previous_md5(conn, [result.url_id for result in results])
            for result in results:
                if result.page_type in _FAILED_TYPES:
                    _append_run(
                        page_updates,
                        _UPDATE_FAILED,
                        (
                            result.page_type.value,
                            result.status,
                            result.reason,
                            result.fetched_at,
                            result.url_id,
                        ),
                    )
                    verdicts.append(None)
                else:
                    changed = _decide_changed(result, previous_md5[result.url_id])
                    if result.md5 is not None:
                        previous_md5[result.url_id] = result.md5
                    _append_run(
                        page_updates,
                        _UPDATE_READ,
                        (
                            result.page_type.value,
                            result.status,
                            result.fetched_at,
                            result.fetched_at if changed else None,
                            result.md5,
                            result.etag,
                            result.last_modified,
                            result.content_type,
                            result.size,
                            int(changed is not None),
                            int(changed is False),
                            result.redirect_to,
                            result.url_id,
                            result.robots,
                            result.canonical_to,
                        ),
                    )
                    observation = encode_observation(
                        result.fetched_at, changed, result.last_modified
                    )
                    histories.append((result.url_id, observation, history_bytes))
                    verdicts.append(changed)
                if result.children is not None:
                    children.append((result.url_id, *encode_ids(result.children)))
            for statement, rows in page_updates:
                conn.executemany(statement, rows)
            if histories:
                conn.executemany(_append_observation(self.dialect), histories)
            self.dialect.upsert_many(conn, "links", _CHILDREN, children)
        return verdicts

    def page(self, url_id: int) -> PageRecord:
        """The whole Refresh-Data record of a page, with its observation history."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_RECORD_COLUMNS} FROM pages WHERE id = ?", (url_id,)
            ).fetchone()
            if row is None:
                raise UnknownPage(url_id)
            history = conn.execute(
                "SELECT history FROM observations WHERE id = ?", (url_id,)
            ).fetchone()
        fields = dict(zip(_RECORD_FIELDS, row, strict=True))
        fields["page_type"] = PageType(fields["page_type"])
        return PageRecord(
            **fields, observations=decode_observations(history[0] if history else None)
        )

    def page_by_url(self, url: str) -> PageRecord:
        """The record of a URL (canonicalised first); :class:`UnknownPage` if never seen."""
        url_id = self.id_for(url, create=False)
        if url_id is None:
            raise UnknownPage(canonicalize_url(url))
        return self.page(url_id)

    def observations(self, url_id: int) -> list[Observation]:
        """The bounded access history of a page, oldest first."""
        row = self._one("SELECT history FROM observations WHERE id = ?", (url_id,))
        return decode_observations(row[0] if row else None)

    def observation_history(self) -> dict[str, np.ndarray]:
        """Every page's history as arrays, for vectorised change-rate estimation (§6.1).

        Returns ``id`` (pages with at least one observation, ascending), ``offsets``
        (page k's rows are ``offsets[k]:offsets[k + 1]``) and the row columns ``at``,
        ``changed`` (1.0, 0.0, or NaN for a first access) and ``last_modified`` (NaN when
        the server sent none).
        """
        ids, blobs = as_columns(self._scan("SELECT id, history FROM observations ORDER BY id"), 2)
        offsets, table = history_arrays(blobs)
        return {
            "id": np.asarray(ids, dtype=np.int64),
            "offsets": offsets,
            "at": table[:, 0].copy(),
            "changed": table[:, 1].copy(),
            "last_modified": table[:, 2].copy(),
        }

    def set_type(self, url_id: int, page_type: PageType, reason: str | None = None) -> None:
        """Change a page's type (e.g. the loader found an 'XML' page is not well formed)."""
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE pages SET type = ?, reason = ? WHERE id = ?",
                (PageType(page_type).value, reason, url_id),
            )
            if cursor.rowcount == 0:
                raise UnknownPage(url_id)

    def set_type_many(self, rows: Iterable[tuple[int, PageType, str | None]]) -> None:
        """:meth:`set_type` for many ``(url_id, page_type, reason)`` in one transaction.

        An id without a page raises :class:`UnknownPage` and nothing is written.
        """
        values = [(PageType(t).value, reason, int(url_id)) for url_id, t, reason in rows]
        with self._write() as conn:
            changed = conn.executemany("UPDATE pages SET type = ?, reason = ? WHERE id = ?", values)
            if changed.rowcount != len(values):
                require_pages(conn, [url_id for _, _, url_id in values])

    def content_md5s(self, page_type: PageType) -> dict[int, str]:
        """URL-Id -> MD5 of the last content read, for every page of ``page_type``.

        The daemon compares it with the loader's stored versions at start: an XML page whose
        read was committed but whose load a crash cut off has an MD5 the loader lacks.
        """
        rows = self._scan(
            "SELECT id, md5 FROM pages WHERE type = ? AND md5 IS NOT NULL ORDER BY id",
            (PageType(page_type).value,),
        )
        return dict(rows)

    def count_by_type(self) -> dict[PageType, int]:
        """How many pages of each type (every type present, zeros included)."""
        with self._lock, translated(self.name):
            return type_counts(self._conn)


def _previous_md5(conn: Connection, ids: list[int]) -> dict[int, str | None]:
    """The stored MD5 of each page; :class:`UnknownPage` on the first unknown id."""
    found = dict(lookup_pages(conn, ids, "id, md5"))
    if len(found) != len(set(ids)):
        raise UnknownPage(next(url_id for url_id in ids if url_id not in found))
    return found


def _append_run(runs: list[tuple[str, list[tuple]]], statement: str, row: tuple) -> None:
    """Add ``row`` to the last run if it has the same statement, else start a new run."""
    if runs and runs[-1][0] is statement:
        runs[-1][1].append(row)
    else:
        runs.append((statement, [row]))


def _decide_changed(result: FetchResult, previous_md5: str | None) -> bool | None:
    """Whether this read saw a change (None: nothing to compare with yet)."""
    if previous_md5 is None:
        return None
    if result.changed is not None:
        return result.changed
    if result.md5 is None:
        return False  # a 304 Not Modified is never a change
    return result.md5 != previous_md5
