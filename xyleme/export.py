"""``xyleme export``: the repository's pages, links or rankings as CSV or JSON lines.

Rows are produced in chunks from the metadata's vectorised reads (no query per page), so an
export of millions of pages streams at a constant memory cost per chunk.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from metadata import PageType

PAGE_TYPES = list(PageType)  # refresh_view's type code is the index in PageType
URL_CHUNK = 10_000

PAGE_COLUMNS = (
    "id",
    "url",
    "type",
    "refreshes",
    "unchanged_accesses",
    "failures",
    "discovered_at",
    "first_access",
    "last_access",
    "last_change",
    "last_modified",
    "change_rate",
    "next_refresh",
)
RANKING_COLUMNS = ("id", "url", "type", "importance", "interest", "opic_cash", "opic_importance")
LINK_COLUMNS = ("src", "dst")
KINDS = {"pages": PAGE_COLUMNS, "links": LINK_COLUMNS, "rankings": RANKING_COLUMNS}


def rows(md: Any, kind: str) -> Iterator[tuple]:
    """The rows of one export kind, in ascending URL-Id order."""
    if kind == "links":
        for sources, targets in md.export_links():
            yield from zip(sources.tolist(), targets.tolist(), strict=True)
        return
    view = md.refresh_view()
    columns = PAGE_COLUMNS if kind == "pages" else RANKING_COLUMNS
    keep = np.ones(view["id"].size, dtype=bool)
    if kind == "rankings":
        ranked = [~np.isnan(view[name]) for name in RANKING_COLUMNS[3:]]
        keep = np.logical_or.reduce(ranked)
    ids = view["id"][keep]
    for start in range(0, ids.size, URL_CHUNK):
        chunk = slice(start, start + URL_CHUNK)
        urls = md.urls_of(ids[chunk].tolist())
        values = {
            name: view[name][keep][chunk].tolist()
            for name in columns
            if name not in ("url", "type")
        }
        types = [PAGE_TYPES[code].value for code in view["type"][keep][chunk].tolist()]
        for offset, url in enumerate(urls):
            yield tuple(
                url
                if name == "url"
                else types[offset]
                if name == "type"
                else _plain(values[name][offset])
                for name in columns
            )


def _plain(value: Any) -> Any:
    """NaN (unknown) becomes an empty CSV cell / a JSON null."""
    return None if isinstance(value, float) and math.isnan(value) else value


def write(md: Any, kind: str, fmt: str, out: IO[str]) -> int:
    """Write every row of ``kind`` to ``out`` as ``csv`` or ``jsonl``; returns the row count."""
    columns = KINDS[kind]
    count = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows(md, kind):
            writer.writerow(row)
            count += 1
    else:
        for row in rows(md, kind):
            out.write(json.dumps(dict(zip(columns, row, strict=True))) + "\n")
            count += 1
    return count
