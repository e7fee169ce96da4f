"""The cluster row of ``bench_rank.py`` (issue 21): the same graph on a LocalCluster of 2.

Run in its own process by ``bench_rank.py --worker cluster``: the importance and the
interest in one process (the references of this row, each timed alone), then both on a
``LocalCluster`` of two worker processes, synchronous and chaotic; for each, the wall time,
the CPU time of the worker processes, the sweeps, the ℓ₁ distance to the single-process
vector, the bytes the workers sent each other per sweep, and where a sweep's time went
(the workers sweeping their blocks, wall and CPU, absorbing their peers' values, sending
theirs, waiting for their peers' (synchronous); the rest is the coordinator's calls, the
Jacobi checks' barriers and the workers' idle time). The graph is the xyleme row's slices
when they are at least two, else the same links cut into two slices (kept beside the links,
so a cached graph is cut once).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil

from ranking import BoundElseChange, L1Bound, MaxSweeps
from ranking.pagerank import DirectPageRank, InversePageRank, SlicedGraph, xml_mask

TOL = 1e-8
MAX_SWEEPS = 2000
WORKERS = 2
MODES = ("sync", "chaotic")
KINDS = ("importance", "interest")


def add_options(parser: argparse.ArgumentParser) -> None:
    """``bench_rank.py``'s options for this row: run it alone (at 20M pages, say), keep
    the graph between runs, leave the interest out."""
    parser.add_argument(
        "--cluster-only",
        action="store_true",
        help="only the cluster row (one process against 2 Dask workers), e.g. at 20M pages",
    )
    parser.add_argument(
        "--no-cluster-interest", action="store_true", help="the cluster row without the interest"
    )
    parser.add_argument(
        "--graph-cache",
        type=Path,
        help="keep the generated graph (and its 2 slices) in DIR/<pages>, reused next time",
    )


def flags(args: argparse.Namespace) -> list[str]:
    """The options of this row that its worker process needs."""
    return ["--no-cluster-interest"] if args.no_cluster_interest else []


def xml(args: argparse.Namespace, is_xml: Callable[[int], np.ndarray]) -> np.ndarray | None:
    """The XML pages of the interest (``is_xml(pages)``), None without it."""
    return None if args.no_cluster_interest else is_xml(args.pages)


def _cluster_graph(work: Path, n: int, memory: str) -> SlicedGraph:
    if (work / "slices" / "manifest.json").exists():
        graph = SlicedGraph.open(work / "slices")
        if graph.n_slices >= WORKERS:
            return graph
    if (work / "cluster-slices" / "manifest.json").exists():
        return SlicedGraph.open(work / "cluster-slices")
    src = np.memmap(work / "src.i32", dtype=np.int32, mode="r")
    dst = np.memmap(work / "dst.i32", dtype=np.int32, mode="r")
    return SlicedGraph.from_arrays(
        src, dst, work / "cluster-slices", memory=memory, num_pages=n, slices=WORKERS
    )


def _workers_cpu(pids: dict[str, int]) -> float:
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids.values())


def _single(graph: SlicedGraph, is_xml: np.ndarray | None) -> dict:
    """Each ranking alone in this process (the extrapolated Gauss-Seidel sweeps)."""
    DirectPageRank(graph).run(MaxSweeps(2))  # compile the kernels outside the measure
    runs = {"importance": lambda: DirectPageRank(graph).run(L1Bound(TOL) | MaxSweeps(MAX_SWEEPS))}
    if is_xml is not None:
        inverse = InversePageRank(graph, xml_mask(is_xml))
        runs["interest"] = lambda: inverse.run(BoundElseChange(TOL) | MaxSweeps(MAX_SWEEPS))
    figures: dict = {}
    for kind, run in runs.items():
        start, cpu = time.perf_counter(), time.process_time()
        result = run()
        figures[kind] = {
            "values": np.array(result.values),
            "s": time.perf_counter() - start,
            "cpu_s": time.process_time() - cpu,
            "sweeps": result.sweeps,
        }
    return figures


def work(work: Path, n: int, memory: str, is_xml: np.ndarray | None) -> dict:
    """One process, then 2 workers synchronous and chaotic; the interest too with ``is_xml``."""
    from ranking.cluster import cluster_rank, dask_client

    graph = _cluster_graph(work, n, memory)
    single = _single(graph, is_xml)
    figures: dict = {"slices": graph.n_slices, "pages": n, "edges": graph.num_edges}
    for kind, row in single.items():
        figures[f"single_{kind}"] = {k: v for k, v in row.items() if k != "values"}
    budget = 16 << 30
    with dask_client(workers=WORKERS, memory_per_worker=budget, dashboard=False) as client:
        pids = client.run(os.getpid)
        url = str(graph.directory)
        cluster_rank(client, url, None, max_sweeps=2, strict=False, memory_per_worker=budget)
        for mode in MODES:
            start, cpu = time.perf_counter(), _workers_cpu(pids)
            results = cluster_rank(
                client,
                url,
                is_xml,
                mode=mode,
                tol=TOL,
                max_sweeps=MAX_SWEEPS,
                memory_per_worker=budget,
            )
            total, cpu = time.perf_counter() - start, _workers_cpu(pids) - cpu
            for kind, result in zip(KINDS, results, strict=True):
                if result is not None:
                    figures[f"{mode}_{kind}"] = _row(result, single[kind]["values"])
            spent = sum(figures[f"{mode}_{k}"]["s"] for k in single)
            figures[f"{mode}_setup_s"] = total - spent
            figures[f"{mode}_workers_cpu_s"] = cpu
    return figures


def _row(result, reference: np.ndarray) -> dict:
    seconds = result.details["seconds"]
    return {
        "s": seconds["wall"],
        "sweeps": result.sweeps,
        "local_sweeps": result.details["local_sweeps"],
        "l1_error": float(np.abs(result.values - reference).sum()),
        "bytes_per_sweep": result.details["bytes_per_sweep"],
        "seconds": seconds,
    }


def report(figures: dict | None, args: argparse.Namespace) -> dict:
    """Print the cluster row; return its keys for the last JSON line (None without Dask)."""
    n = args.pages
    keys = ("cluster_sync_s", "cluster_chaotic_s", "cluster_speedup", "cluster_l1_error")
    keys += ("cluster_chaotic_l1_error", "cluster_bytes_per_sweep", "cluster_vector_bytes")
    keys += ("cluster_chaotic_speedup", "cluster_interest_sync_l1_error")
    keys += ("cluster_interest_chaotic_l1_error", "cluster_interest_speedup")
    keys += ("cluster_interest_chaotic_speedup",)
    keys += ("cluster_ranking_speedup", "cluster_ranking_chaotic_speedup")
    if figures is None:
        print("cluster row: skipped (the [cluster] extra, dask[distributed], is not installed)")
        return dict.fromkeys(keys)
    print(
        f"cluster row ({WORKERS} workers, S={figures['slices']}, {n:,} pages, "
        f"{figures['edges']:,} links, vector {n * 8:,} bytes)"
    )
    print(
        "  run                    wall s  sweeps  local   l1 vs 1 proc  bytes/sweep  "
        "| ms a sweep: worker sweep (CPU)  absorb  send  wait  rest"
    )
    speedups = {}
    for kind in KINDS:
        one = figures.get(f"single_{kind}")
        if one is None:
            continue
        cpu = f"(CPU {one['cpu_s']:.2f} s)"
        print(f"  {kind:<11} 1 process {one['s']:8.2f} {one['sweeps']:6}   {cpu}")
        for mode in MODES:
            row = figures[f"{mode}_{kind}"]
            speedups[(mode, kind)] = one["s"] / row["s"]
            print(f"  {kind:<11} {mode:<9}" + _line(row))
    interest = ("sync", "interest") in speedups
    jobs = {mode: _job_speedup(figures, mode) if interest else None for mode in MODES}
    for mode in MODES:
        both = f", both rankings {jobs[mode]:.2f}x" if interest else ""
        print(
            f"  {mode}: setup (actors, blocks read) {figures[f'{mode}_setup_s']:.2f} s, "
            f"workers' CPU {figures[f'{mode}_workers_cpu_s']:.2f} s{both}"
        )
    values = (
        round(figures["sync_importance"]["s"], 3),
        round(figures["chaotic_importance"]["s"], 3),
        round(speedups[("sync", "importance")], 3),
        figures["sync_importance"]["l1_error"],
        figures["chaotic_importance"]["l1_error"],
        round(figures["sync_importance"]["bytes_per_sweep"]),
        n * 8,
        round(speedups[("chaotic", "importance")], 3),
        figures["sync_interest"]["l1_error"] if interest else None,
        figures["chaotic_interest"]["l1_error"] if interest else None,
        round(speedups[("sync", "interest")], 3) if interest else None,
        round(speedups[("chaotic", "interest")], 3) if interest else None,
        jobs["sync"],
        jobs["chaotic"],
    )
    return dict(zip(keys, values, strict=True))


def _job_speedup(figures: dict, mode: str) -> float:
    """One process's time for both rankings over the two workers' (``mode``): the job of
    ``xyleme rank compute`` (the importance, then the interest)."""
    one = sum(figures[f"single_{kind}"]["s"] for kind in KINDS)
    return round(one / sum(figures[f"{mode}_{kind}"]["s"] for kind in KINDS), 3)


def _line(row: dict) -> str:
    """A cluster run's figures, and its time per sweep split by where it went."""
    sweeps = max(row["sweeps"], 1)
    seconds = {k: 1000 * v / sweeps for k, v in row["seconds"].items()}
    spent = ("sweep", "absorb", "send", "wait")
    rest = seconds["wall"] - sum(seconds[k] for k in spent)
    return (
        f"{row['s']:8.2f} {row['sweeps']:6} {row['local_sweeps']:6} {row['l1_error']:12.1e} "
        f"{row['bytes_per_sweep']:12,.0f}  | {seconds['wall']:7.1f}: {seconds['sweep']:7.1f} "
        f"({seconds['sweep_cpu']:.1f}) {seconds['absorb']:7.1f} {seconds['send']:5.1f} "
        f"{seconds['wait']:5.1f} {rest:5.1f}"
    )
