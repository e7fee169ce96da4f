"""One ``--smoke`` run per benchmark per test session, shared by every test that reads it.

``tests/project/test_benchmarks.py`` checks each benchmark's promised JSON keys and a few
benchmarks' own tests check their figures; both read the same run instead of running the script
twice.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

SMOKE_TIMEOUT_S = 300
"""A smoke run takes seconds on an idle machine; this only stops a hung one."""


@functools.cache
def smoke_run(script: str) -> subprocess.CompletedProcess[str]:
    """``benchmarks/<script> --smoke``, run once (its exit status is the caller's to check)."""
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--smoke"],
        cwd=BENCHMARKS.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SMOKE_TIMEOUT_S,
        check=False,
    )
