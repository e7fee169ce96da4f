"""SIGTERM and kill -9 in the middle of a crawl of the simulated web: resume, lose nothing."""

import json
import signal

import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType, VersionStore
from tests.daemon_fixtures import (
    FAST_CRAWL,
    RunningDaemon,
    make_repository,
    read_pages,
    wait_until,
)
from xyleme.cli import cli
from xyleme.simweb import SimWebProcess, SimWebSettings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def web():
    with SimWebProcess(SimWebSettings(hosts=4, pages=1500), speed=3600.0) as process:
        yield process


@pytest.fixture
def repo(tmp_path, web):
    folder = make_repository(tmp_path / "repo", FAST_CRAWL)
    result = CliRunner().invoke(cli, ["--repo", str(folder), "seed", "add", *web.seed_urls])
    assert result.exit_code == 0, result.output
    return folder


def test_kill_9_mid_crawl_loses_nothing_committed_and_resumes(repo, web):
    first = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) >= 100)
    finally:
        first.kill()  # SIGKILL: no checkpoint, no clean shutdown
    before = read_pages(repo)
    second = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        second.wait_for("daemon started")
        second.wait_for("unread pages")  # the pages known but not read are queued again
        wait_until(lambda: len(read_pages(repo)) >= len(before) + 100)
        assert second.stop(signal.SIGTERM) == 0
    finally:
        second.kill()
    after = read_pages(repo)
    lost = {url_id for url_id, at in before.items() if after.get(url_id) != at}
    assert not lost, f"{len(lost)} committed reads lost or rewritten after kill -9"


def test_sigterm_mid_crawl_exits_0_with_a_checkpoint_and_a_restart_goes_on(repo, web):
    daemon = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) >= 50)
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        daemon.kill()
    daemon.wait_for("SIGTERM received")
    daemon.wait_for("daemon stopped")
    status = json.loads(CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"]).output)
    assert status["daemon"]["pid"] is None
    assert status["live"]["fetched"] > 0
    stopped_at = status["clock"]["now"]
    before = read_pages(repo)
    again = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(read_pages(repo)) > len(before))
        assert again.stop(signal.SIGTERM) == 0
    finally:
        again.kill()
    status = json.loads(CliRunner().invoke(cli, ["--repo", str(repo), "status", "--json"]).output)
    assert status["clock"]["now"] > stopped_at  # simulated time went on, not back


def xml_reads_and_versions(repo) -> tuple[dict[int, str], dict[int, str]]:
    """URL-Id -> MD5 of the last read of each XML page (metadata), and of each document's
    latest version in the loader's repository."""
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        read = md.content_md5s(PageType.XML)
    versions = VersionStore(repo / "documents")
    try:
        latest = {change.url_id: change.md5 for change in versions.changes()}
    finally:
        versions.close()
    return read, latest


def test_a_read_committed_but_not_loaded_before_kill_9_is_read_and_loaded_at_restart(repo, web):
    first = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        wait_until(lambda: len(xml_reads_and_versions(repo)[1]) >= 5)
    finally:
        first.kill()
    read, latest = xml_reads_and_versions(repo)
    cut_off = sorted(set(read) & set(latest))[:3]
    # What a kill -9 between a commit and its load leaves: the metadata holds a read of new
    # content (its MD5) that the loader never stored. The next refresh would see that MD5
    # again and take the page as unchanged.
    with Metadata.open(repo / "metadata.db") as md:
        md.record_fetches(
            [
                FetchResult(
                    url_id,
                    md.page(url_id).last_access + 1.0,
                    PageType.XML,
                    status=200,
                    md5=f"{url_id:032x}",
                )
                for url_id in cut_off
            ]
        )
    second = RunningDaemon(repo, "--simweb-port", str(web.port))
    try:
        line = second.wait_for("read but never loaded")
        assert int(line.split("queued ")[1].split()[0]) >= len(cut_off)

        def loaded() -> bool:
            read, latest = xml_reads_and_versions(repo)
            return all(latest.get(url_id) == read[url_id] for url_id in cut_off)

        wait_until(loaded)
        assert second.stop(signal.SIGTERM) == 0
    finally:
        second.kill()
