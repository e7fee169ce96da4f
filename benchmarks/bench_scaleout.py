"""Past one machine (issue 20): crawl rates of the SQLite daemon and of PostgreSQL workers,
and the metadata write rates of both engines.

Starts its own throwaway PostgreSQL cluster (:mod:`benchmarks.pgcluster`, fsync on: a real
server's durability) and the simulated web (a child process, frozen: every run sees the
same pages, every body rendered before the runs), then:

* **crawl rates** (``pages_per_s``): the same budget of first reads on the same web, by
  ``xyleme run`` on an SQLite repository, then ``xyleme run --workers 1`` and ``--workers
  2`` on PostgreSQL repositories (each a fresh store; archive off in all three, its cost is
  ``bench_daemon.py``'s). A run is timed from the moment every worker has read ``WARMUP``
  pages (the daemon: its ``WARMUP``-th read) to its budget, so the processes' start-up is
  left out (two workers start in two processes, up to half a second apart here), read
  counts polled every 0.1 s; the ratios ``pg1_over_sqlite`` and ``pg2_over_pg1`` follow,
  and ``pg2_target_needs_cores``: the CPU two workers would burn to read ``PG2_TARGET``
  times one worker's pages/s at the CPU a page cost them here (xyleme's processes, the
  server and the simulated web, which all share this machine's ``machine_cores``): more
  than the machine has, and that ratio cannot show; each run's ``machine_busy`` is the
  share of the machine's cores busy in its window, and ``pg2_over_sqlite`` what both
  targets together ask to be at least 0.7 × 1.6;
* **metadata write rates**, on the same machine and the same rows: URL-Id assignment
  through the store (``ids_for(..., canonical=True)``) against a raw ``INSERT`` by
  ``executemany`` on each engine and a raw ``COPY`` on PostgreSQL, and first fetch results
  with 10 links each through the store (``record_fetches``); batches of 1,000 rows, one
  transaction each, the engines alternating batch by batch so both see the same load; every
  writer commits with the store's default durability (survives a killed process: SQLite's
  ``synchronous = NORMAL``, PostgreSQL's ``synchronous_commit = off``).

``cash_drift`` is OPIC's total-cash error after a run of 2 parts with a kill
(:mod:`benchmarks.scaleout_cash`).

    python benchmarks/bench_scaleout.py --quick    # < 60 s
    python benchmarks/bench_scaleout.py --smoke    # 100 reads by the daemon and by one
                                                   # worker (the 2-worker run is skipped,
                                                   # its figure null with a note), one batch
"""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

import psutil
import psycopg

from benchmarks.pgcluster import PostgresCluster, start_cluster
from benchmarks.scaleout_cash import report_cash_drift
from metadata import FetchResult, Glance, Metadata, MetadataError, PageType
from xyleme.simweb import SimWebProcess, SimWebSettings

BATCH = 1_000
CPU_KEYS = {  # a crawl run's CPU per page: its key, and the process tree it is read from
    "cpu_ms_per_page": "xyleme",
    "server_cpu_ms_per_page": "server",
    "web_cpu_ms_per_page": "web",
}
PG2_TARGET = 1.6  # issue 20: two workers read at least 1.6 times one worker's pages/s
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


CRAWL_CONFIG = """
[archive]
enabled = false
crawl_log = false

[crawler]
scope = ["simweb.test"]
min_delay = 0.0
max_crawl_delay = 0.0
per_host_concurrency = 4
shutdown_deadline = 2.0
"""
WARMUP = 20
"""First reads before the clock starts: the processes' start-up is not the crawl."""
MIN_TIMED_PAGES = 20
"""Fewer pages read in the timed window (polled every 0.1 s) make no rate."""
CRAWL_TIMEOUT_S = 120.0
"""A run that has not read its budget by then is stopped and measured as it is."""
SMOKE_TIMEOUT_S = 30.0
"""The same for --smoke."""


class ReadCounter:
    """Pages read so far (every type but UNKNOWN) in a repository's committed store, asked
    through one connection kept open for the run: a connection a poll made the PostgreSQL
    server start a backend process ten times a second, on the cores the crawl is measured on.
    """

    def __init__(self, repository: Path) -> None:
        self.path = repository / "metadata.db"
        self.glance: Glance | None = None

    def __call__(self) -> int:
        try:
            if self.glance is None:
                self.glance = Glance.open(self.path)
            counts = self.glance.count_by_type()
        except MetadataError:  # not created yet, or a moment of contention: not read yet
            self.close()
            return 0
        return sum(count for kind, count in counts.items() if kind is not PageType.UNKNOWN)

    def close(self) -> None:
        if self.glance is not None:
            self.glance.close()
            self.glance = None


def every_worker_warm(url: str | None, workers: int) -> bool:
    """Whether each of ``workers`` has read ``WARMUP`` pages of its part (``host_hash %
    workers``) in the committed PostgreSQL store at ``url``: each worker starts its own
    process, and one may still be starting when another has read its warm-up. One process
    (the daemon, or one worker) is warm once the store holds ``WARMUP`` reads, which the
    caller counts."""
    if url is None or workers == 1:
        return True
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            reads = dict(
                conn.execute(
                    "SELECT host_hash %% %s, count(*) FROM pages WHERE type <> 'UNKNOWN' "
                    "GROUP BY 1",
                    (workers,),
                ).fetchall()
            )
    except psycopg.Error:  # the schema not made yet: nothing read
        return False
    return all(reads.get(part, 0) >= WARMUP for part in range(workers))


def tree_cpu(roots: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) of each process of the trees rooted at ``roots``."""
    spent: dict[int, float] = {}
    for root in roots:
        try:
            top = psutil.Process(root)
            processes = [top, *top.children(recursive=True)]
        except psutil.Error:
            continue
        for process in processes:
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            spent[process.pid] = times.user + times.system
    return spent


def cpu_between(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two :func:`tree_cpu` snapshots (a new process: all of it)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def machine_busy(before: NamedTuple, after: NamedTuple) -> float:
    """The share of the machine's cores busy between two ``psutil.cpu_times()`` (every
    process, the benchmark's own and the operating system's too; waiting for I/O is idle):
    1.0 is every core full, where two workers can read no faster but by costing less."""
    spent = {k: getattr(after, k) - getattr(before, k) for k in after._fields}
    idle = spent["idle"] + spent.get("iowait", 0.0)
    total = sum(v for k, v in spent.items() if not k.startswith("guest"))  # in user already
    return round(1.0 - idle / total, 3) if total > 0 else 0.0


def crawl_rate(
    repository: Path,
    web: SimWebProcess,
    budget: int,
    server: int,
    timeout: float,
    store: tuple[str | None, int],
) -> dict:
    """``xyleme run`` on ``repository`` until ``budget`` pages are read (``store``: the
    PostgreSQL URL and the ``--workers`` on it; None and 1 for the SQLite daemon): pages/s
    from the moment every worker has read ``WARMUP`` pages to the budget, and the CPU the
    xyleme processes, the PostgreSQL server (``server``: its postmaster's pid) and the
    simulated web spent meanwhile, per page (the web's is this machine's only: a real one
    costs it nothing)."""
    url, workers = store
    command = [sys.executable, "-P", "-m", "xyleme", "--repo", str(repository), "run"]
    command += [*(("--workers", str(workers)) if url else ()), "--simweb-port", str(web.port)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    roots = {"xyleme": process.pid, "server": server, "web": web.pid}
    started = time.monotonic()
    warm_at = warm_count = None
    count = 0
    read_count = ReadCounter(repository)
    try:
        while time.monotonic() - started < timeout and process.poll() is None:
            count = read_count()
            now = time.monotonic()
            if warm_at is None and count >= WARMUP and every_worker_warm(url, workers):
                warm_at, warm_count = now, count
                cpu_at_warm = {name: tree_cpu([pid]) for name, pid in roots.items()}
                machine_at_warm = psutil.cpu_times()
            if count >= budget:
                break
            time.sleep(0.1)
        ended = time.monotonic()
        spent = {  # empty when never warm: no rate is made then
            name: cpu_between(cpu_at_warm[name], tree_cpu([pid]))
            for name, pid in (roots.items() if warm_at else ())
        }
        busy = machine_busy(machine_at_warm, psutil.cpu_times()) if warm_at else None
    finally:
        read_count.close()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    stop_s = time.monotonic() - ended
    if warm_at is None:
        why = f"read {count} pages only before the {timeout:g} s timeout"
        return {"pages_per_s": None, "read": count, "seconds": None, "why": why}
    seconds, pages = ended - warm_at, count - warm_count
    if pages < MIN_TIMED_PAGES:
        why = f"read its budget ({count}) within {seconds:.2f} s of its warm-up: too fast to time"
        return {"pages_per_s": None, "read": count, "seconds": None, "why": why}
    return {
        "pages_per_s": round(pages / seconds, 1),
        "read": count,
        "seconds": round(seconds, 2),
        **{key: round(1000 * spent[root] / pages, 2) for key, root in CPU_KEYS.items()},
        "cores_used": round((spent["xyleme"] + spent["server"]) / seconds, 2),
        "machine_busy": busy,
        "start_s": round(warm_at - started, 2),
        "stop_s": round(stop_s, 2),
    }


def crawl_rates(
    cluster: PostgresCluster, budget: int, pages: int, *, smoke: bool = False
) -> dict[str, dict]:
    """The three crawls of the same budget on the same frozen web, each on a fresh store
    (``smoke``: the daemon's and one worker's, with a short timeout)."""
    settings = SimWebSettings(hosts=8, pages=pages, seed=20).without_faults()
    runs: dict[str, dict] = {}
    # precompute: every body rendered before the runs, so the web's CPU in the window is its
    # serving only (a real web's costs the crawl's machine nothing)
    with (
        SimWebProcess(settings, frozen=True, precompute=True) as web,
        tempfile.TemporaryDirectory() as folder,
    ):
        plans = {  # the store's database (None: SQLite) and the workers
            "sqlite_daemon": (None, 1),
            "postgres_1_worker": ("crawl1", 1),
            "postgres_2_workers": ("crawl2", 2),
        }
        for name, (database, workers) in plans.items():
            if smoke and name == "postgres_2_workers":
                why = "not run by --smoke (its start-up alone is ~10 s): run --quick"
                runs[name] = {"pages_per_s": None, "read": 0, "seconds": None, "why": why}
                print(f"  {name:20s} {why}", flush=True)
                continue
            repository = Path(folder) / name
            url = None
            if database is not None:
                cluster.admin(f"CREATE DATABASE {database}")
                url = cluster.url(database)
            make_crawl_repository(repository, url, web.seed_urls)
            timeout = SMOKE_TIMEOUT_S if smoke else CRAWL_TIMEOUT_S
            runs[name] = crawl_rate(
                repository, web, budget, postmaster(cluster), timeout, (url, workers)
            )
            print(f"  {name:20s} {runs[name]}", flush=True)
    return runs


def postmaster(cluster: PostgresCluster) -> int:
    """The pid of the cluster's server (its backends are its children)."""
    return int((cluster.data_dir / "postmaster.pid").read_text().split()[0])


def make_crawl_repository(repository: Path, url: str | None, seeds: list[str]) -> None:
    """A repository (SQLite, or the store at ``url``) with the crawl's configuration and seeds."""
    from click.testing import CliRunner

    from xyleme.cli import cli

    init = ["init", str(repository), *(["--db", url] if url else [])]
    for args in (init, ["--repo", str(repository), "seed", "add", *seeds]):
        result = CliRunner().invoke(cli, args)
        if result.exit_code != 0:
            raise RuntimeError(f"xyleme {' '.join(args[:3])}: {result.output}")
        if args is init:
            store = f'[store]\nurl = "{url}"\n' if url else ""
            (repository / "xyleme.toml").write_text(store + CRAWL_CONFIG)


def measure(cluster: PostgresCluster, batches: int) -> dict[str, float]:
    """Rows per second of each writer over ``batches`` alternating batches."""
    seconds: dict[str, float] = {}
    cluster.admin("CREATE DATABASE api")
    cluster.admin("CREATE DATABASE raw")
    with tempfile.TemporaryDirectory() as folder:
        lite_raw = sqlite3.connect(Path(folder) / "raw.db", isolation_level=None)
        lite_raw.execute("PRAGMA journal_mode = WAL")
        lite_raw.execute("PRAGMA synchronous = NORMAL")
        lite_raw.execute(RAW_TABLE)
        # committing as the store does by default (synchronous NORMAL: synchronous_commit
        # off; the raw SQLite connection's synchronous = NORMAL is the same durability)
        pg_raw = psycopg.connect(
            cluster.url("raw"), autocommit=True, options="-c synchronous_commit=off"
        )
        pg_raw.execute(RAW_TABLE)
        lite = Metadata.create(Path(folder) / "metadata.db")
        pg = Metadata.create(cluster.url("api"))
        try:
            for b in range(batches):
                start = b * BATCH
                rows = [(start + n + 1, url, 1.0) for n, url in enumerate(urls("r", start, BATCH))]
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
    return {key: round(batches * BATCH / spent) for key, spent in seconds.items()}


def ratio(top: float | None, bottom: float | None) -> float | None:
    return None if not top or not bottom else round(top / bottom, 3)


def cores_needed(one: dict, two: dict, target: float = PG2_TARGET) -> float | None:
    """The cores two workers need to read ``target`` times one worker's pages/s, at the
    CPU a page cost the two-worker run (all the processes sharing the machine)."""
    if not one.get("pages_per_s") or not two.get("pages_per_s"):
        return None
    per_page = sum(two[key] for key in CPU_KEYS) / 1000
    return round(target * one["pages_per_s"] * per_page, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="< 60 s")
    mode.add_argument("--smoke", action="store_true", help="a small budget")
    args = parser.parse_args()
    batches, budget, pages = (
        (1, 100, 300) if args.smoke else (4, 1200, 4000) if args.quick else (100, 5000, 20000)
    )
    cluster = start_cluster(durable=True)
    try:
        print(
            f"crawl rates, first reads {WARMUP} to {budget} (simulated web, 8 hosts):", flush=True
        )
        runs = crawl_rates(cluster, budget, pages, smoke=args.smoke)
        rates = measure(cluster, batches)
    finally:
        cluster.stop()
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
    pages_per_s = {name: run["pages_per_s"] for name, run in runs.items()}
    unmeasured = sorted(name for name, rate in pages_per_s.items() if rate is None)
    one_worker, two_workers = runs["postgres_1_worker"], runs["postgres_2_workers"]
    result = {
        "pages_per_s": pages_per_s,
        "pg1_over_sqlite": ratio(pages_per_s["postgres_1_worker"], pages_per_s["sqlite_daemon"]),
        "pg2_over_pg1": ratio(pages_per_s["postgres_2_workers"], pages_per_s["postgres_1_worker"]),
        "pg2_over_sqlite": ratio(pages_per_s["postgres_2_workers"], pages_per_s["sqlite_daemon"]),
        "pg2_target_needs_cores": cores_needed(one_worker, two_workers),
        "machine_cores": psutil.cpu_count(),
        "crawl_runs": runs,
        "metadata_write_rows_per_s": rates,
        "cash_drift": cash_drift,
        "notes": {name: run["why"] for name, run in runs.items() if "why" in run}
        | {
            key: f"{', '.join(unmeasured)} not measured (see its note)"
            for key in (
                "pg1_over_sqlite",
                "pg2_over_pg1",
                "pg2_over_sqlite",
                "pg2_target_needs_cores",
            )
            if unmeasured
        },
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
