"""Reproduce §4's comparison of LiveRanks (seed 001, Figures 4–6) on an aged web graph.

Takes the simulated web's link graph (or a synthetic host/section graph), ages it a year with
the model of xyleme/simweb/aging.py through simweb's lifecycle hook, runs
every strategy to the end against the known truth and prints cost(α) for α = 0.1 … 0.9 as a
table, each strategy's cost relative to the random ordering R (the paper's reference), and
whether the paper's ordering holds. Draws the curves into benchmarks/out/liverank_cost.png.
The last line is JSON: {"cost": {strategy: {"0.1": cost, …}}, …}.

    python benchmarks/bench_liverank.py            # 100,000 pages
    python benchmarks/bench_liverank.py --quick    # 20,000 pages, well under a minute
    python benchmarks/bench_liverank.py --smoke    # 3,000 pages, no plot, a few seconds
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import pairwise
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.liverank_webgraph import synthetic_web
from benchmarks.plots import pyplot
from ranking.liverank import (
    BENCHMARK_ALPHAS,
    STRATEGIES,
    LinkGraph,
    LiveRankSettings,
    cost_curve,
    make_liverank,
    personalised_pagerank,
    simulate,
)
from xyleme.simweb import (
    DAY,
    AgedWeb,
    AgingModel,
    GroundTruth,
    SimWeb,
    SimWebSettings,
    age_graph,
    aging_lifecycle,
    simweb_graph,
)

OUT = Path(__file__).resolve().parent / "out"
PAPER_ORDER = ("pa_pm", "pa", "p", "i")
"""§4.1.1: P_a^{+/-} ≤ P_a ≤ P ≤ I < R for small α on uk-2002."""


AGED_DAYS = 365.0
"""How long the simulated web ages after the old crawl (all deaths fall within it)."""


def aged_graph(kind: str, n_pages: int, seed: int) -> tuple[LinkGraph, np.ndarray, AgedWeb]:
    """The old crawl's graph, the truth a year later, and each page's fate.

    ``simweb``: the simulated web's links at its epoch, aged through its lifecycle hook; the
    truth is what its ground truth says a year on. ``synthetic``: benchmarks/
    liverank_webgraph.py's host/section graph, aged by the same model.
    """
    model = AgingModel(seed=seed)
    if kind == "synthetic":
        graph = synthetic_web(n_pages, seed=seed)
        aged = age_graph(graph, model)
        return graph, aged.alive, aged
    settings = SimWebSettings(hosts=max(1, n_pages // 200), pages=n_pages, seed=seed)
    web = SimWeb(settings, lifecycle=aging_lifecycle(model, over_days=AGED_DAYS))
    graph = simweb_graph(web.structure)
    alive = GroundTruth(web).alive(settings.epoch + AGED_DAYS * DAY)
    return graph, alive, age_graph(graph, model)


def run(n_pages: int, graph_kind: str, sample: float, sample_kind: str, seed: int) -> dict:
    """Age a graph, run every strategy, return costs, timings and the truth's make-up."""
    graph, alive, aged = aged_graph(graph_kind, n_pages, seed)
    pagerank = personalised_pagerank(graph)
    costs, seconds = {}, {}
    for strategy in STRATEGIES:
        settings = LiveRankSettings(
            strategy=strategy, sample=sample, sample_kind=sample_kind, seed=seed
        )
        started = time.perf_counter()
        order = simulate(make_liverank(graph, settings, pagerank=pagerank), alive)
        seconds[strategy] = time.perf_counter() - started
        costs[strategy] = cost_curve(order, alive, BENCHMARK_ALPHAS)
    return {
        "graph": graph,
        "fates": aged.fractions(),
        "n_over_na": n_pages / int(alive.sum()),
        "costs": costs,
        "seconds": seconds,
    }


def targets(costs: dict[str, dict[float, float]]) -> dict[str, bool]:
    """The issue's targets: the paper's ordering and P_a^{+/-} within 2× of ideal, α ≤ 0.5."""
    early = [alpha for alpha in BENCHMARK_ALPHAS if alpha <= 0.5]
    ordered = all(
        costs[better][alpha] <= costs[worse][alpha]
        for alpha in early
        for better, worse in pairwise(PAPER_ORDER)
    )
    below_random = all(costs["i"][alpha] < costs["r"][alpha] for alpha in early)
    within_two = all(costs["pa_pm"][alpha] <= 2.0 for alpha in early)
    return {
        "pa_pm<=pa<=p<=i (alpha<=0.5)": ordered,
        "i<r (alpha<=0.5)": below_random,
        "pa_pm<=2 (alpha<=0.5)": within_two,
    }


def print_table(result: dict) -> None:
    """cost(α) per strategy, then the same relative to R, as §4's figures read."""
    costs = result["costs"]
    header = "strategy " + " ".join(f"{alpha:>6}" for alpha in BENCHMARK_ALPHAS) + "   time"
    print("cost(L, α) = fetches per live page found (ideal 1, random ≈ n/n_a)")
    print(header)
    for strategy, curve in costs.items():
        cells = " ".join(f"{curve[alpha]:6.2f}" for alpha in BENCHMARK_ALPHAS)
        print(f"{strategy:8s} {cells} {result['seconds'][strategy]:5.1f}s")
    print("\nrelative to the random ordering R (the paper's reference; < 1 is better)")
    print(header[: -len("   time")])
    for strategy, curve in costs.items():
        cells = " ".join(f"{curve[a] / costs['r'][a]:6.2f}" for a in BENCHMARK_ALPHAS)
        print(f"{strategy:8s} {cells}")


def draw(costs: dict[str, dict[float, float]], n_over_na: float, path: Path) -> None:
    """The cost curves, one line per strategy, like the paper's Figures 4 and 6."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for strategy, curve in costs.items():
        axes.plot(
            BENCHMARK_ALPHAS, [curve[a] for a in BENCHMARK_ALPHAS], marker="o", label=strategy
        )
    axes.axhline(1.0, color="grey", linestyle=":", label="ideal")
    axes.axhline(n_over_na, color="grey", linestyle="--", label="n/n_a")
    axes.set_xlabel("α (fraction of the live pages found)")
    axes.set_ylabel("cost(L, α)")
    axes.set_title("LiveRank cost on an aged web graph (cf. Huynh et al. 2015, Fig. 4–6)")
    axes.legend(ncol=2, fontsize="small")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 pages instead of 100,000")
    parser.add_argument("--smoke", action="store_true", help="3,000 pages, no plot (seconds)")
    parser.add_argument("--pages", type=int, default=None, help="graph size (overrides --quick)")
    parser.add_argument("--sample", type=float, default=0.01, help="z: fraction or count")
    parser.add_argument(
        "--sample-kind", default="random", choices=("random", "pagerank", "indegree")
    )
    parser.add_argument(
        "--graph",
        choices=("simweb", "synthetic"),
        default="simweb",
        help="the simulated web's links, or the host/section synthetic graph",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--png", type=Path, default=OUT / "liverank_cost.png", help="plot file")
    args = parser.parse_args()
    n_pages = args.pages or (3_000 if args.smoke else 20_000 if args.quick else 100_000)
    png = None if args.smoke else args.png

    started = time.perf_counter()
    result = run(n_pages, args.graph, args.sample, args.sample_kind, args.seed)
    graph = result["graph"]
    print(
        f"{args.graph} graph: {n_pages} pages, {graph.adjacency.nnz} links, "
        f"{int(graph.hosts.max()) + 1} hosts; sample z = {args.sample} ({args.sample_kind})"
    )
    fates = ", ".join(f"{name} {share:.1%}" for name, share in result["fates"].items())
    print(f"after aging: {fates}; n/n_a = {result['n_over_na']:.2f}\n")
    print_table(result)
    checks = targets(result["costs"])
    print()
    for name, ok in checks.items():
        print(f"target {name}: {'met' if ok else 'NOT met'}")
    if png is not None:
        draw(result["costs"], result["n_over_na"], png)
    print(f"plot: {png or 'none (--smoke)'}; total {time.perf_counter() - started:.1f}s")
    summary = {
        "cost": {
            strategy: {f"{alpha:.1f}": round(value, 4) for alpha, value in curve.items()}
            for strategy, curve in result["costs"].items()
        },
        "n_pages": n_pages,
        "graph": args.graph,
        "alive_fraction": round(1.0 / result["n_over_na"], 4),
        "n_over_na": round(result["n_over_na"], 4),
        "targets": checks,
        "plot": None if png is None else str(png),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
