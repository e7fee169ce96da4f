"""The site benchmark runs end to end (--smoke) and ends with issue 16's JSON keys."""

from __future__ import annotations

import json

import pytest

from tests.smoke_runs import smoke_run

KEYS = {
    "pages_reachable",
    "pages_read",
    "reach",
    "daemon_pages_per_s",
    "bare_pages_per_s",
    "importance_top20_overlap",
    "interest_top20_overlap",
    "out_of_scope_fetches",
}


@pytest.mark.slow
def test_bench_site_prints_its_figures_and_a_json_last_line():
    out = smoke_run("bench_site.py")
    out.check_returncode()
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last.keys() >= KEYS
    assert last["pages_reachable"] > 300 and 0.5 < last["reach"] <= 1.0
    assert last["pages_read"] == round(last["reach"] * last["pages_reachable"])
    assert 0 <= last["importance_top20_overlap"] <= 20
    assert last["daemon_pages_per_s"] > 0 and last["bare_pages_per_s"] > 0
    assert "target >= 0.99" in out.stdout and "bare aiohttp + lxml" in out.stdout
