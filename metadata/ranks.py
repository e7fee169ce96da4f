"""Scores (paper §5, §6): the rank and rate columns of every page, written and read as arrays.

The rankings and the change-rate estimator write one column for many pages at once; the
refresh plan reads every page's numbers back as one array per column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from metadata.errors import UnknownPage
from metadata.store import Store, as_columns, lookup_pages
from metadata.types import PAGE_TYPE_CODE, SCORE_COLUMNS

_TYPE_CODES = {page_type.value: code for page_type, code in PAGE_TYPE_CODE.items()}

_VIEW_COLUMNS = [
    *("id", "type", "refreshes", "unchanged_accesses", "failures"),
    *("discovered_at", "first_access", "last_access", "last_change", "last_modified"),
    *("change_rate", "importance", "interest", "opic_cash", "opic_importance", "next_refresh"),
]


class Ranks(Store):
    """Score columns in, score columns and the refresh view out."""

    def set_scores(
        self,
        column: str,
        ids: Sequence[int] | np.ndarray,
        values: Sequence[float] | np.ndarray,
        *,
        method: str | None = None,
    ) -> None:
        """Write one score column for many pages in one transaction (NaN stores "unknown").

        An id without a page raises :class:`UnknownPage` and nothing is written.

        ``column`` is one of :data:`~metadata.types.SCORE_COLUMNS`. For ``change_rate``,
        ``method`` records which estimator produced the values (e.g. ``"eq9"``).
        """
        if column not in SCORE_COLUMNS:
            raise ValueError(f"unknown score column {column!r}; one of {SCORE_COLUMNS}")
        if method is not None and column != "change_rate":
            raise ValueError("method only describes change_rate values")
        id_list = np.asarray(ids, dtype=np.int64).tolist()
        value_list = [  # NaN stores NULL, as SQLite binds it; PostgreSQL would keep a NaN
            None if value != value else value
            for value in np.asarray(values, dtype=np.float64).tolist()
        ]
        if len(id_list) != len(value_list):
            raise ValueError(f"{len(id_list)} ids but {len(value_list)} values")
        columns = [(column, "double precision")]
        rows: Iterable[tuple] = zip(id_list, value_list, strict=True)
        if method is not None:
            columns.append(("change_rate_method", "text"))
            rows = ((url_id, value, method) for url_id, value in rows)
        with self._write() as conn:
            changed, given = self.dialect.update_many(conn, "pages", columns, rows)
            if changed != given:  # some id has no page
                known = {row[0] for row in lookup_pages(conn, id_list, "id")}
                raise UnknownPage(next(url_id for url_id in id_list if url_id not in known))

    def scores(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int64, values float64)`` of the pages whose ``column`` is set."""
        if column not in SCORE_COLUMNS:
            raise ValueError(f"unknown score column {column!r}; one of {SCORE_COLUMNS}")
        rows = self._all(f"SELECT id, {column} FROM pages WHERE {column} IS NOT NULL ORDER BY id")
        ids, values = as_columns(rows, 2)
        return np.asarray(ids, dtype=np.int64), np.asarray(values, dtype=np.float64)

    def refresh_view(self) -> dict[str, np.ndarray]:
        """One numpy array per Refresh-Data column, one entry per page, by ascending id.

        ``id`` (int64), ``type`` (int8 codes of :data:`~metadata.types.PAGE_TYPE_CODE`),
        the counters ``refreshes``, ``unchanged_accesses``, ``failures`` (int64), and as
        float64 with NaN for "unknown": ``discovered_at``, ``first_access``,
        ``last_access``, ``last_change``, ``last_modified``, ``change_rate``,
        ``importance``, ``interest``, ``opic_cash``, ``opic_importance``, ``next_refresh``.
        """
        names = _VIEW_COLUMNS
        rows = self._scan(f"SELECT {', '.join(names)} FROM pages ORDER BY id")
        columns = as_columns(rows, len(names))
        view: dict[str, np.ndarray] = {}
        for name, values in zip(names, columns, strict=True):
            if name == "type":
                codes = map(_TYPE_CODES.__getitem__, values)
                view[name] = np.fromiter(codes, np.int8, len(values))
            elif name in ("id", "refreshes", "unchanged_accesses", "failures"):
                view[name] = np.asarray(values, dtype=np.int64)
            else:
                view[name] = np.asarray(values, dtype=np.float64)
        return view
