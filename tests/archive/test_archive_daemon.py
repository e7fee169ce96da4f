"""The daemon archives by default: its WARC files and crawl log agree with each other and
with the metadata, and are closed when it stops."""

from __future__ import annotations

import hashlib

from click.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from metadata import ManualClock, Metadata
from tests.daemon_fixtures import make_repository
from xyleme.archive.crawllog import LOG_NAME, parse_line
from xyleme.archive.records import warc_date
from xyleme.cli import cli
from xyleme.commands import RepositoryTarget
from xyleme.config import config_from_mapping
from xyleme.daemon import Daemon
from xyleme.jobs import queue_unread
from xyleme.simweb import DOMAIN, SimWebProcess, SimWebServer, SimWebSettings

FAST = {"daemon": {"scope": [DOMAIN]}, "crawler": {"min_delay": 0.0, "max_crawl_delay": 0.0}}


async def crawl_once(repo, settings: SimWebSettings, clock: ManualClock) -> None:
    """The daemon's first read of a small simulated web, then its stop."""
    async with SimWebServer(settings, clock) as web:
        with Metadata.open(repo / "metadata.db") as md:
            RepositoryTarget(md).add_seeds(web.seed_urls)
        daemon = Daemon(repo, config_from_mapping(FAST), clock=clock, resolver=web.resolver())
        daemon.open()
        try:
            queue_unread(daemon.md, daemon.crawler)
            await daemon.crawler.run()
        finally:
            daemon.close()


async def test_every_logged_response_is_in_the_warc_files_with_its_md5(tmp_path):
    settings = SimWebSettings(hosts=2, pages=60, seed=3).without_faults()
    clock = ManualClock(settings.epoch)
    repo = make_repository(tmp_path / "repo")
    await crawl_once(repo, settings, clock)
    folder = repo / "archive"
    assert not list(folder.glob("*.open"))  # closed under their final names
    answers = {}
    for path in folder.glob("*.warc.gz"):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                if record.rec_type == "response":
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    answers[url] = (
                        int(record.http_headers.get_statuscode()),
                        hashlib.md5(record.content_stream().read()).hexdigest(),
                        record.rec_headers.get_header("WARC-Date"),
                    )
    lines = (folder / LOG_NAME).read_text().splitlines(keepends=True)[1:]
    rows = [parse_line(line) for line in lines]
    assert len(rows) >= 60
    for row in rows:
        if row["status"] > 0:
            status, md5, date = answers[row["url"]]
            assert status == row["status"]
            assert date == warc_date(clock.now())
            if row["md5"] is not None:
                assert md5 == row["md5"]


def test_xyleme_crawl_archives_unless_switched_off(tmp_path):
    settings = SimWebSettings(hosts=1, pages=30, seed=5).without_faults()
    with SimWebProcess(settings, frozen=True) as web:
        for enabled in (True, False):
            repo = make_repository(tmp_path / f"repo-{enabled}")
            if not enabled:
                (repo / "xyleme.toml").write_text("[archive]\nenabled = false\ncrawl_log = false\n")
            arguments = ["--repo", str(repo), "crawl", web.seed_urls[0], "--domain", DOMAIN]
            arguments += ["--delay", "0", "--simweb-port", str(web.port), "--max-pages", "10"]
            result = CliRunner().invoke(cli, arguments)
            assert result.exit_code == 0, result.output
            archived = sorted(path.name for path in (repo / "archive").glob("*"))
            if enabled:
                assert LOG_NAME in archived and any(n.endswith(".warc.gz") for n in archived)
            else:
                assert archived == []
