"""OPIC across crawl workers (OPIC §4.1, issue 20): the total-cash error after a parted run.

``bench_scaleout.py`` calls :func:`report_cash_drift`: N parts of OPIC (one store connection
each, as N workers have) credit reads of the simulated web's pages (a sweep over every page
in a random order, again and again) and flush every ``flush_every`` reads each: their
outboxes become transfer rows, the rows addressed to them are taken, their checkpoints
commit (every :data:`SCORES_EVERY` flushes their score columns too). Halfway through, one
part is killed (dropped without a flush, its reads since its last flush lost) and restored
from the store. After the run, ``cash_drift`` is
``|Σ checkpointed cash + Σ cash in flight − 1|``: the issue's target is ≤ 1e-9.

    python benchmarks/scaleout_cash.py --quick    # standalone, PostgreSQL
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

import numpy as np

from benchmarks.pgcluster import start_cluster
from metadata import Metadata
from ranking.opic import OPICSettings
from xyleme.jobs import PartOPIC, cash_drift
from xyleme.simweb import SimWeb, SimWebSettings

SIZES = {"smoke": (300, 6, 3, 100), "quick": (5_000, 40, 4, 500), "full": (50_000, 200, 6, 2_000)}
"""pages, hosts, sweeps and reads between flushes of each mode"""
SCORES_EVERY = 10
"""flushes between two writes of the parts' score columns (the costly part of a flush)"""


def measure_cash_drift(
    store_url: str,
    *,
    parts: int = 2,
    pages: int = 5_000,
    hosts: int = 40,
    sweeps: int = 4,
    flush_every: int = 500,
    seed: int = 1,
) -> dict[str, float | int]:
    """Run ``parts`` parts of OPIC over a new store at ``store_url`` (as the module says) and
    return what was measured: the drift, the reads, flushes and transfers, the time."""
    web = SimWeb(SimWebSettings(hosts=hosts, pages=pages, seed=seed))
    offsets, targets = web.structure.link_offsets, web.structure.link_targets
    with Metadata.create(store_url) as md:
        ids = np.array(md.ids_for([web.url(page) for page in range(pages)]), dtype=np.int64)
    settings = OPICSettings()
    stores = [Metadata.open(store_url) for _ in range(parts)]
    began = time.perf_counter()
    opics = [PartOPIC.restore(md, part, parts, settings) for part, md in enumerate(stores)]
    owner = np.array([next(p for p in opics if p.opic.owns([i])[0]).part for i in ids])
    order = np.concatenate(
        [np.random.default_rng(seed + k).permutation(pages) for k in range(sweeps)]
    )
    flushes = rows = lost = 0
    for step, page in enumerate(order.tolist(), 1):
        opics[owner[page]].on_fetch(int(ids[page]), ids[targets[offsets[page] : offsets[page + 1]]])
        if step == len(order) // 2:  # kill -9 of the last part: its unflushed reads are lost
            victim = parts - 1
            lost = int(opics[victim].opic.reads().sum())
            stores[victim].close()
            stores[victim] = Metadata.open(store_url)
            opics[victim] = PartOPIC.restore(stores[victim], victim, parts, settings)
            lost -= int(opics[victim].opic.reads().sum())
        if step % flush_every == 0 or step == len(order):
            scores = (step // flush_every) % SCORES_EVERY == 0 or step == len(order)
            for opic, md in zip(opics, stores, strict=True):
                rows += opic.flush(md, scores=scores).sent
                flushes += 1
    seconds = time.perf_counter() - began
    drift = cash_drift(stores[0])
    for md in stores:
        md.close()
    return {
        "cash_drift": drift,
        "parts": parts,
        "pages": pages,
        "links": int(targets.size),
        "reads": int(order.size),
        "reads_lost_in_kill": lost,
        "flushes": flushes,
        "transfer_rows": rows,
        "seconds": round(seconds, 2),
        "reads_per_s": round(order.size / seconds),
    }


def report_cash_drift(mode: str = "quick", parts: int = 2) -> float:
    """Measure on a throwaway PostgreSQL cluster (``mode``: smoke, quick or full), print
    what was measured, and return ``cash_drift``."""
    pages, hosts, sweeps, flush_every = SIZES[mode]
    cluster = start_cluster(durable=True)
    try:
        cluster.admin("CREATE DATABASE cash")
        result = measure_cash_drift(
            cluster.url("cash"),
            parts=parts,
            pages=pages,
            hosts=hosts,
            sweeps=sweeps,
            flush_every=flush_every,
        )
    finally:
        cluster.stop()
    print(
        f"OPIC across {result['parts']} parts (PostgreSQL): {result['reads']:,} reads of "
        f"{result['pages']:,} pages ({result['links']:,} links), {result['flushes']} flushes, "
        f"{result['transfer_rows']:,} transfer rows, one part killed and restored "
        f"({result['reads_lost_in_kill']} unflushed reads lost); {result['reads_per_s']:,} "
        f"reads/s credited and flushed (scores written every {SCORES_EVERY} flushes); "
        f"cash drift {result['cash_drift']:.2e}"
    )
    return float(result["cash_drift"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="5,000 pages (< 60 s)")
    mode.add_argument("--smoke", action="store_true", help="300 pages (a few seconds)")
    parser.add_argument("--parts", type=int, default=2, help="parts of OPIC (workers)")
    args = parser.parse_args()
    drift = report_cash_drift(
        "smoke" if args.smoke else "quick" if args.quick else "full", args.parts
    )
    print(json.dumps({"cash_drift": drift}))


if __name__ == "__main__":
    main()
