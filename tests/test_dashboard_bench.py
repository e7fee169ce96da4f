"""``benchmarks/bench_dashboard.py --smoke`` runs and ends with the JSON its docs promise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = {
    "status_p99_ms_quiet",
    "status_p99_ms_loaded",
    "pages_per_s_quiet",
    "pages_per_s_loaded",
    "pages_per_s_ratio",
}


def test_smoke_run_prints_the_promised_figures():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_dashboard.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(figures) >= KEYS
    assert figures["status_samples"] > 0 and figures["pages_per_s_quiet"] > 0
