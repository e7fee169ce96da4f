"""Several crawl workers over one PostgreSQL store, as processes on the simulated web: each
fetches only its part's hosts, ``run --workers`` restarts a dead one, a ``kill -9`` loses no
committed page and its hosts wait for their leases, OPIC's total cash over the parts is
conserved through a kill, and a second coordinator takes over."""

from __future__ import annotations

import json
import os
import signal
import time

import psycopg
import pytest
from click.testing import CliRunner

from conventions import host_hash
from metadata import Metadata, VersionStore
from tests.daemon_fixtures import FAST_CRAWL, RunningDaemon, read_pages, wait_until
from xyleme.cli import cli
from xyleme.jobs import cash_drift
from xyleme.simweb import SimWebProcess, SimWebSettings

pytestmark = pytest.mark.slow

CONFIG = '[store]\nurl = "{url}"\n' + FAST_CRAWL
"""The daemon tests' fast crawl of the simulated web, in the test's PostgreSQL store."""


@pytest.fixture(scope="module")
def web():
    with SimWebProcess(SimWebSettings(hosts=4, pages=1500), speed=3600.0) as process:
        yield process


@pytest.fixture
def repo(tmp_path, web, postgres_url):
    folder = tmp_path / "repo"
    result = CliRunner().invoke(cli, ["init", str(folder), "--db", postgres_url])
    assert result.exit_code == 0, result.output
    (folder / "xyleme.toml").write_text(CONFIG.format(url=postgres_url))
    result = CliRunner().invoke(cli, ["--repo", str(folder), "seed", "add", *web.seed_urls])
    assert result.exit_code == 0, result.output
    return folder


def status(repo) -> dict:
    result = CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def workers(repo) -> list[dict]:
    return [row for row in status(repo)["workers"] if row["role"] == "worker"]


def crawl_log_hosts(repo, part: int, parts: int) -> set[tuple[str, int]]:
    """(URL, its host's part) of every fetch in the crawl log of worker ``part``."""
    log = repo / "archive" / f"part-{part}-of-{parts}" / "crawl.log"
    lines = [line for line in log.read_text().splitlines() if not line.startswith("#")]
    return {(url, host_hash(url) % parts) for url in (line.split("\t")[3] for line in lines)}


def dependency_urls(repo, part: int, parts: int) -> set[str]:
    """The URLs worker ``part`` fetched as dependencies (discovery path ``E``), per its log."""
    log = repo / "archive" / f"part-{part}-of-{parts}" / "crawl.log"
    rows = [line.split("\t") for line in log.read_text().splitlines() if line[:1] != "#"]
    return {row[3] for row in rows if "E" in row[4]}


def urls_of(repo, url_ids: set[int]) -> set[str]:
    with Metadata.open(status_url(repo)) as md:
        return set(md.urls_of(sorted(url_ids)))


def claims(url: str, worker: str) -> dict[int, float]:
    """The pages ``worker`` holds a claim on, and each lease's end (wall clock)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, claimed_until FROM pages WHERE claimed_by = %s", (worker,)
        ).fetchall()
    return dict(rows)


def committed(repo) -> tuple[dict[int, float], int]:
    """Every read page's first access, and the number of versions stored."""
    versions = VersionStore(repo / "documents")
    try:
        stored = len(list(versions.changes()))
    finally:
        versions.close()
    return read_pages(repo), stored


def test_run_workers_splits_the_hosts_restarts_a_dead_worker_and_stops_cleanly(repo, web):
    run = RunningDaemon(repo, "--workers", "2", "--simweb-port", str(web.port))
    try:
        run.wait_for("leads", timeout=60)
        wait_until(lambda: len(read_pages(repo)) >= 150, timeout=120)
        wait_until(lambda: len(workers(repo)) == 2 and all(w["pages_read"] for w in workers(repo)))
        rows = workers(repo)
        assert sorted((w["part"], w["parts"]) for w in rows) == [(0, 2), (1, 2)]
        assert not any(w["stale"] for w in rows)
        text = CliRunner().invoke(cli, ["--repo", str(repo), "status"]).output
        assert "part 0/2" in text and "part 1/2" in text and "pages/s" in text
        # the kill comes once each part's OPIC has flushed some reads (g > 0): what the cash
        # check below carries through the kill (on a loaded machine the first flush can lag)
        wait_until(lambda: flushed_parts(repo) == {0, 1}, timeout=60)
        victim = next(w for w in rows if w["part"] == 1)
        os.kill(victim["pid"], signal.SIGKILL)
        run.wait_for(f"worker 1/2 (pid {victim['pid']}) was killed by signal 9: restarting")
        wait_until(
            lambda: any(
                w["part"] == 1 and w["pid"] != victim["pid"] and w["state"] == "running"
                for w in workers(repo)
            ),
            timeout=60,
        )
        code = run.stop(signal.SIGTERM, timeout=60)
        assert code == 0, "\n".join(run.lines)
    finally:
        run.kill()
    run.wait_for("every worker and the coordinator stopped")
    final = workers(repo)
    assert all(w["state"] == "stopped" for w in final), (final, "\n".join(run.lines))
    for row in final:  # a clean stop gives its claims back
        assert claims(str(status_url(repo)), row["name"]) == {}
    for part in (0, 1):
        fetched = crawl_log_hosts(repo, part, 2)
        assert fetched and {owner for _, owner in fetched} == {part}
    with Metadata.open(status_url(repo)) as md:  # OPIC's cash over the parts, kill included
        books = md.cash_parts()
        assert sorted(book.part for book in books) == [0, 1]
        assert all(book.epoch > 0 and book.g > 0 for book in books), books
        assert cash_drift(md) <= 1e-9


def flushed_parts(repo) -> set[int]:
    """The parts whose OPIC books hold committed reads (a flush with g > 0)."""
    with Metadata.open(status_url(repo)) as md:
        return {book.part for book in md.cash_parts() if book.epoch > 0 and book.g > 0}


def status_url(repo) -> str:
    import tomllib

    return tomllib.loads((repo / "xyleme.toml").read_text())["store"]["url"]


def test_kill_9_loses_no_committed_page_and_its_hosts_wait_for_their_leases(repo, web):
    lease = 6.0
    options = ("--part", "0/1", "--lease", str(lease), "--simweb-port", str(web.port))
    first = RunningDaemon(repo, *options, command="worker")
    try:
        first.wait_for("started", timeout=60)
        wait_until(lambda: len(read_pages(repo)) >= 100, timeout=120)
        dead = workers(repo)[0]["name"]
    finally:
        first.kill()  # SIGKILL: no clean stop, claims left behind
    killed_at = time.time()
    before, versions_before = committed(repo)
    held = claims(status_url(repo), dead)
    assert held, "the killed worker held no claim (it should hold its queue's pages)"
    unread = {url_id: until for url_id, until in held.items() if url_id not in before}
    second = RunningDaemon(repo, *options, command="worker")
    try:
        second.wait_for("started", timeout=60)
        wait_until(lambda: set(unread) <= set(read_pages(repo)), timeout=120)
        after = read_pages(repo)
        early = {url_id for url_id, until in unread.items() if after[url_id] < until - 0.5}
        # nobody claimed them while the lease lived: a page read before its lease ended was
        # a dependency (a DTD, an entity) the loader asked for, which no claim holds back
        assert dependency_urls(repo, 0, 1) >= urls_of(repo, early), (early, killed_at)
        assert second.stop(signal.SIGTERM) == 0
    finally:
        second.kill()
    after, versions_after = committed(repo)
    lost = {url_id for url_id, at in before.items() if after.get(url_id) != at}
    assert not lost, f"{len(lost)} committed reads lost or rewritten after kill -9"
    assert versions_after >= versions_before
    assert len(after) > len(before)
    assert claims(status_url(repo), workers(repo)[0]["name"]) == {}


def test_a_second_coordinator_waits_and_takes_over_when_the_first_dies(repo):
    first = RunningDaemon(repo, command="coordinator")
    second = None
    try:
        first.wait_for("leads", timeout=60)
        second = RunningDaemon(repo, command="coordinator")
        second.wait_for("waiting: another coordinator leads", timeout=60)
        rows = [row for row in status(repo)["workers"] if row["role"] == "coordinator"]
        assert sorted(row["state"] for row in rows) == ["running", "waiting"]
        first.kill()
        second.wait_for("leads", timeout=60)
        assert second.stop(signal.SIGTERM) == 0
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_a_pause_stops_the_workers_fetching_and_gives_their_claims_back(repo, web):
    options = ("--part", "0/1", "--simweb-port", str(web.port))
    worker = RunningDaemon(repo, *options, command="worker")
    try:
        worker.wait_for("started", timeout=60)
        wait_until(lambda: len(read_pages(repo)) >= 30, timeout=120)
        name = workers(repo)[0]["name"]
        assert CliRunner().invoke(cli, ["--repo", str(repo), "pause"]).exit_code == 0
        worker.wait_for("paused (`xyleme pause`)", timeout=30)
        wait_until(lambda: workers(repo)[0]["state"] == "paused", timeout=30)
        assert claims(status_url(repo), name) == {}
        paused_at = len(read_pages(repo))
        time.sleep(1.0)
        assert len(read_pages(repo)) == paused_at  # nothing fetched while paused
        assert CliRunner().invoke(cli, ["--repo", str(repo), "resume"]).exit_code == 0
        worker.wait_for("resumed (`xyleme resume`)", timeout=30)
        wait_until(lambda: len(read_pages(repo)) > paused_at, timeout=60)
        assert worker.stop(signal.SIGTERM) == 0
    finally:
        worker.kill()


def test_xyleme_stop_stops_run_workers_as_sigterm_does(repo, web):
    run = RunningDaemon(repo, "--workers", "1", "--simweb-port", str(web.port))
    try:
        run.wait_for("leads", timeout=60)
        wait_until(lambda: len(read_pages(repo)) >= 20, timeout=120)
        again = CliRunner().invoke(cli, ["--repo", str(repo), "run", "--workers", "1"])
        assert again.exit_code == 1 and "already runs on" in again.output, again.output
        stop = CliRunner().invoke(cli, ["--repo", str(repo), "stop", "--timeout", "90"])
        assert stop.exit_code == 0, stop.output
        assert stop.stdout.startswith(f"workers' supervisor (pid {run.process.pid}) stopped in ")
        assert run.process.wait(30) == 0  # a clean stop, as after SIGTERM
    finally:
        run.kill()
    run.wait_for("`xyleme stop`: stopping the workers and the coordinator")
    run.wait_for("every worker and the coordinator stopped")
    assert [w["state"] for w in workers(repo)] == ["stopped"]
    assert claims(status_url(repo), workers(repo)[0]["name"]) == {}
    with Metadata.open(status_url(repo)) as md:
        assert md.state_keys("command/") == [] and md.state_keys("answer/") == []
    stopped = CliRunner().invoke(cli, ["--repo", str(repo), "stop"])
    assert stopped.exit_code == 2
