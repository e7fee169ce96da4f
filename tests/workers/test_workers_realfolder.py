"""Two crawl workers on PostgreSQL crawl a real folder as its files say they should, and the
ranking of what they stored on a Dask cluster is the one process's.

The folder and its truth are tests/sitegen/test_realfolder_crawl.py's (two copies of every
section, ``python -m http.server``, the truth computed from the files), served twice, by two
servers whose hosts fall in different parts: with one host, one worker would own it all and
the other would idle. The crawl is ``xyleme run --workers 2``'s, stopped by ``xyleme stop``
once the store has settled, then ranked by ``xyleme rank compute`` in one process and with
``--workers 2``. Every page went through the claims, the coordinator and two processes'
commits, so what this proves is that none of them loses, adds or mistypes a page or a link.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
import pytest
from click.testing import CliRunner

from conventions import part_of
from metadata import Metadata
from tests.daemon_fixtures import RunningDaemon, make_repository, wait_until
from tests.postgres_cluster import PostgresCluster, fresh_database
from xyleme.cli import cli
from xyleme.sitegen import truth_overlaps
from xyleme.sitegen.crawl import DaemonCrawl, read_crawl
from xyleme.sitegen.folder import FolderTruth, StaticServer, folder_truth, normal
from xyleme.sitegen.realfolder import write_folder
from xyleme.sitegen.static import StaticProcess

pytestmark = pytest.mark.slow

PARTS = 2
CRAWL_DEADLINE_S = 180.0
"""Real seconds for the workers to read both servers' folders (about 10 s on an idle machine)."""
SETTLED_S = 5.0
"""The store has settled once its count of typed pages has not moved for this long."""
POLL_S = 0.5
STOP_DEADLINE_S = 120.0
"""Real seconds for the run to exit once ``xyleme stop`` returned."""
SERVER_TRIES = 20
"""Servers started, at most, until one's host is of another part than the first's (each try
has one chance in two)."""
REQUEST = re.compile(r'"GET (\S+) HTTP/')
"""A GET in ``http.server``'s request log."""
L1_TOLERANCE = 1e-7
"""The cluster's scores against the one process's: both are within ``--tol`` (1e-8) of the
exact vector."""


@dataclass
class WorkersCrawl:
    """What the workers made of the folder, and what the folder's truth says of it."""

    truth: FolderTruth
    """Both servers' truths, one after the other."""
    outcome: DaemonCrawl
    """The store read back after ``xyleme rank compute`` in one process."""
    read: dict[str, bool]
    """Normal URL → is XML, for every document read."""
    workers: list[dict]
    """The store's ``workers`` rows after the stop."""
    requests: dict[str, list[str]]
    """Origin → every path its server was asked for, in order."""
    repository: Path
    store: str
    log: str
    """What ``xyleme run --workers 2`` wrote."""


def succeeds(*args: str) -> None:
    """``xyleme ARGS`` in this process; fails the test with its output unless it exits 0."""
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, f"xyleme {' '.join(args)}: {result.output}"


@pytest.fixture(scope="module")
def store(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """A database of the session's cluster for the module's one crawl, dropped afterwards
    (``postgres_url`` is one test's)."""
    with fresh_database(postgres_cluster) as url:
        yield url


def servers_of_both_parts(root: Path, stack: ExitStack) -> list[StaticProcess]:
    """Two servers of ``root`` whose hosts (their ports) fall in parts 0 and 1, in that order;
    the ones of a part already served are stopped at once."""
    first = stack.enter_context(StaticProcess(root))
    for _ in range(SERVER_TRIES):
        with ExitStack() as attempt:
            second = attempt.enter_context(StaticProcess(root))
            if part_of(second.origin, PARTS) != part_of(first.origin, PARTS):
                stack.push(attempt.pop_all())
                return sorted([first, second], key=lambda s: part_of(s.origin, PARTS))
    pytest.fail(f"{SERVER_TRIES} servers, every host of part {part_of(first.origin, PARTS)}")


def joined(truths: list[FolderTruth]) -> FolderTruth:
    """One truth of several servers' (no link crosses from one to another)."""
    whole = FolderTruth([], [], [])
    for truth in truths:
        offset = len(whole.documents)
        whole.edges += [(s + offset, d + offset) for s, d in truth.edges]
        whole.documents += truth.documents
        whole.is_xml += truth.is_xml
        whole.not_documents.update(truth.not_documents)
        whole.scripted += truth.scripted
    return whole


def crawl_repository(repository: Path, store: str, scopes: list[str], seeds: list[str]) -> None:
    """A repository on ``store`` with the crawl's configuration (written whole: the generated
    file has a commented ``[crawler]`` section, which TOML refuses twice), and the seeds."""
    scope = ", ".join(f'"{prefix}"' for prefix in scopes)
    config = (
        f'[store]\nurl = "{store}"\n\n[archive]\nenabled = false\n\n'
        f"[crawler]\nscope = [{scope}]\nmin_delay = 0.0\nmax_crawl_delay = 0.0\n"
        "max_scout_depth = 64\n"
    )
    make_repository(repository, config, db=store)
    succeeds("--repo", str(repository), "seed", "add", *seeds)


class Settled:
    """For :func:`wait_until`: whether the store types some pages and their count has not
    moved for ``SETTLED_S`` (nothing left to fetch); fails if the run exits first."""

    def __init__(self, conn: psycopg.Connection, run: RunningDaemon) -> None:
        self.conn, self.run = conn, run
        self.typed, self.since = -1, time.monotonic()

    def __call__(self) -> bool:
        code = self.run.process.poll()
        assert code is None, f"the run exited {code}:\n" + "\n".join(self.run.lines)
        query = "SELECT count(*) FROM pages WHERE type <> 'UNKNOWN'"
        now, typed = time.monotonic(), self.conn.execute(query).fetchone()[0]
        if typed != self.typed:
            self.typed, self.since = typed, now
        return typed > 0 and now - self.since >= SETTLED_S


def crawl_with_workers(repository: Path, store: str) -> str:
    """``xyleme run --workers 2`` until the store settles, then ``xyleme stop``: both exit
    0. Returns what the run logged."""
    run = RunningDaemon(repository, "--workers", str(PARTS))
    try:
        with psycopg.connect(store, autocommit=True) as conn:
            wait_until(Settled(conn, run), timeout=CRAWL_DEADLINE_S, every=POLL_S)
        succeeds("--repo", str(repository), "stop")  # returns once the run let go
        code = run.process.wait(STOP_DEADLINE_S)
        assert code == 0, f"the run exited {code}:\n" + "\n".join(run.lines)
    finally:
        run.kill()
    return "\n".join(run.lines)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory, store: str) -> WorkersCrawl:
    """The folder crawled once by two workers from each server's index, then ranked in one
    process."""
    root = tmp_path_factory.mktemp("folder")
    write_folder(root, copies=2)
    repository = tmp_path_factory.mktemp("repo") / "repo"
    with ExitStack() as stack:
        served = servers_of_both_parts(root, stack)
        seeds = [f"{server.origin}/index.html" for server in served]
        scopes = [f"{server.origin}/" for server in served]
        truth = joined(
            [
                folder_truth(StaticServer(root, server.origin), [seed], [scope])
                for server, seed, scope in zip(served, seeds, scopes, strict=True)
            ]
        )
        crawl_repository(repository, store, scopes, seeds)
        log = crawl_with_workers(repository, store)
        requests = {server.origin: REQUEST.findall(server.log()) for server in served}
    succeeds("--repo", str(repository), "rank", "compute")
    with Metadata.open(store) as md:
        outcome = read_crawl(md, lambda url: url.startswith(tuple(scopes)))
        workers = md.workers()
    read = {normal(url): is_xml for url, is_xml in outcome.read.items()}
    return WorkersCrawl(truth, outcome, read, workers, requests, repository, store, log)


@pytest.fixture(scope="module")
def cluster_scores(crawled: WorkersCrawl) -> dict[str, dict[str, float]]:
    """Importance and interest by URL as ``xyleme rank compute --workers 2`` stores them (over
    the one process's: ``crawled`` kept those)."""
    succeeds("--repo", str(crawled.repository), "rank", "compute", "--workers", "2")
    with Metadata.open(crawled.store) as md:
        outcome = read_crawl(md, lambda url: True)
    return {"importance": outcome.importance, "interest": outcome.interest}


def test_every_reachable_document_is_read_and_nothing_else(crawled: WorkersCrawl) -> None:
    truth, read = crawled.truth, crawled.read
    missing = [url for url in truth.documents if url not in read]
    assert not missing, f"{len(missing)} of {len(truth.documents)} never read: {missing[:5]}"
    assert set(read) == set(truth.documents)
    assert [read[url] for url in truth.documents] == truth.is_xml  # typed as the files are


def test_the_links_are_the_true_links(crawled: WorkersCrawl) -> None:
    truth = crawled.truth
    true = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}
    recorded = {(normal(s), normal(d)) for s, d in crawled.outcome.matrix_edges}
    assert recorded == true


def test_the_rankings_agree_with_the_independent_computation(crawled: WorkersCrawl) -> None:
    truth, outcome = crawled.truth, crawled.outcome
    overlaps = truth_overlaps(outcome, truth.documents, truth.edges, truth.is_xml, normal)
    assert overlaps == {"importance": 20, "interest": 20}


def test_the_cluster_ranks_as_one_process_does(
    crawled: WorkersCrawl, cluster_scores: dict[str, dict[str, float]]
) -> None:
    """``rank compute --workers 2`` sweeps the same slices on Dask: the same vectors."""
    for name, single in (
        ("importance", crawled.outcome.importance),
        ("interest", crawled.outcome.interest),
    ):
        assert single and set(cluster_scores[name]) == set(single), name
        urls = sorted(single)
        gap = np.abs(np.array([single[u] - cluster_scores[name][u] for u in urls])).sum()
        assert gap <= L1_TOLERANCE, f"{name}: l1 {gap:.2e}"


def test_both_workers_read_and_stopped_cleanly(crawled: WorkersCrawl) -> None:
    """Each server's host is one worker's: both read pages, and both rows end stopped."""
    rows = sorted(
        (row["part"], row["parts"], row["state"], row["pages_read"] > 0)
        for row in crawled.workers
        if row["role"] == "worker"
    )
    assert rows == [(0, 2, "stopped", True), (1, 2, "stopped", True)], crawled.log


def test_no_request_robots_txt_refuses_reaches_a_server(crawled: WorkersCrawl) -> None:
    for origin, paths in crawled.requests.items():
        assert paths, f"{origin} logged no request"
        assert [path for path in paths if path.startswith("/private/")] == [], origin


def test_no_url_is_fetched_twice(crawled: WorkersCrawl) -> None:
    """A claim ends once its fetch is committed and the next refresh is a day away (the
    time unit): two fetches of one URL would be two workers, or one claim, fetching it twice."""
    for origin, paths in crawled.requests.items():
        assert [path for path, n in Counter(paths).items() if n > 1] == [], origin
