"""The cluster row of ``bench_rank.py`` (issue 21): the same graph on a LocalCluster of 2.

Run in its own process by ``bench_rank.py --worker cluster``: the importance in one process
(sliced Gauss-Seidel, the reference of this row), then on a ``LocalCluster`` of two worker
processes, synchronous and chaotic, and the interest synchronous; for each, the wall time,
the CPU time of the worker processes, the sweeps, the ℓ₁ distance to the single-process
vector and the bytes the workers sent each other per sweep. The graph is the xyleme row's
slices when they are at least two, else the same links cut into two slices.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import psutil

from ranking import L1Bound, MaxSweeps
from ranking.pagerank import DirectPageRank, SlicedGraph, importance_and_interest

TOL = 1e-8
MAX_SWEEPS = 2000
WORKERS = 2


def _cluster_graph(work: Path, n: int, memory: str) -> SlicedGraph:
    graph = SlicedGraph.open(work / "slices")
    if graph.n_slices >= WORKERS:
        return graph
    src = np.memmap(work / "src.i32", dtype=np.int32, mode="r")
    dst = np.memmap(work / "dst.i32", dtype=np.int32, mode="r")
    return SlicedGraph.from_arrays(
        src, dst, work / "cluster-slices", memory=memory, num_pages=n, slices=WORKERS
    )


def _workers_cpu(pids: dict[str, int]) -> float:
    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids.values())


def work_cluster(work: Path, n: int, memory: str, is_xml: np.ndarray) -> dict:
    """Single process, then 2 workers sync and chaotic (importance), sync (interest)."""
    from ranking.cluster import cluster_rank, dask_client

    graph = _cluster_graph(work, n, memory)
    start, cpu = time.perf_counter(), time.process_time()
    single = DirectPageRank(graph).run(L1Bound(TOL) | MaxSweeps(MAX_SWEEPS))
    figures: dict = {
        "slices": graph.n_slices,
        "single_s": time.perf_counter() - start,
        "single_cpu_s": time.process_time() - cpu,
        "single_sweeps": single.sweeps,
    }
    inverse = importance_and_interest(graph, is_xml, tol=TOL, max_sweeps=MAX_SWEEPS)[1]
    with dask_client(workers=WORKERS, memory_per_worker="2GB", dashboard=False) as client:
        pids = client.run(__import__("os").getpid)
        cluster_rank(client, str(graph.directory), None, max_sweeps=2, strict=False)  # warm
        for mode, xml in (("sync", None), ("chaotic", None), ("sync_inverse", is_xml)):
            start, cpu = time.perf_counter(), _workers_cpu(pids)
            importance, interest = cluster_rank(
                client,
                str(graph.directory),
                xml,
                mode=mode.removesuffix("_inverse"),
                tol=TOL,
                max_sweeps=MAX_SWEEPS,
                memory_per_worker=2 << 30,
            )
            result, reference = (importance, single) if xml is None else (interest, inverse)
            figures[f"{mode}_s"] = time.perf_counter() - start
            figures[f"{mode}_workers_cpu_s"] = _workers_cpu(pids) - cpu
            figures[f"{mode}_sweeps"] = result.sweeps
            figures[f"{mode}_l1_error"] = float(np.abs(result.values - reference.values).sum())
            figures[f"{mode}_bytes_per_sweep"] = result.details["bytes_per_sweep"]
    return figures


def report_cluster(figures: dict | None, n: int) -> dict:
    """Print the cluster row; return its keys for the last JSON line (None without Dask)."""
    keys = ("cluster_sync_s", "cluster_chaotic_s", "cluster_speedup", "cluster_l1_error")
    keys += ("cluster_chaotic_l1_error", "cluster_bytes_per_sweep", "cluster_vector_bytes")
    if figures is None:
        print("cluster row: skipped (the [cluster] extra, dask[distributed], is not installed)")
        return dict.fromkeys(keys)
    print(
        f"cluster row ({WORKERS} workers, S={figures['slices']}; wall s / workers' CPU s / "
        f"sweeps / l1 vs one process / bytes per sweep, vector {n * 8:,} bytes):"
    )
    print(
        f"  one process      {figures['single_s']:8.2f} {figures['single_cpu_s']:8.2f} "
        f"{figures['single_sweeps']:6}"
    )
    for mode in ("sync", "chaotic", "sync_inverse"):
        print(
            f"  {mode:<16} {figures[f'{mode}_s']:8.2f} {figures[f'{mode}_workers_cpu_s']:8.2f} "
            f"{figures[f'{mode}_sweeps']:6} {figures[f'{mode}_l1_error']:9.1e} "
            f"{figures[f'{mode}_bytes_per_sweep']:12,.0f}"
        )
    values = (
        round(figures["sync_s"], 3),
        round(figures["chaotic_s"], 3),
        round(figures["single_s"] / figures["sync_s"], 3),
        figures["sync_l1_error"],
        figures["chaotic_l1_error"],
        round(figures["sync_bytes_per_sweep"]),
        n * 8,
    )
    return dict(zip(keys, values, strict=True))
