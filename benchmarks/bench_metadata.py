"""Benchmark of the metadata manager against raw ``sqlite3`` ``executemany``, in one run.

Measures, for the same already-canonical URLs and the same rows:

* URL-Id assignment: ``Metadata.ids_for(..., canonical=True)`` against a raw
  ``executemany`` INSERT into an identical ``pages`` table;
* fetch-result updates with 10 links each: ``Metadata.record_fetches`` against raw
  ``executemany`` of the same three statements (page record, children blob, observation);
* canonicalisation on its own (URLs/s), through ``canonicalize_url``;
* the link-matrix export (edges/s) through ``Metadata.export_links``.

Both sides commit once per batch of ``--batch`` rows. Run::

    python benchmarks/bench_metadata.py --smoke     # 2,000 rows, a few seconds
    python benchmarks/bench_metadata.py --quick     # 100k rows, well under a minute
    python benchmarks/bench_metadata.py             # 1M rows

The last line printed is a JSON object with ``assign_ratio``, ``update_ratio`` (API / raw),
``canonicalize_urls_per_s`` and ``export_edges_per_s``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from metadata import FetchResult, Metadata, PageType, canonicalize_url
from metadata.dialect import SQLITE, upsert_sql
from metadata.fetches import _CHILDREN, _UPDATE_READ, _append_observation

LINKS_PER_PAGE = 10


def canonical_urls(count: int) -> list[str]:
    """``count`` distinct canonical URLs spread over 1,000 hosts."""
    return [
        f"http://host{n % 1000}.example.com/section/{n // 1000}/page-{n}.xml" for n in range(count)
    ]


def batches(count: int, size: int) -> Iterator[range]:
    for start in range(0, count, size):
        yield range(start, min(count, start + size))


def fetch_batch(rows: range, rng: np.random.Generator, pages: int) -> list[FetchResult]:
    """First reads of the pages in ``rows``, each with ``LINKS_PER_PAGE`` children."""
    children = rng.integers(1, pages + 1, size=(len(rows), LINKS_PER_PAGE)).tolist()
    return [
        FetchResult(
            url_id=row + 1,
            fetched_at=1e9 + row,
            page_type=PageType.XML,
            status=200,
            md5=f"{row:032x}",
            last_modified=1e9 + row - 3600.0,
            etag=f'"{row}"',
            content_type="application/xml",
            size=4096,
            children=links,
        )
        for row, links in zip(rows, children, strict=True)
    ]


def raw_update_rows(results: list[FetchResult], history_bytes: int) -> tuple[list, list, list]:
    """The parameters of the three statements the API runs, built the plain way, in the
    order of ``_UPDATE_READ``'s numbered parameters (?1 … ?15)."""
    pages, links, observations = [], [], []
    for r in results:
        pages.append(
            (
                r.page_type.value,
                r.status,
                r.fetched_at,
                None,
                r.md5,
                r.etag,
                r.last_modified,
                r.content_type,
                r.size,
                False,
                False,
                r.redirect_to,
                r.url_id,
                r.robots,
                r.canonical_to,
            )
        )
        links.append((r.url_id, np.asarray(r.children, dtype="<i4").tobytes(), 0))
        observation = struct.pack("<3d", r.fetched_at, float("nan"), r.last_modified)
        observations.append((r.url_id, observation, history_bytes))
    return pages, links, observations


def timed(work: Callable[[], None]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def raw_connection(path: Path) -> sqlite3.Connection:
    """A plain connection with the API's pragmas, so both sides run the same engine setup."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -65536")
    return conn


def bench_assignment(folder: Path, urls: list[str], batch: int) -> tuple[float, float]:
    """Rows/s of the API and of raw executemany for URL-Id assignment.

    The two sides alternate batch by batch, so both see the same load on a shared machine.
    """
    Metadata.create(folder / "raw.db").close()
    conn = raw_connection(folder / "raw.db")
    now = time.time()

    def insert(rows: list[str]) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO pages(url, discovered_at) VALUES (?, ?)", [(url, now) for url in rows]
        )
        conn.execute("COMMIT")

    api = raw = 0.0
    with Metadata.create(folder / "api.db") as md:
        for rows in batches(len(urls), batch):
            chunk = urls[rows.start : rows.stop]
            api += timed(lambda chunk=chunk: md.ids_for(chunk, canonical=True))
            raw += timed(lambda chunk=chunk: insert(chunk))
    conn.close()
    return len(urls) / api, len(urls) / raw


def bench_updates(folder: Path, count: int, batch: int) -> tuple[float, float]:
    """Rows/s of the API and of raw executemany for first fetch results with 10 links."""
    rng = np.random.default_rng(1)
    conn = raw_connection(folder / "raw.db")

    def update(pages: list, links: list, observations: list) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(_UPDATE_READ, pages)
        conn.executemany(_append_observation(SQLITE), observations)
        conn.executemany(upsert_sql("links", _CHILDREN), links)
        conn.execute("COMMIT")

    api = raw = 0.0
    with Metadata.open(folder / "api.db") as md:
        history_bytes = md.settings.observation_limit * 24
        for rows in batches(count, batch):
            results = fetch_batch(rows, rng, count)
            plain = raw_update_rows(results, history_bytes)
            api += timed(lambda results=results: md.record_fetches(results))
            raw += timed(lambda plain=plain: update(*plain))
    conn.close()
    return count / api, count / raw


def bench_canonicalize(urls: list[str]) -> float:
    """URLs/s of ``canonicalize_url`` on spellings that need work (case, default port)."""
    spelled = [
        url.replace("http://host", "HTTP://Host").replace(".com/", ".com:80/./") for url in urls
    ]
    elapsed = timed(lambda: [canonicalize_url(url) for url in spelled])
    return len(spelled) / elapsed


def bench_export(folder: Path) -> tuple[float, int]:
    """Edges/s of the streaming link export, and the number of edges."""
    with Metadata.open(folder / "api.db", readonly=True) as md:
        start = time.perf_counter()
        edges = sum(len(src) for src, _ in md.export_links())
        return edges / (time.perf_counter() - start), edges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100k rows (under a minute)")
    parser.add_argument("--smoke", action="store_true", help="2,000 rows (a few seconds)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows without --quick")
    parser.add_argument("--batch", type=int, default=1_000, help="rows per transaction")
    args = parser.parse_args()
    count = 2_000 if args.smoke else 100_000 if args.quick else args.rows
    urls = canonical_urls(count)
    with tempfile.TemporaryDirectory(prefix="bench_metadata_") as scratch:
        folder = Path(scratch)
        api_assign, raw_assign = bench_assignment(folder, urls, args.batch)
        print(
            f"URL-Id assignment, {count:,} URLs:   API {api_assign:>10,.0f} rows/s   "
            f"raw executemany {raw_assign:>10,.0f} rows/s   ratio {api_assign / raw_assign:.2f}"
        )
        api_update, raw_update = bench_updates(folder, count, args.batch)
        print(
            f"fetch results, {LINKS_PER_PAGE} links each:   API {api_update:>10,.0f} rows/s   "
            f"raw executemany {raw_update:>10,.0f} rows/s   ratio {api_update / raw_update:.2f}"
        )
        canonicalize = bench_canonicalize(urls[: min(count, 100_000)])
        print(f"canonicalize_url (yarl):          {canonicalize:>10,.0f} URLs/s")
        export, edges = bench_export(folder)
        print(f"link export, {edges:,} edges:    {export:>12,.0f} edges/s")
    print(
        json.dumps(
            {
                "rows": count,
                "assign_ratio": round(api_assign / raw_assign, 3),
                "update_ratio": round(api_update / raw_update, 3),
                "api_assign_rows_per_s": round(api_assign),
                "raw_assign_rows_per_s": round(raw_assign),
                "api_update_rows_per_s": round(api_update),
                "raw_update_rows_per_s": round(raw_update),
                "canonicalize_urls_per_s": round(canonicalize),
                "export_edges_per_s": round(export),
            }
        )
    )


if __name__ == "__main__":
    main()
