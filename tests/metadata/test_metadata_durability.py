"""Durability: a writer killed with SIGKILL loses no committed batch and leaves no partial one;
readers in another process work while a writer writes."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np

from metadata import Metadata, PageType
from tests.deadlines import readline_within
from tests.paths import ROOT

PAGES_PER_BATCH = 500

# Writes batches until killed: batch k assigns ids to PAGES_PER_BATCH URLs (one transaction)
# and records their fetch results with links (a second one), then prints k.
WRITER = f"""
import sys
from metadata import FetchResult, Metadata, PageType
md = Metadata.open(sys.argv[1])
batch = 0
while True:
    ids = md.ids_for([f"http://crash.test/{{batch}}/{{n}}" for n in range({PAGES_PER_BATCH})])
    md.record_fetches([
        FetchResult(i, float(batch), PageType.HTML, 200, md5=f"{{i:032x}}",
                    children=[ids[0], ids[1]])
        for i in ids
    ])
    print(batch, flush=True)
    batch += 1
"""


def start_writer(path: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def committed_batches(writer: subprocess.Popen, wanted: int) -> int:
    """Read the writer's progress until ``wanted`` batches are reported; return the last."""
    last = -1
    while last < wanted - 1:
        line = readline_within(writer)
        assert line, "the writer stopped early"
        last = int(line)
    return last


def test_sigkill_mid_run_loses_no_committed_batch_and_keeps_no_partial_one(store_url):
    path = store_url
    Metadata.create(path).close()
    writer = start_writer(path)
    try:
        reported = committed_batches(writer, wanted=6)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert writer.returncode == -signal.SIGKILL

    if not store_url.startswith("postgresql:"):
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.close()
    with Metadata.open(path) as md:
        pages = md.refresh_view()
        urls = md.urls_of(pages["id"].tolist())
        batch_of = np.array([int(url.split("/")[3]) for url in urls])
        for batch in np.unique(batch_of):
            members = batch_of == batch
            # ids_for commits a whole batch of URLs or none of it
            assert members.sum() == PAGES_PER_BATCH
            # record_fetches commits the whole batch of fetch results or none of it
            fetched = np.isfinite(pages["last_access"][members])
            assert fetched.all() or not fetched.any()
            if batch <= reported:  # the writer said it committed this one
                assert fetched.all()
        assert set(range(reported + 1)) <= set(batch_of.tolist())
        # a fetch result's record, links and observation go together
        for url_id, last_access in zip(pages["id"], pages["last_access"], strict=True):
            has_links = md.children(int(url_id)).size > 0
            has_history = len(md.observations(int(url_id))) > 0
            assert has_links == has_history == bool(np.isfinite(last_access))


def test_a_reader_works_while_a_writer_writes(store_url):
    path = store_url
    Metadata.create(path).close()
    writer = start_writer(path)
    try:
        committed_batches(writer, wanted=1)
        seen = []
        deadline = time.monotonic() + 120  # only a guard against a stuck writer
        with Metadata.open(path, readonly=True) as reader:
            # read until the writer has committed at least two more batches meanwhile
            while not seen or seen[-1] < seen[0] + 2 * PAGES_PER_BATCH:
                assert time.monotonic() < deadline, "the writer made no progress"
                seen.append(sum(reader.count_by_type().values()))
                edges = sum(len(src) for src, _ in reader.export_links(chunk_edges=4096))
                assert edges % 2 == 0  # two children per fetched page, never half a page
                assert reader.page(1).url == "http://crash.test/0/0"
                assert reader.page(1).page_type is PageType.HTML
        assert seen == sorted(seen)
        assert all(count % PAGES_PER_BATCH == 0 for count in seen)  # whole batches only
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
