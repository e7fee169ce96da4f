"""Every benchmark runs: its --smoke mode ends with the JSON line benchmarks/README.md promises.

The promised keys are read from the README's table, so the docs and the scripts cannot drift
apart unseen; a benchmark added to benchmarks/ without a row in that table fails here too.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.paths import ROOT
from tests.smoke_runs import smoke_run

BENCHMARKS = ROOT / "benchmarks"
README = BENCHMARKS / "README.md"

PEER_FIGURES = {
    "bench_crawl.py": {"scrapy_pages_per_s", "ratio_vs_scrapy"},
    "bench_rank.py": {"igraph_s"},
}
"""Figures of a peer that comes only with the optional [bench] extra: null in a smoke run."""


def promised_keys() -> dict[str, set[str]]:
    """The last column of the README's table "The benchmarks", per script: the keys its last
    line must hold."""
    section = README.read_text().split("\n## The benchmarks\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(bench_\w+\.py)` \|.*\| ([^|]*) \|$", section, re.M)
    return {script: set(re.findall(r"`(\w+)`", keys)) for script, keys in rows}


PROMISED = promised_keys()


def test_every_benchmark_has_its_row_and_every_row_its_benchmark():
    scripts = {path.name for path in BENCHMARKS.glob("bench_*.py")}
    assert set(PROMISED) == scripts
    assert all(PROMISED.values())


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(PROMISED))
def test_the_smoke_run_ends_with_the_promised_json(script):
    done = smoke_run(script)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) > 1, "the figures are printed before the JSON line"
    last = json.loads(lines[-1])
    assert isinstance(last, dict)
    missing = PROMISED[script] - last.keys()
    assert not missing, f"{script} does not print {sorted(missing)}"
    peers = PEER_FIGURES.get(script, set())
    explained = last.get("notes") or {}  # a run too short to measure says why, by key
    unmeasured = {
        key for key in PROMISED[script] - peers if last[key] is None and not explained.get(key)
    }
    assert not unmeasured, f"{script} measured nothing for {sorted(unmeasured)}, saying nothing"
