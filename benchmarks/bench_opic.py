"""Reproduce §4.2 of the OPIC paper on a synthetic power-law graph.

Part 1 (Figures 2 and 3): static OPIC read in Random, Cycle and Greedy order; the mean
relative error ``100·Σ_j |X[j] − Imp[j]| / Imp[j] / |P|`` against the off-line fixpoint after
N, 2N, … 10N reads, on all pages and on the 10 % most important. The peer, as in the paper, is
the off-line power iteration counted as N reads per iteration.

Part 2 (Figures 4–6): Adaptive OPIC with Greedy on a graph whose in-degrees change (a given
percentage of pages per N reads get their in-degree doubled or halved), the error of each
window policy at the end of 10N reads against the fixpoint of the graph as it is then, and
the measures each policy stores per page. Windows are given in "months", one month being the
G-time of N Greedy reads (the paper's crawl speed of N pages per month).

    python benchmarks/bench_opic.py            # N = 100,000 (about ten minutes)
    python benchmarks/bench_opic.py --quick    # N = 20,000, under a minute
    python benchmarks/bench_opic.py --smoke    # N = 1,000, no plot, a few seconds

Tables go to stdout, PNG plots to benchmarks/out/, and the last line is a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from benchmarks.plots import pyplot
from ranking.opic import (
    OPIC,
    Cycle,
    Greedy,
    HistoryWindow,
    Interpolation,
    PageSelector,
    RandomSelection,
    fixed_window,
    variable_window,
)

DAMPING = 0.85
ROUNDS = 10
OUT = Path(__file__).parent / "out"


class Graph:
    """A directed graph as sorted, de-duplicated edges, with a CSR view by source."""

    def __init__(self, n: int, src: np.ndarray, dst: np.ndarray) -> None:
        keys = np.unique(src.astype(np.int64) * n + dst)
        self.n = n
        self.src, self.dst = keys // n, keys % n
        self.indptr = np.searchsorted(self.src, np.arange(n + 1))

    def children(self, page: int) -> np.ndarray:
        return self.dst[self.indptr[page] : self.indptr[page + 1]]

    def in_degrees(self) -> np.ndarray:
        return np.bincount(self.dst, minlength=self.n)


def power_law_graph(n: int, rng: np.random.Generator, exponent: float = 2.1) -> Graph:
    """In-degrees drawn with P(I = k) ∝ k^−exponent (§4.2), sources uniform at random."""
    in_degree = np.minimum(rng.zipf(exponent, n), n // 20)
    dst = np.repeat(np.arange(n), in_degree)
    src = rng.integers(0, n, dst.size)
    return Graph(n, src, dst)


def pagerank(graph: Graph, tolerance: float = 1e-13) -> np.ndarray:
    """The off-line fixpoint: PageRank(c), uniform teleport and dangling pages."""
    return list(power_iterations(graph, tolerance))[-1]


def power_iterations(graph: Graph, tolerance: float = 1e-13, limit: int = 1000):
    """Yield the power-iteration vectors from uniform until the ℓ1 change is < tolerance."""
    n = graph.n
    out = np.bincount(graph.src, minlength=n).astype(float)
    share = np.divide(DAMPING, out, out=np.zeros(n), where=out > 0)[graph.src]
    matrix = sp.csr_matrix((share, (graph.dst, graph.src)), shape=(n, n))
    to_virtual = np.where(out > 0, 1.0 - DAMPING, 1.0)
    x = np.full(n, 1.0 / n)
    for _ in range(limit):
        new = matrix @ x + (to_virtual @ x) / n
        yield new
        if np.abs(new - x).sum() < tolerance:
            return
        x = new


def relative_error(estimate: np.ndarray, exact: np.ndarray, pages=slice(None)) -> float:
    """``100·Σ_j |X[j] − Imp[j]| / Imp[j] / |P|`` over the pages P (§4.2), in percent."""
    return 100.0 * float((np.abs(estimate[pages] - exact[pages]) / exact[pages]).mean())


def errors(estimate: np.ndarray, exact: np.ndarray, top: np.ndarray) -> tuple[float, float]:
    """Mean relative error in percent on all pages and on the ``top`` pages."""
    return relative_error(estimate, exact), relative_error(estimate, exact, top)


def convergence(graph: Graph, exact: np.ndarray, make: Callable[[OPIC], PageSelector]) -> dict:
    """Static OPIC read in one strategy's order; errors after each N reads."""
    n = graph.n
    top = np.argsort(exact)[-n // 10 :]
    opic = OPIC(pages=n, damping=DAMPING)
    selector = make(opic)
    all_pages, top_pages, g_per_round = [], [], []
    for _ in range(ROUNDS):
        g_start = opic.g
        for _ in range(n):
            page = selector.next_page()
            opic.on_fetch(page, graph.children(page))
        error_all, error_top = errors(opic.estimates(), exact, top)
        all_pages.append(error_all)
        top_pages.append(error_top)
        g_per_round.append(opic.g - g_start)
    return {"all": all_pages, "top": top_pages, "g_per_round": g_per_round}


def offline_convergence(graph: Graph, exact: np.ndarray) -> dict:
    """The off-line peer: one power iteration costs N reads (as in Figures 2–3)."""
    top = np.argsort(exact)[-graph.n // 10 :]
    vectors = power_iterations(graph, tolerance=0.0, limit=ROUNDS)
    measured = [errors(x, exact, top) for x in vectors]
    return {"all": [m[0] for m in measured], "top": [m[1] for m in measured]}


def change_in_degrees(graph: Graph, pages: int, rng: np.random.Generator) -> Graph:
    """Double or halve (coin flip) the in-degree of ``pages`` random pages (§4.2)."""
    chosen = rng.choice(graph.n, pages, replace=False)
    doubled = chosen[rng.random(pages) < 0.5]
    halved = np.setdiff1d(chosen, doubled)
    keep = ~(np.isin(graph.dst, halved) & (rng.random(graph.dst.size) < 0.5))
    extra = np.maximum(graph.in_degrees()[doubled], 1)
    new_dst = np.repeat(doubled, extra)
    new_src = rng.integers(0, graph.n, new_dst.size)
    return Graph(
        graph.n,
        np.concatenate([graph.src[keep], new_src]),
        np.concatenate([graph.dst[keep], new_dst]),
    )


def window_policies(month: float) -> dict[str, Callable[[], HistoryWindow]]:
    """The policies of Figures 4–6; spans in G-time, one month = N Greedy reads."""
    return {
        "variable 4": lambda: variable_window(4, prior_span=month),
        "variable 8": lambda: variable_window(8, prior_span=month),
        "variable 16": lambda: variable_window(16, prior_span=month),
        "fixed 8 months": lambda: fixed_window(8 * month, max_measures=64),
        "improved fixed 4 months": lambda: fixed_window(4 * month, min_measures=3),
        "interpolation 4 months": lambda: Interpolation(4 * month),
    }


def changing_graph(
    n: int, rate: float, month: float, seed: int, batches_per_round: int = 10
) -> dict[str, tuple[float, float]]:
    """Greedy Adaptive OPIC with every window policy while ``rate`` % of pages change per
    N reads; per policy the mean error over the last three rounds and measures per page."""
    rng = np.random.default_rng(seed)
    graph = power_law_graph(n, rng)
    policies = {name: make() for name, make in window_policies(month).items()}
    windows = list(policies.values())
    opic = OPIC(pages=n, damping=DAMPING, window=windows[0], extra_windows=windows[1:])
    greedy = Greedy(opic)
    per_batch = round(rate / 100.0 * n / batches_per_round)
    batch = n // batches_per_round
    measured: dict[str, list[float]] = {name: [] for name in policies}
    for round_number in range(ROUNDS):
        for _ in range(batches_per_round):
            for _ in range(batch):
                page = greedy.next_page()
                opic.on_fetch(page, graph.children(page))
            if per_batch:
                graph = change_in_degrees(graph, per_batch, rng)
        if round_number >= ROUNDS - 3:
            exact = pagerank(graph)
            for name, window in policies.items():
                measured[name].append(relative_error(opic.estimates(window), exact))
    return {
        name: (float(np.mean(measured[name])), window.measures_per_page(n))
        for name, window in policies.items()
    }


def plot_convergence(results: dict[str, dict], key: str, title: str, path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    rounds = np.arange(1, ROUNDS + 1)
    for name, result in results.items():
        axes.plot(rounds, result[key], marker="o", label=name)
    axes.set(xlabel="pages read (× N)", ylabel="mean relative error (%)", title=title)
    axes.set_yscale("log")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def plot_windows(table: dict[float, dict], names: list[str], title: str, path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    rates = sorted(table)
    for name in names:
        axes.plot(rates, [table[r][name][0] for r in rates], marker="o", label=name)
    axes.set(xlabel="change rate (% of pages per N reads)", ylabel="mean relative error (%)")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def plot_measures(measures: dict[str, float], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.barh(list(measures), list(measures.values()))
    axes.set(xlabel="measures stored per page", title="Storage per time window")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 20,000, under a minute")
    parser.add_argument("--smoke", action="store_true", help="N = 1,000, no plot (seconds)")
    parser.add_argument("--pages", type=int, default=None, help="graph size N (default 100,000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = args.pages or (1_000 if args.smoke else 20_000 if args.quick else 100_000)
    rates = [0.0, 4.0] if args.smoke else [0.0, 1.0, 4.0] if args.quick else [0.0, 1.0, 2.0, 4.0]
    window_pages = n // 4 if args.quick or args.smoke else n
    plots = not args.smoke
    started = time.perf_counter()

    graph = power_law_graph(n, np.random.default_rng(args.seed))
    exact = pagerank(graph)
    print(f"power-law graph: N = {n:,} pages, {graph.dst.size:,} links, c = {DAMPING}")
    strategies = {
        "random": lambda opic: RandomSelection(opic, seed=args.seed),
        "cycle": Cycle,
        "greedy": Greedy,
    }
    results = {name: convergence(graph, exact, make) for name, make in strategies.items()}
    results["off-line"] = offline_convergence(graph, exact)

    for key, figure in (("all", "Figure 2: all pages"), ("top", "Figure 3: top 10 %")):
        print(f"\n{figure} — mean relative error (%) after k·N reads")
        print("k    " + "".join(f"{name:>10}" for name in results))
        for k in range(ROUNDS):
            print(f"{k + 1:<5}" + "".join(f"{r[key][k]:>10.2f}" for r in results.values()))
    print("\n§3.1 — cash read per page (× 1/N) in the last N reads: the error factor 1/G")
    print("falls that much faster (the paper: Random 1, Greedy about 2)")
    for name in strategies:
        print(f"{name:<8}{results[name]['g_per_round'][-1]:>8.2f}")
    if plots:
        OUT.mkdir(parents=True, exist_ok=True)
        plot_convergence(results, "all", "Convergence of OPIC (all pages)", OUT / "opic_fig2.png")
        plot_convergence(results, "top", "Convergence of OPIC (top 10 %)", OUT / "opic_fig3.png")

    month = results["greedy"]["g_per_round"][-1]
    table = {
        rate: changing_graph(window_pages, rate, month, args.seed + 1 + i)
        for i, rate in enumerate(rates)
    }
    names = list(table[rates[0]])
    print(f"\nFigures 4 and 6 — Greedy, N = {window_pages:,}, error (%) by change rate")
    print(f"{'policy':<26}" + "".join(f"{rate:>8.1f}%" for rate in rates))
    for name in names:
        print(f"{name:<26}" + "".join(f"{table[r][name][0]:>9.2f}" for r in rates))
    print("\nFigure 5 — measures stored per page (change rate 0)")
    for name in names:
        print(f"{name:<26}{table[rates[0]][name][1]:>9.1f}")
    if plots:
        plot_measures({name: table[rates[0]][name][1] for name in names}, OUT / "opic_fig5.png")
        plot_windows(
            table,
            ["variable 4", "variable 8", "variable 16", "interpolation 4 months"],
            "Influence of window size",
            OUT / "opic_fig4.png",
        )
        plot_windows(
            table,
            ["variable 8", "fixed 8 months", "improved fixed 4 months", "interpolation 4 months"],
            "Influence of window type",
            OUT / "opic_fig6.png",
        )

    last = ROUNDS - 1
    summary = {
        "pages": n,
        "greedy_top10_error_10n": round(results["greedy"]["top"][last], 3),
        "greedy_error_10n": round(results["greedy"]["all"][last], 3),
        "cycle_error_10n": round(results["cycle"]["all"][last], 3),
        "random_error_10n": round(results["random"]["all"][last], 3),
        "cycle_top10_error_10n": round(results["cycle"]["top"][last], 3),
        "random_top10_error_10n": round(results["random"]["top"][last], 3),
        "offline_error_10_iterations": round(results["off-line"]["all"][last], 3),
        "window_pages": window_pages,
        "interpolation_error_by_rate": {
            str(r): round(table[r]["interpolation 4 months"][0], 3) for r in rates
        },
        "variable8_error_by_rate": {str(r): round(table[r]["variable 8"][0], 3) for r in rates},
        "seconds": round(time.perf_counter() - started, 1),
        "plots": str(OUT) if plots else None,
    }
    print(f"\nplots in {OUT}/opic_fig{{2,3,4,5,6}}.png" if plots else "\nno plot (--smoke)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
