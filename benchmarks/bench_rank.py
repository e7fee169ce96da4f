"""Benchmark of sliced Gauss-Seidel ranking (issue 6) against in-RAM peers, side by side.

Generates a web-like graph (host-clustered ids, power-law in-degree, about 10 links per
page, 15 % dangling pages), then, in one run, measures for each solver the graph-building
time, the solve time and the sweeps needed to reach a proven ℓ₁ error bound of 1e-8 (the
importance by c/(1 − c)·‖Δ‖₁, the interest by :mod:`ranking.pagerank.inverse_bound`), the true error
against a reference solution (the same iterations in RAM continued to a bound of 1e-11),
and the peak anonymous resident set (RssAnon, sampled; memory-mapped file pages are the
disk's and are not counted):

* xyleme: the sliced graph built under ``--memory``, the direct vector alone, and the
  direct and inverse vectors together in one combined scan; Gauss-Seidel vs block-Jacobi
  inside the slices;
* scipy: what xyleme does, by power iteration over CSR matrices in RAM: the importance
  (``ranking.pagerank.PowerIterationPageRank``), then the interest by eq. 6–7 with the weights
  of its bound (``ranking.pagerank.PowerIterationInterest``), each to the same bound of 1e-8;
* igraph: PRPACK (up to 5M pages), networkx (at 100k pages only).

``--quick`` runs 300k pages with ``--memory 8MB`` in under a minute (``--pages 1000000
--memory 32MB`` is the 1M-page run of docs/ranking.md), ``--smoke`` 3,000 pages
at 1MB in a few seconds (igraph, a ``[bench]`` extra, is used when installed: its figures are
null otherwise); the default is 20M pages / 200M links at 256MB. ``--table1`` reproduces the
paper's Table 1 (time per sweep at 20M and 40M pages, two budgets, direct, inverse and
combined). The last printed line is JSON.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from benchmarks import rank_cluster_row as cluster_row
from ranking import BoundElseChange, L1Bound, MaxSweeps
from ranking.pagerank import (
    DirectPageRank,
    PowerIterationInterest,
    PowerIterationPageRank,
    SlicedGraph,
    anon_rss_bytes,
    importance_and_interest,
    parse_size,
)

MB = 1 << 20
TOL = 1e-8
MAX_SWEEPS = 2000
SCRIPT = Path(__file__).resolve()


def web_graph(
    n: int, links: float = 10.0, *, dangling: float = 0.15, seed: int = 0, block: int = 1 << 20
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """A web-like link graph as (src, dst) int32 chunks, one per block of source pages.

    Hosts of Pareto-distributed sizes own consecutive ids; a page has no link with
    probability ``dangling``, else a geometric number of links of mean ``links``; 75 % of
    links stay in the host, skewed to its first pages (home and index pages), the rest go to
    a global popularity ranking (u³ of a random permutation), giving power-law in-degrees.
    Duplicate links are dropped (exactly: a block holds all the links of its pages).
    """
    rng = np.random.default_rng(seed)
    sizes = np.minimum((rng.pareto(1.2, n // 20 + 10) + 1) * 8, 50_000).astype(np.int64)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), n) + 1]
    sizes[-1] -= sizes.sum() - n
    starts = np.cumsum(sizes) - sizes
    host = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    popular = rng.permutation(n).astype(np.int32)
    for first in range(0, n, block):
        pages = np.arange(first, min(first + block, n), dtype=np.int32)
        degree = np.where(
            rng.random(pages.size) < dangling, 0, rng.geometric(1 / links, pages.size)
        )
        src = np.repeat(pages, degree)
        u = rng.random(src.size)
        h = host[src]
        local = starts[h] + (sizes[h] * u**2).astype(np.int64)
        remote = popular[(n * u**3).astype(np.int64)]
        dst = np.where(rng.random(src.size) < 0.75, local, remote)
        keys = src.astype(np.int64) * n + dst
        keys.sort()
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        yield (keys // n).astype(np.int32), (keys % n).astype(np.int32)


class AnonPeak:
    """Samples RssAnon every 10 milliseconds in a thread: the peak over a ``with`` block."""

    def __init__(self, every: float = 0.01) -> None:
        self.every = every
        self.peak = 0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, anon_rss_bytes()[0])
            self._stop.wait(self.every)

    def __enter__(self) -> AnonPeak:
        self.peak = anon_rss_bytes()[0]
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, anon_rss_bytes()[0])


def _timed(function, *args, **kwargs):
    """(value, wall seconds, CPU seconds of this process): the machine may be shared."""
    start, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start, time.process_time() - cpu


def _edges(work: Path, mmap: bool) -> tuple[np.ndarray, np.ndarray]:
    """The generated links, memory-mapped or read into RAM."""
    read = (
        (lambda path: np.memmap(path, dtype=np.int32, mode="r"))
        if mmap
        else (lambda path: np.fromfile(path, dtype=np.int32))
    )
    return read(work / "src.i32"), read(work / "dst.i32")


def _is_xml(n: int) -> np.ndarray:
    return np.random.default_rng(1).random(n) < 0.2


# -- workers: each runs in its own process, so each peak anonymous RSS is its own ----------


def work_xyleme(work: Path, n: int, memory: str, jacobi: bool) -> dict:
    """Build the slices from the edge files (mapped), then solve direct, and both combined."""
    # compile the kernels first, for vectors on disk as the measured run's (a memory-mapped
    # out-degree vector is read-only, a signature of its own): numba is not the ranking
    rng = np.random.default_rng(2)
    edges = rng.integers(0, 2_000, (2, 20_000)).astype(np.int32)
    warm = SlicedGraph.from_arrays(edges[0], edges[1], work / "warm", memory="64K")
    importance_and_interest(warm, rng.random(2_000) < 0.2, tol=1e-12, strict=False)
    DirectPageRank(warm, in_slice="jacobi").run(MaxSweeps(1))
    is_xml = _is_xml(n)  # the caller's input (N bytes), made before measuring
    figures: dict = {"baseline_anon_mb": anon_rss_bytes()[0] / MB}
    with AnonPeak() as peak:
        src, dst = _edges(work, mmap=True)
        graph, figures["build_s"], figures["build_cpu_s"] = _timed(
            SlicedGraph.from_arrays, src, dst, work / "slices", memory=memory, num_pages=n
        )
        figures["slices"] = graph.n_slices
        figures["vectors_in_ram"] = graph.vectors_in_ram
        stop = L1Bound(TOL) | MaxSweeps(MAX_SWEEPS)
        direct, figures["direct_s"], figures["direct_cpu_s"] = _timed(
            DirectPageRank(graph).run, stop
        )
        figures["direct_sweeps"] = direct.sweeps
        np.save(work / "xyleme.npy", direct.values)
        if jacobi:
            blocked, figures["jacobi_s"], figures["jacobi_cpu_s"] = _timed(
                DirectPageRank(graph, in_slice="jacobi").run, stop
            )
            figures["jacobi_sweeps"] = blocked.sweeps
        (imp, inter), figures["both_s"], figures["both_cpu_s"] = _timed(
            importance_and_interest, graph, is_xml, tol=TOL, max_sweeps=MAX_SWEEPS
        )
        figures["inverse_sweeps"] = inter.sweeps
        figures["inverse_figure"] = f"{inter.figure_name} {inter.figure:.2e}"
        figures["inverse_bound"] = inter.figure if inter.figure_name == "l1_error_bound" else None
        np.save(work / "xyleme-inverse.npy", inter.values)
        figures["both_sweeps"] = max(imp.sweeps, inter.sweeps)
    figures["peak_anon_mb"] = peak.peak / MB
    return figures


def work_scipy(work: Path, n: int) -> dict:
    """What xyleme does, by CSR power iteration in RAM: the importance to the 1e-8 bound, then
    the interest (eq. 6–7 with the weights of its bound) to the 1e-8 bound; then each goes on
    to a bound of 1e-11 for the references."""
    warm = np.array([0, 1]), np.array([1, 0])
    PowerIterationInterest(*warm, np.array([1.0, 0.0])).run(MaxSweeps(2))  # compile first
    figures: dict = {"baseline_anon_mb": anon_rss_bytes()[0] / MB}
    with AnonPeak() as peak:
        src, dst = _edges(work, mmap=False)
        power, figures["build_s"], figures["build_cpu_s"] = _timed(
            PowerIterationPageRank, src, dst, n
        )
        result, figures["solve_s"], figures["solve_cpu_s"] = _timed(
            power.run, L1Bound(TOL) | MaxSweeps(MAX_SWEEPS)
        )
        figures["iterations"] = result.sweeps
        inverse, figures["inverse_build_s"], _ = _timed(
            PowerIterationInterest, src, dst, _is_xml(n), 0.85
        )
        del src, dst
        inverse_result, inverse_s, inverse_cpu_s = _timed(
            inverse.run, BoundElseChange(TOL) | MaxSweeps(10 * MAX_SWEEPS)
        )
        figures["inverse_iterations"] = inverse_result.sweeps
        figures["inverse_figure"] = f"{inverse_result.figure_name} {inverse_result.figure:.2e}"
        figures["both_s"] = figures["solve_s"] + inverse_s
        figures["both_cpu_s"] = figures["solve_cpu_s"] + inverse_cpu_s
    figures["peak_anon_mb"] = peak.peak / MB
    np.save(work / "scipy.npy", result.values)
    np.save(work / "scipy-inverse.npy", inverse_result.values)
    np.save(work / "reference-inverse.npy", inverse_result.values)
    while power.norm_delta() > 1e-11:
        power.step()
    np.save(work / "reference.npy", power.vector())
    # on to 1e-11, or to where rounding stops the bound falling (about 2e-10 at 200k pages)
    best, best_at = inverse.norm_delta(), inverse.sweeps
    while best > 1e-11 and inverse.sweeps < best_at + 100:
        inverse.step()
        if inverse.norm_delta() < best:
            best, best_at = inverse.norm_delta(), inverse.sweeps
            np.save(work / "reference-inverse.npy", inverse.vector())
    figures["inverse_reference_iterations"] = best_at
    figures["inverse_reference_bound"] = best
    return figures


def work_igraph(work: Path, n: int) -> dict:
    """igraph's PageRank (PRPACK) on a graph built from the edge arrays."""
    import igraph

    figures: dict = {"baseline_anon_mb": anon_rss_bytes()[0] / MB}
    with AnonPeak() as peak:
        src, dst = _edges(work, mmap=False)
        graph, figures["build_s"], figures["build_cpu_s"] = _timed(
            _igraph_graph, igraph, src, dst, n
        )
        del src, dst
        values, figures["solve_s"], figures["solve_cpu_s"] = _timed(
            graph.pagerank, damping=0.85, implementation="prpack"
        )
    figures["peak_anon_mb"] = peak.peak / MB
    np.save(work / "igraph.npy", np.asarray(values))
    return figures


def _igraph_graph(igraph, src: np.ndarray, dst: np.ndarray, n: int):
    graph = igraph.Graph(n=n, directed=True)
    graph.add_edges(np.column_stack([src, dst]))
    return graph


def work_networkx(work: Path, n: int) -> dict:
    """networkx's pagerank (scipy inside), tol chosen so its ℓ₁ error is about 1e-8."""
    import networkx

    figures: dict = {"baseline_anon_mb": anon_rss_bytes()[0] / MB}
    with AnonPeak() as peak:
        src, dst = _edges(work, mmap=False)
        start = time.perf_counter()
        graph = networkx.DiGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
        figures["build_s"] = time.perf_counter() - start
        # networkx stops when ‖Δ‖₁ < N·tol; its error is then below c/(1−c)·N·tol.
        ranks, figures["solve_s"], figures["solve_cpu_s"] = _timed(
            networkx.pagerank, graph, alpha=0.85, tol=TOL * 0.15 / 0.85 / n, max_iter=MAX_SWEEPS
        )
    figures["peak_anon_mb"] = peak.peak / MB
    np.save(work / "networkx.npy", np.array([ranks[i] for i in range(n)]))
    return figures


def work_table1(work: Path, n: int, memory: str) -> dict:
    """Time per sweep (mean of 3) for direct, inverse and combined, as the paper's Table 1."""
    from ranking.pagerank import InversePageRank, scan, xml_teleport

    src, dst = _edges(work, mmap=True)
    graph = SlicedGraph.from_arrays(src, dst, work / "slices", memory=memory, num_pages=n)
    direct = DirectPageRank(graph)
    inverse = InversePageRank(graph, xml_teleport(_is_xml(n)))
    figures: dict = {"slices": graph.n_slices}
    for name, members in (
        ("direct", [direct]),
        ("inverse", [inverse]),
        ("combined", [direct, inverse]),
    ):
        for ranking in members:
            ranking.init()
        _, seconds, _ = _timed(lambda members=members: [scan(graph, members) for _ in range(3)])
        figures[f"{name}_sweep_s"] = seconds / 3
    return figures


WORKERS = {
    "xyleme": lambda a, w: work_xyleme(w, a.pages, a.memory, a.jacobi),
    "scipy": lambda a, w: work_scipy(w, a.pages),
    "igraph": lambda a, w: work_igraph(w, a.pages),
    "networkx": lambda a, w: work_networkx(w, a.pages),
    "table1": lambda a, w: work_table1(w, a.pages, a.memory),
    "cluster": lambda a, w: cluster_row.work(w, a.pages, a.memory, cluster_row.xml(a, _is_xml)),
}


def in_process(name: str, args: argparse.Namespace, work: Path) -> dict:
    """Run one worker in a fresh interpreter and return its figures."""
    command = [
        sys.executable,
        "-P",  # the safe path: benchmarks/ does not shadow the packages
        str(SCRIPT),
        *("--worker", name, "--work", str(work), "--pages", str(args.pages)),
        *("--memory", args.memory),
    ]
    command += (["--jacobi"] if args.jacobi else []) + cluster_row.flags(args)
    output = subprocess.run(command, capture_output=True, text=True, check=False)
    if output.returncode != 0:
        raise SystemExit(f"the {name} worker failed:\n{output.stderr}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def _installed(module: str) -> bool:
    """Whether an optional peer (a ``[bench]`` extra) can be imported here."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def l1_error(work: Path, name: str, reference: str = "reference") -> float | None:
    path = work / f"{name}.npy"
    if not path.exists():
        return None
    return float(np.abs(np.load(path) - np.load(work / f"{reference}.npy")).sum())


def generate(work: Path, pages: int) -> tuple[int, float]:
    """Write the web-like graph to work/src.i32 and work/dst.i32; (links, seconds). A graph
    already there with its link count (``links.txt``, a ``--graph-cache``) is reused."""
    if (work / "links.txt").exists():
        return int((work / "links.txt").read_text()), 0.0
    start, links = time.perf_counter(), 0
    with open(work / "src.i32", "wb") as src_file, open(work / "dst.i32", "wb") as dst_file:
        for src, dst in web_graph(pages):
            src.tofile(src_file)
            dst.tofile(dst_file)
            links += src.size
    (work / "links.txt").write_text(str(links))
    return links, time.perf_counter() - start


def table1(args: argparse.Namespace, base: Path) -> None:
    """The paper's Table 1 on this machine: seconds per sweep, 20M and 40M pages."""
    print("Table 1 (seconds per sweep; the paper: 178/233 s direct, 149/242 s inverse at 20M)")
    for pages in (20_000_000, 40_000_000):
        work = base / f"t{pages}"
        work.mkdir()
        links, _ = generate(work, pages)
        for memory in ("256MB", "128MB"):
            args.pages, args.memory = pages, memory
            figures = in_process("table1", args, work)
            print(
                f"  {pages / 1e6:.0f}M pages {links / 1e6:.0f}M links {memory:>6} "
                f"S={figures['slices']:<3} direct {figures['direct_sweep_s']:.2f}  "
                f"inverse {figures['inverse_sweep_s']:.2f}  "
                f"combined {figures['combined_sweep_s']:.2f}"
            )
        shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300k pages, --memory 8MB, < 60 s")
    parser.add_argument("--smoke", action="store_true", help="3,000 pages, 1MB: a few seconds")
    parser.add_argument("--pages", type=int, default=20_000_000)
    parser.add_argument("--memory", default=None, help="xyleme's budget (default 256MB)")
    parser.add_argument(
        "--jacobi", action="store_true", help="also solve with block-Jacobi inside the slices"
    )
    parser.add_argument("--table1", action="store_true", help="reproduce the paper's Table 1")
    cluster_row.add_options(parser)
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args, args.work)))
        return
    if args.quick:
        args.pages, args.memory = 300_000, args.memory or "8MB"
    if args.smoke:
        args.pages, args.memory = 3_000, args.memory or "1MB"
    args.memory = args.memory or "256MB"
    with tempfile.TemporaryDirectory(prefix="bench_rank-") as tmp:
        base = Path(tmp)
        if args.table1:
            table1(args, base)
            return
        if args.graph_cache is not None:
            base = args.graph_cache / str(args.pages)
            base.mkdir(parents=True, exist_ok=True)
        links, generate_s = generate(base, args.pages)
        print(f"web-like graph: {args.pages:,} pages, {links:,} links ({generate_s:.1f} s)")
        if args.cluster_only:  # the row alone; its keys are the last line
            figures = in_process("cluster", args, base) if _installed("distributed") else None
            return print(json.dumps({"pages": args.pages, **cluster_row.report(figures, args)}))
        results = {"xyleme": in_process("xyleme", args, base)}
        results["scipy"] = in_process("scipy", args, base)
        if args.pages <= 5_000_000 and _installed("igraph"):
            results["igraph"] = in_process("igraph", args, base)
        if 1_000 < args.pages <= 100_000 and not args.smoke and _installed("networkx"):
            results["networkx"] = in_process("networkx", args, base)
        if _installed("distributed"):
            results["cluster"] = in_process("cluster", args, base)
        report(args, links, results, base)


def report(args: argparse.Namespace, links: int, results: dict, work: Path) -> None:
    x, power = results["xyleme"], results["scipy"]
    print(
        f"{'solver':<22}{'build s':>9}{'solve s':>9}{'solve CPU s':>13}{'sweeps':>8}"
        f"{'peak anon MB':>14}{'l1 error':>10}"
    )
    # (row, figures, key, sweeps, (vector, reference) whose ℓ₁ distance is the error)
    rows = [("xyleme direct (GS)", x, "direct", x["direct_sweeps"], ("xyleme", "reference"))]
    if "jacobi_s" in x:
        rows.append(("xyleme block-Jacobi", x, "jacobi", x["jacobi_sweeps"], None))
    both_error = ("xyleme-inverse", "reference-inverse")  # the error of the inverse vector
    rows.append(("xyleme direct+inverse", x, "both", x["both_sweeps"], both_error))
    rows.append(("scipy CSR power", power, "solve", power["iterations"], ("scipy", "reference")))
    scipy_both = ("scipy-inverse", "reference-inverse")
    rows.append(("scipy direct+inverse", power, "both", power["inverse_iterations"], scipy_both))
    rows += [
        (name, results[name], "solve", None, (name, "reference"))
        for name in ("igraph", "networkx")
        if name in results
    ]
    for name, figures, key, sweeps, compared in rows:
        error = None if compared is None else l1_error(work, *compared)
        print(
            f"{name:<22}{figures['build_s']:>9.2f}{figures[key + '_s']:>9.2f}"
            f"{figures[key + '_cpu_s']:>13.2f}{'' if sweeps is None else sweeps:>8}"
            f"{figures['peak_anon_mb']:>14.0f}{'' if error is None else f'{error:.1e}':>10}"
        )
    print(
        f"xyleme: S={x['slices']} slices, vectors {'in RAM' if x['vectors_in_ram'] else 'mapped'}, "
        f"inverse {x['inverse_sweeps']} sweeps to {x['inverse_figure']} (its error in the "
        f"direct+inverse row, against eq. 6–7 run {power['inverse_reference_iterations']} "
        f"times to a bound of {power['inverse_reference_bound']:.1e}); "
        f"baseline anon {x['baseline_anon_mb']:.0f} MB"
    )
    print(f"scipy: inverse {power['inverse_iterations']} iterations to {power['inverse_figure']}")
    print(
        f"ratios: direct/scipy time {x['direct_s'] / power['solve_s']:.2f} "
        f"(CPU {x['direct_cpu_s'] / power['solve_cpu_s']:.2f}), "
        f"both/scipy both {x['both_s'] / power['both_s']:.2f} "
        f"(CPU {x['both_cpu_s'] / power['both_cpu_s']:.2f}), "
        f"power/GS sweeps {power['iterations'] / x['direct_sweeps']:.2f}"
    )
    summary = {
        "pages": args.pages,
        "links": links,
        "xyleme_direct_s": round(x["direct_s"], 3),
        "xyleme_both_s": round(x["both_s"], 3),
        "xyleme_build_s": round(x["build_s"], 3),
        "scipy_s": round(power["solve_s"], 3),
        "scipy_both_s": round(power["both_s"], 3),
        "xyleme_direct_cpu_s": round(x["direct_cpu_s"], 3),
        "xyleme_both_cpu_s": round(x["both_cpu_s"], 3),
        "scipy_cpu_s": round(power["solve_cpu_s"], 3),
        "scipy_both_cpu_s": round(power["both_cpu_s"], 3),
        "scipy_build_s": round(power["build_s"], 3),
        "igraph_s": round(results["igraph"]["solve_s"], 3) if "igraph" in results else None,
        "xyleme_sweeps": x["direct_sweeps"],
        "xyleme_inverse_sweeps": x["inverse_sweeps"],
        "power_iterations": power["iterations"],
        "power_inverse_iterations": power["inverse_iterations"],
        "xyleme_peak_anon_mb": round(x["peak_anon_mb"], 1),
        "budget_mb": parse_size(args.memory) / MB,
        "l1_error": l1_error(work, "xyleme"),
        "inverse_l1_error": l1_error(work, "xyleme-inverse", "reference-inverse"),
        "inverse_l1_bound": x["inverse_bound"],
        "scipy_inverse_l1_error": l1_error(work, "scipy-inverse", "reference-inverse"),
        **cluster_row.report(results.get("cluster"), args),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
