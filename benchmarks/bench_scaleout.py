"""Past one machine (issue 20), part 1: the metadata write rates of both engines.

Starts its own throwaway PostgreSQL cluster (:mod:`benchmarks.pgcluster`, fsync on: a real
server's durability) and measures, on the same machine and the same rows, rows per second of:

* URL-Id assignment through the store (``ids_for(..., canonical=True)``: the id lookup, the
  insert — ``executemany`` on SQLite, ``COPY`` on PostgreSQL — and the commit), against a
  raw ``INSERT`` by ``executemany`` on each engine and a raw ``COPY`` on PostgreSQL;
* first fetch results with 10 links each through the store (``record_fetches``).

Batches of 1,000 rows, one transaction each, the engines alternating batch by batch so both
see the same load. The crawl figures (``pages_per_s`` of the SQLite daemon and of 1 and 2
PostgreSQL workers) need the workers of part 2: they are null until then. ``cash_drift`` is
OPIC's total-cash error after a run of 2 parts with a kill (:mod:`benchmarks.scaleout_cash`).

    python benchmarks/bench_scaleout.py --quick    # < 60 s
    python benchmarks/bench_scaleout.py --smoke    # a few seconds
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

import psycopg

from benchmarks.pgcluster import start_cluster
from benchmarks.scaleout_cash import report_cash_drift
from metadata import FetchResult, Metadata, PageType

BATCH = 1_000
RAW_TABLE = "CREATE TABLE raw_pages (id BIGINT PRIMARY KEY, url TEXT NOT NULL UNIQUE, at FLOAT)"


def urls(engine: str, start: int, count: int) -> list[str]:
    return [f"http://host{n % 997}.test/{engine}/page/{n}" for n in range(start, start + count)]


@contextmanager
def timed(seconds: dict[str, float], key: str) -> Iterator[None]:
    """Add the block's wall time to ``seconds[key]``."""
    began = time.perf_counter()
    yield
    seconds[key] = seconds.get(key, 0.0) + time.perf_counter() - began


def raw_sqlite(conn: sqlite3.Connection, batch: list[tuple]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO raw_pages VALUES (?, ?, ?)", batch)
    conn.execute("COMMIT")


def raw_postgres(conn: psycopg.Connection, batch: list[tuple], *, copy: bool) -> None:
    with conn.transaction():
        cursor = conn.cursor()
        if copy:
            with cursor.copy("COPY raw_pages (id, url, at) FROM STDIN") as writer:
                for row in batch:
                    writer.write_row(row)
        else:
            cursor.executemany("INSERT INTO raw_pages VALUES (%s, %s, %s)", batch)


def fetches(ids: list[int], at: float) -> list[FetchResult]:
    return [
        FetchResult(url_id, at, PageType.HTML, 200, md5=f"{url_id:032x}", children=ids[k : k + 10])
        for k, url_id in enumerate(ids)
    ]


def measure(batches: int) -> dict[str, float]:
    """Rows per second of each writer over ``batches`` alternating batches."""
    seconds: dict[str, float] = {}
    cluster = start_cluster(durable=True)
    try:
        cluster.admin("CREATE DATABASE api")
        cluster.admin("CREATE DATABASE raw")
        with tempfile.TemporaryDirectory() as folder:
            lite_raw = sqlite3.connect(Path(folder) / "raw.db", isolation_level=None)
            lite_raw.execute("PRAGMA journal_mode = WAL")
            lite_raw.execute("PRAGMA synchronous = NORMAL")
            lite_raw.execute(RAW_TABLE)
            pg_raw = psycopg.connect(cluster.url("raw"), autocommit=True)
            pg_raw.execute(RAW_TABLE)
            lite = Metadata.create(Path(folder) / "metadata.db")
            pg = Metadata.create(cluster.url("api"))
            try:
                for b in range(batches):
                    start = b * BATCH
                    rows = [
                        (start + n + 1, url, 1.0) for n, url in enumerate(urls("r", start, BATCH))
                    ]
                    copied = [(row[0] + 10**9, row[1] + "c", row[2]) for row in rows]
                    with timed(seconds, "sqlite_raw_executemany"):
                        raw_sqlite(lite_raw, rows)
                    with timed(seconds, "postgres_raw_executemany"):
                        raw_postgres(pg_raw, rows, copy=False)
                    with timed(seconds, "postgres_raw_copy"):
                        raw_postgres(pg_raw, copied, copy=True)
                    for engine, md in (("sqlite", lite), ("postgres", pg)):
                        with timed(seconds, f"{engine}_api_ids"):
                            ids = md.ids_for(urls(engine, start, BATCH), canonical=True)
                        results = fetches(ids, float(b + 1))
                        with timed(seconds, f"{engine}_api_fetches"):
                            md.record_fetches(results)
            finally:
                lite.close()
                pg.close()
                pg_raw.close()
                lite_raw.close()
    finally:
        cluster.stop()
    return {key: round(batches * BATCH / spent) for key, spent in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="20 batches (< 60 s)")
    mode.add_argument("--smoke", action="store_true", help="2 batches (a few seconds)")
    args = parser.parse_args()
    batches = 2 if args.smoke else 20 if args.quick else 100
    rates = measure(batches)
    print(f"metadata writes, rows/s ({batches} batches of {BATCH} rows, one transaction each):")
    for key, rate in sorted(rates.items()):
        print(f"  {key:28s} {rate:>10,d}")
    sqlite_ratio = rates["sqlite_api_ids"] / rates["sqlite_raw_executemany"]
    postgres_ratio = rates["postgres_api_ids"] / rates["postgres_raw_executemany"]
    copy_ratio = rates["postgres_api_ids"] / rates["postgres_raw_copy"]
    print(
        f"  store ids / raw insert: sqlite {sqlite_ratio:.2f}, "
        f"postgres {postgres_ratio:.2f} (vs raw COPY {copy_ratio:.2f})"
    )
    cash_drift = report_cash_drift("smoke" if args.smoke else "quick" if args.quick else "full")
    result = {
        "metadata_write_rows_per_s": rates,
        "cash_drift": cash_drift,
        "pages_per_s": {
            "sqlite_daemon": None,
            "postgres_1_worker": None,
            "postgres_2_workers": None,
        },
        "note": "pages_per_s needs the crawl workers of issue 20 part 2",
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
