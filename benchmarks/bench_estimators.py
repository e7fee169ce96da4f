"""Change-rate estimators against the truth, the naive X/T, Cho & Garcia-Molina, and the CRLB.

For each λ·I on a log grid from 0.01 to 10 (I the mean access interval), many simulated Poisson
pages are accessed n times at intervals drawn uniformly in [0.5·I, 1.5·I]; each estimator's
relative bias and relative RMSE are printed side by side:

* eq9: the maximum likelihood from change observations (``refresh.estimators``);
* eq10-paper: λ = C / Σl from Last-Modified (the paper's eq. 10);
* eq10-cens: λ = C / (Σl + Σv), the likelihood maximum counting no-change intervals;
* naive: X / T (changes seen over time observed);
* cho: Cho & Garcia-Molina's improved −log((n − X + 0.5)/(n + 0.5)) divided by the mean interval.

Samples where eq. 9's degenerate-case rule applies (no change seen, or a change every time)
are counted in the "degen" column and left out of every change-observation estimator's RMSE;
the Last-Modified estimators never hit a degenerate case here (the first access always dates a
change). "crlb" is the Cramér-Rao bound on the relative RMSE of an unbiased estimator from the
same change observations (sqrt of the mean inverse Fisher information).

Run: ``python benchmarks/bench_estimators.py [--smoke | --quick] [--samples N]``.
The last line is JSON with ``eq9_rmse_over_crlb_20obs``: the worst ratio of eq. 9's RMSE to
the bound over 0.1 ≤ λ·I ≤ 2 with 20 access intervals.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages first

from refresh import (
    AccessIntervals,
    EstimateKind,
    ObservationBatch,
    change_observation_crlb,
    change_observation_mle,
    cho_improved_rate,
    last_modified_rate,
    naive_rate,
)

ESTIMATORS = ("eq9", "eq10-paper", "eq10-cens", "naive", "cho")


def simulate(rate: float, samples: int, n: int, rng: np.random.Generator):
    """n access intervals per sample, change outcomes and truthful Last-Modified dates."""
    gaps = rng.uniform(0.5, 1.5, (samples, n))
    changed = rng.random(gaps.shape) < -np.expm1(-rate * gaps)
    # age of the last change in a change interval: exponential truncated to the interval
    age = -np.log1p(rng.random(gaps.shape) * np.expm1(-rate * gaps)) / rate
    at = np.concatenate([np.zeros((samples, 1)), np.cumsum(gaps, axis=1)], axis=1)
    last_modified = np.empty_like(at)
    last_modified[:, 0] = -rng.exponential(1 / rate, samples)
    for j in range(1, n + 1):  # one step per access, vectorised over the samples
        fresh = at[:, j] - age[:, j - 1]
        last_modified[:, j] = np.where(changed[:, j - 1], fresh, last_modified[:, j - 1])
    codes = np.concatenate([np.full((samples, 1), -1), changed], axis=1).astype(np.int8)
    batch = ObservationBatch(at, codes, last_modified, np.full(samples, n + 1))
    return AccessIntervals.from_arrays(gaps, changed), batch


def estimate_all(intervals: AccessIntervals, batch: ObservationBatch) -> dict[str, np.ndarray]:
    n = intervals.valid.sum(axis=1)
    x = intervals.changed.sum(axis=1)
    total = intervals.length.sum(axis=1)
    return {
        "eq9": change_observation_mle(intervals).rate,
        "eq10-paper": last_modified_rate(batch, censored=False)[0],
        "eq10-cens": last_modified_rate(batch, censored=True)[0],
        "naive": naive_rate(x, total),
        "cho": cho_improved_rate(x, n, total / n),
    }


def run(grid: np.ndarray, samples: int, n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for rate in grid:  # mean interval I = 1, so λ·I = rate
        intervals, batch = simulate(float(rate), samples, n, rng)
        estimates = estimate_all(intervals, batch)
        kind = change_observation_mle(intervals).kind
        regular = kind == EstimateKind.CHANGE_MLE
        row = {"lambda_I": float(rate), "degenerate": float(np.mean(~regular))}
        for name, value in estimates.items():
            keep = np.isfinite(value) if name.startswith("eq10") else regular
            err = value[keep] / rate - 1
            row[f"{name}_bias"] = float(np.mean(err)) if keep.any() else float("nan")
            row[f"{name}_rmse"] = float(np.sqrt(np.mean(err**2))) if keep.any() else float("nan")
        crlb = change_observation_crlb(rate, intervals)
        row["crlb"] = float(np.sqrt(np.mean(crlb))) / rate
        rows.append(row)
    return rows


def print_table(rows: list[dict], n: int) -> None:
    print(f"\n{n} access intervals per page; relative bias / relative RMSE (I = mean interval)")
    head = f"{'λ·I':>6} {'degen':>6} " + " ".join(f"{e:>17}" for e in ESTIMATORS)
    print(head + f" {'crlb':>7} {'eq9/crlb':>8}")
    for row in rows:
        cells = " ".join(f"{row[f'{e}_bias']:+8.3f}/{row[f'{e}_rmse']:8.3f}" for e in ESTIMATORS)
        ratio = row["eq9_rmse"] / row["crlb"]
        print(
            f"{row['lambda_I']:6.3f} {row['degenerate']:6.1%} {cells} {row['crlb']:7.3f} "
            f"{ratio:8.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (< 60 s)")
    parser.add_argument("--smoke", action="store_true", help="200 samples (a few seconds)")
    parser.add_argument("--samples", type=int, default=None, help="pages per λ·I point")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    samples = args.samples or (200 if args.smoke else 4_000 if args.quick else 40_000)
    grid = np.logspace(-2, 1, 16)
    start = time.perf_counter()
    results = {}
    for n in (20,) if args.quick or args.smoke else (5, 20, 50):
        results[n] = run(grid, samples, n, args.seed)
        print_table(results[n], n)
    twenty = results[20]
    band = [r for r in twenty if 0.1 <= r["lambda_I"] <= 2.0]
    worst = max(r["eq9_rmse"] / r["crlb"] for r in band)
    lm_paper = float(np.mean([r["eq10-paper_rmse"] for r in twenty]))
    lm_cens = float(np.mean([r["eq10-cens_rmse"] for r in twenty]))
    print(
        f"\nsamples per point {samples}; eq. 10 mean relative RMSE over the grid: "
        f"paper {lm_paper:.3f}, censored {lm_cens:.3f}; "
        f"elapsed {time.perf_counter() - start:.1f} s"
    )
    summary = {
        "eq9_rmse_over_crlb_20obs": round(worst, 4),
        "eq10_paper_mean_rel_rmse_20obs": round(lm_paper, 4),
        "eq10_censored_mean_rel_rmse_20obs": round(lm_cens, 4),
        "eq10_default": "censored" if lm_cens <= lm_paper else "paper",
        "samples": samples,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
