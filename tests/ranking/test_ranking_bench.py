"""The ranking benchmark's smoke mode runs in seconds, without igraph (a [bench]-only peer),
and ends with the documented JSON keys."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.paths import ROOT

BENCH = ROOT / "benchmarks" / "bench_rank.py"
KEYS = {
    "xyleme_direct_s",
    "xyleme_both_s",
    "scipy_s",
    "scipy_both_s",
    "igraph_s",
    "xyleme_sweeps",
    "xyleme_inverse_sweeps",
    "power_iterations",
    "power_inverse_iterations",
    "xyleme_peak_anon_mb",
    "budget_mb",
    "l1_error",
    "inverse_l1_error",
    "inverse_l1_bound",
}
# Run the benchmark as a script with igraph made unimportable, as on a [test]-only install.
WITHOUT_IGRAPH = (
    "import runpy, sys; sys.modules['igraph'] = None; sys.argv = sys.argv[1:]; "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def test_bench_rank_smoke_prints_its_figures_and_a_json_last_line():
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_IGRAPH, str(BENCH), "--smoke"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,  # seconds when idle (the cluster row starts 2 worker processes)
    )
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last.keys() >= KEYS
    assert last["igraph_s"] is None and "\nigraph " not in out.stdout  # no igraph row
    assert last["l1_error"] <= 1e-8 and last["budget_mb"] == 1.0
    # (the reference is itself within about 1e-11, so the error is not compared with the bound)
    assert last["inverse_l1_error"] <= 1e-8 and last["inverse_l1_bound"] <= 1e-8
    assert "scipy direct+inverse" in out.stdout
    if last["cluster_sync_s"] is not None:  # the [cluster] extra is installed
        assert last["cluster_l1_error"] <= 1e-8 and last["cluster_chaotic_l1_error"] <= 1e-8
        assert 0 < last["cluster_bytes_per_sweep"] <= last["cluster_vector_bytes"]
        assert "cluster row (2 workers" in out.stdout
