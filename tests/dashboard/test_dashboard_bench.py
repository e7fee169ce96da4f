"""``benchmarks/bench_dashboard.py --smoke`` runs and ends with the JSON its docs promise."""

from __future__ import annotations

import json

from tests.smoke_runs import smoke_run

KEYS = {
    "status_p99_ms_quiet",
    "status_p99_ms_loaded",
    "pages_per_s_quiet",
    "pages_per_s_loaded",
    "pages_per_s_ratio",
}


def test_smoke_run_prints_the_promised_figures():
    done = smoke_run("bench_dashboard.py")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures) >= KEYS
    assert figures["status_samples"] > 0 and figures["pages_per_s_quiet"] > 0
