"""The loader benchmark's smoke mode runs end to end and ends with the JSON its docs promise
(issue 18: the whole job by part, beside the plain loop and the daemon's fetch rate)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.paths import ROOT

BENCH = ROOT / "benchmarks" / "bench_loader.py"
PARTS = {"parse_validate", "links", "compress", "version_rows", "metadata"}
CALLS = {  # what "metadata" (the whole job less the parts timed alone) holds, by call
    "link_url_ids",
    "batch_reads",
    "link_data_rows",
    "status_and_type_rows",
    "metadata_commit",
    "garbage_collector",
}
KEYS = {
    "docs_per_s",
    "plain_docs_per_s",
    "ratio",
    "parts_us",
    "metadata_us",
    "whole_us",
    "plain_us",
    "not_lxml_over_lxml",
    "daemon_pages_per_s",
    "job_over_daemon",
    "big_doc_peak_mb",
}


@pytest.mark.slow
def test_bench_loader_smoke_prints_the_parts_and_a_json_last_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--daemon-seconds", "2", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=env,
    )
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last.keys() >= KEYS
    assert set(last["parts_us"]) == PARTS
    assert all(micros >= 0 for micros in last["parts_us"].values())
    assert set(last["metadata_us"]) == CALLS
    assert last["metadata_us"]["link_url_ids"] > 0  # every document has links
    assert last["docs_per_s"] > 0
    if last["daemon_pages_per_s"] is None:  # 2 s on a loaded machine may end before a sample
        assert "no sample" in last["notes"]["daemon_pages_per_s"]
        assert "daemon against a simulated web, 2 s: not measured, no sample" in out.stdout
    else:
        assert last["daemon_pages_per_s"] > 0 and last["notes"] == {}
    assert "whole job per document, by part" in out.stdout
