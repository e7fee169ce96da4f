"""bench_daemon's soak reports what it measured, even when a short run on a loaded machine
ends before its first sample: null figures, each with its note, never a crash."""

from __future__ import annotations

import sys

import pytest

from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_daemon import Sample, rss_growth, soak, unmeasured

NULL_WITHOUT_SAMPLES = (
    "fetched",
    "pages_per_s",
    "rss_mb_start",
    "rss_mb_end",
    "rss_growth_pct",
    "known_urls",
    "known_stable_at_s",
)


@pytest.mark.slow
async def test_a_run_that_ends_before_its_first_sample_reports_nulls_with_notes(tmp_path):
    # 1 ms of run: the daemon's start-up alone outlasts it, as 2 s do on a loaded machine
    figures = await soak(0.001, 100, 8_640.0, tmp_path / "repo")
    assert {key: figures[key] for key in NULL_WITHOUT_SAMPLES} == dict.fromkeys(
        NULL_WITHOUT_SAMPLES
    )
    assert set(figures["notes"]) == set(NULL_WITHOUT_SAMPLES)
    assert all("no sample" in why for why in figures["notes"].values())
    assert figures["timeline"] == [] and figures["max_loop_block_ms"] >= 0


def test_rss_growth_needs_two_samples_in_the_stable_window():
    one = [Sample(1.0, 10, 5, 0, 100 * 2**20)]
    assert rss_growth([], 2.0) == (None, None)
    growth, stable = rss_growth(one, 2.0)
    assert (growth, stable) == (None, 1.0)
    assert set(unmeasured(one, growth, 2.0)) == {"rss_growth_pct"}
    two = [*one, Sample(2.0, 20, 5, 0, 110 * 2**20)]
    assert rss_growth(two, 2.0) == (pytest.approx(10.0), 1.0)
    assert unmeasured(two, 10.0, 2.0) == {}
