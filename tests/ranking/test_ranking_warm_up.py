"""ranking.pagerank.warm_up: the kernels a ranking pass calls are loaded before it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_warm_up_loads_the_kernels_of_a_pass():
    """In a fresh process (numba loads nothing at import), after ``warm_up`` the kernels
    that slice a graph and sweep both vectors have their machine code."""
    script = (
        "from ranking.pagerank import kernels, warm_up\n"
        "names = ('count_degrees', 'gauss_seidel_slice', 'inverse_gauss_seidel_slice')\n"
        "assert not any(getattr(kernels, name).signatures for name in names)\n"
        "warm_up()\n"
        "print(all(getattr(kernels, name).signatures for name in names))\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.strip() == "True"
