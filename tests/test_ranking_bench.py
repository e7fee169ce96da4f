"""The ranking benchmark runs end to end on a tiny graph and ends with the issue's JSON keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_rank.py"
KEYS = {
    "xyleme_direct_s",
    "xyleme_both_s",
    "scipy_s",
    "igraph_s",
    "xyleme_sweeps",
    "power_iterations",
    "xyleme_peak_anon_mb",
    "budget_mb",
    "l1_error",
}


@pytest.mark.slow
def test_bench_rank_prints_its_figures_and_a_json_last_line():
    out = subprocess.run(
        [sys.executable, str(BENCH), "--pages", "3000", "--memory", "1MB"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last.keys() >= KEYS
    assert last["l1_error"] < 1e-8 and last["budget_mb"] == 1.0
    assert "networkx" in out.stdout and "igraph" in out.stdout
