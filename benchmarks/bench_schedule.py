"""Time of one scheduling pass over many pages: the scan and the folders of §6.6.

The pages have λ log-uniform in [0.01, 100] changes a day, r Pareto (tail 1.5, mean 1) and a
last access spread over the previous 30 days; G is a tenth of the pages a day.

* scan: solve the policy (S, K with the one-unit floor: ``refresh_intervals``), compute every
  page's refresh point last_access + t_i and select the due pages (``scan_due``): the whole
  time-unit job of the scan implementation, O(N);
* scan-select: the selection alone, when next_refresh is already stored (O(N) comparison);
* folders-build: placing every page in the folder of its refresh point (done once);
* folders-pass: one unit of the folder implementation: pop the current folder and put its
  pages in the folders of their next refresh, O(G).

Run: ``python benchmarks/bench_schedule.py [--smoke | --quick] [--pages N]`` (``--smoke``:
20,000 pages). The last line is JSON with ``pages`` and ``scan_s`` (the median of three scan
passes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages first

from refresh import FolderSchedule, refresh_intervals, scan_due

DAY = 86_400.0


def timed(function, repeat: int = 3) -> tuple[float, object]:
    """Median wall time of ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        tic = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - tic)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1M pages instead of 10M")
    parser.add_argument("--smoke", action="store_true", help="20,000 pages (a few seconds)")
    parser.add_argument("--pages", type=int, default=None)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    n = args.pages or (20_000 if args.smoke else 1_000_000 if args.quick else 10_000_000)
    bandwidth = n / 10
    rng = np.random.default_rng(args.seed)
    rate = np.exp(rng.uniform(np.log(0.01), np.log(100.0), n))  # per day = per unit
    r = rng.pareto(1.5, n) + 1.0
    r /= r.mean()
    now = 30 * DAY
    last_access = now - rng.uniform(0, 30, n) * DAY

    def scan_pass() -> np.ndarray:
        plan = refresh_intervals(r * rate, bandwidth)
        return scan_due(last_access + plan.interval * DAY, now)

    scan_s, due = timed(scan_pass)
    next_refresh = last_access + refresh_intervals(r * rate, bandwidth).interval * DAY
    select_s, _ = timed(lambda: scan_due(next_refresh, now))

    interval = refresh_intervals(r * rate, bandwidth).interval * DAY
    folders = FolderSchedule(unit_s=DAY, n_pages=n)
    build_s, _ = timed(lambda: folders.insert(np.arange(n), next_refresh), repeat=1)
    units = 3
    pass_times, popped = [], 0
    for k in range(units):
        when = now + k * DAY
        tic = time.perf_counter()
        positions = folders.pop_due(when)
        folders.insert(positions, when + interval[positions])
        pass_times.append(time.perf_counter() - tic)
        popped = len(positions)
    folders_s = statistics.median(pass_times[1:])  # the first pass also empties the backlog

    print(f"{n:,} pages, G = {bandwidth:,.0f} per unit; {len(due):,} due at the scan")
    print(f"{'pass':>14} {'seconds':>9} {'pages touched':>14}")
    print(f"{'scan':>14} {scan_s:9.3f} {n:14,}")
    print(f"{'scan-select':>14} {select_s:9.3f} {n:14,}")
    print(f"{'folders-build':>14} {build_s:9.3f} {n:14,}")
    print(f"{'folders-pass':>14} {folders_s:9.3f} {popped:14,}")
    print(f"folders-pass / scan = {folders_s / scan_s:.3f}")
    print(
        json.dumps(
            {
                "pages": n,
                "scan_s": round(scan_s, 4),
                "scan_select_s": round(select_s, 4),
                "folders_build_s": round(build_s, 4),
                "folders_pass_s": round(folders_s, 4),
                "due": len(due),
            }
        )
    )


if __name__ == "__main__":
    main()
