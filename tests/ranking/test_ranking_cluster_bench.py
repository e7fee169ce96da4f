"""``bench_rank.py --cluster-only``: the cluster row alone, on a graph kept for the next run.

It starts a LocalCluster of two worker processes bound to 127.0.0.1, so it has a deadline
of minutes (seconds when idle).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import ROOT

pytest.importorskip("distributed")

BENCH = ROOT / "benchmarks" / "bench_rank.py"


def test_the_cluster_row_alone_reports_both_rankings_in_both_modes(tmp_path):
    command = [sys.executable, str(BENCH), "--smoke", "--cluster-only"]
    out = subprocess.run(
        [*command, "--graph-cache", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["pages"] == 3000
    errors = ("cluster_l1_error", "cluster_chaotic_l1_error")
    errors += ("cluster_interest_sync_l1_error", "cluster_interest_chaotic_l1_error")
    assert all(0 <= last[key] <= 1e-8 for key in errors)
    assert 0 < last["cluster_bytes_per_sweep"] <= last["cluster_vector_bytes"]
    assert last["cluster_speedup"] > 0 and last["cluster_interest_speedup"] > 0
    assert last["cluster_interest_chaotic_speedup"] > 0
    assert last["cluster_ranking_speedup"] > 0 and last["cluster_ranking_chaotic_speedup"] > 0
    assert "sync: setup" in out.stdout and "both rankings" in out.stdout
    for row in ("importance  sync", "importance  chaotic", "interest    chaotic"):
        assert row in out.stdout
    assert "ms a sweep: worker sweep (CPU)  absorb  send  wait  rest" in out.stdout
    # the graph and its two slices stay for the next run, which generates nothing
    kept = tmp_path / "3000"
    assert (kept / "links.txt").exists() and (kept / "cluster-slices" / "manifest.json").exists()
    assert "scipy" not in out.stdout  # the other rows were not run
