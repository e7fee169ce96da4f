"""WARC files of a crawl: read back by warcio, one request/response pair per exchange,
revisits for a 304 and an unchanged body, rotation, recovery after a crash, archive off."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import signal

from warcio.archiveiterator import ArchiveIterator

from metadata import ManualClock
from tests.archive_fixtures import BIG, archived_crawl, md5
from xyleme.archive import Archive, ArchiveSettings, Exchange
from xyleme.archive.records import IDENTICAL, NOT_MODIFIED
from xyleme.archive.warcfiles import WarcFiles, recover, warc_files


def read_records(folder):
    """Every record of every WARC file, as dicts (warcio reads the files, digests checked)."""
    records = []
    for path in warc_files(folder):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                payload = record.content_stream().read()
                headers = record.rec_headers
                records.append(
                    {
                        "type": record.rec_type,
                        "url": headers.get_header("WARC-Target-URI"),
                        "id": headers.get_header("WARC-Record-ID"),
                        "status": record.http_headers.get_statuscode()
                        if record.http_headers
                        else None,
                        "payload": payload,
                        "profile": headers.get_header("WARC-Profile"),
                        "refers_to": headers.get_header("WARC-Refers-To"),
                        "concurrent": headers.get_header("WARC-Concurrent-To"),
                        "digest": headers.get_header("WARC-Payload-Digest"),
                        "http": record.http_headers,
                        "file": path.name,
                        "ip": headers.get_header("WARC-IP-Address"),
                    }
                )
    return records


async def test_every_exchange_is_a_request_and_a_response_read_back_by_warcio(site, md, tmp_path):
    urls, _ = await archived_crawl(site, md, tmp_path / "archive")
    records = read_records(tmp_path / "archive")
    assert not list((tmp_path / "archive").glob("*.open"))
    answers = [r for r in records if r["type"] in ("response", "revisit")]
    requests = [r for r in records if r["type"] == "request"]
    assert records[0]["type"] == "warcinfo"
    # each answer has its request, which names it
    assert sorted(r["concurrent"] for r in requests) == sorted(r["id"] for r in answers)
    first = {r["url"]: r for r in answers if r["type"] == "response"}
    assert first[urls["home"]]["status"] == "200"
    assert first[urls["same"]]["payload"] == b"<same/>"
    assert first[urls["same"]]["ip"] == "127.0.0.1"
    assert first[urls["big"]]["payload"] == BIG  # spooled to a file, streamed into the record
    assert first[urls["moved"]]["status"] == "301"
    assert first[urls["missing"]]["status"] == "404"
    assert first[urls["image"]]["payload"].startswith(b"\x89PNG")  # a resource: kept too
    assert any(r["url"].endswith("/robots.txt") for r in answers)
    # a decoded body says so, Common Crawl's way
    gz = first[urls["gzip"]]
    assert gz["payload"] == b"<gz/>"
    assert gz["http"].get_header("X-Crawler-Content-Encoding") == "gzip"
    assert gz["http"].get_header("Content-Length") == "5"
    # the request record holds the headers the crawler sent
    sent = next(r for r in requests if r["url"] == urls["same"])
    assert sent["http"].get_header("User-Agent")
    assert gzip.decompress(gzip.compress(b"")) == b""


async def test_a_304_and_an_unchanged_body_are_revisits_of_the_first_response(site, md, tmp_path):
    urls, state = await archived_crawl(site, md, tmp_path / "archive")
    records = read_records(tmp_path / "archive")
    by_id = {r["id"]: r for r in records}
    revisits = {r["url"]: r for r in records if r["type"] == "revisit"}
    assert set(revisits) == {urls["etag"], urls["same"], urls["big"], urls["gzip"]}
    assert revisits[urls["etag"]]["profile"] == NOT_MODIFIED
    assert revisits[urls["etag"]]["status"] == "304"
    for name in ("same", "big", "gzip"):
        revisit = revisits[urls[name]]
        original = by_id[revisit["refers_to"]]
        assert revisit["profile"] == IDENTICAL
        assert original["type"] == "response" and original["url"] == urls[name]
        assert revisit["digest"] == original["digest"]
    original = by_id[revisits[urls["etag"]]["refers_to"]]
    assert original["payload"] == b"<tagged/>"
    changed = [r for r in records if r["url"] == urls["changing"] and r["type"] == "response"]
    assert [r["payload"] for r in changed] == [b"<doc>first</doc>", state.changing]
    assert md5(changed[-1]["payload"]) == md.page_by_url(urls["changing"]).md5


def test_files_rotate_by_size_and_each_starts_with_warcinfo(tmp_path):
    files = WarcFiles(tmp_path, max_bytes=4096, level=6, info={"software": "test"})
    for number in range(12):
        body = os.urandom(1000)  # incompressible: each record ~1 KB gzipped
        files.write(
            files.builder.create_warc_record(
                f"http://a.test/{number}", "resource", payload=io.BytesIO(body), length=len(body)
            )
        )
    files.close()
    paths = warc_files(tmp_path)
    assert len(paths) >= 3
    urls = []
    for path in paths:
        assert path.stat().st_size < 4096 + 1500  # rotated once past the size
        with path.open("rb") as stream:
            records = list(ArchiveIterator(stream))
        assert records[0].rec_type == "warcinfo"
        urls += [r.rec_headers.get_header("WARC-Target-URI") for r in records[1:]]
    assert urls == [f"http://a.test/{number}" for number in range(12)]  # in order, none lost


async def test_archive_off_writes_nothing(site, md, tmp_path):
    await archived_crawl(site, md, tmp_path / "archive", enabled=False, crawl_log=False)
    assert not (tmp_path / "archive").exists() or not any((tmp_path / "archive").iterdir())


async def test_a_file_cut_by_a_crash_is_recovered_to_its_whole_records(site, md, tmp_path):
    folder = tmp_path / "archive"
    await archived_crawl(site, md, folder)
    path = warc_files(folder)[-1]
    whole = path.read_bytes()
    cut = folder / (path.name + ".open")
    cut.write_bytes(whole[:-7])  # the last record loses its end, as under kill -9
    path.unlink()
    (recovered,) = recover(folder)
    assert recovered == path and not cut.exists()
    records = list(ArchiveIterator(recovered.open("rb")))
    assert len(records) >= 1 and len(recovered.read_bytes()) < len(whole)


def _exchange(number: int) -> Exchange:
    return Exchange(
        url=f"http://a.test/{number}",
        method="GET",
        request_headers=[("User-Agent", "test")],
        status=200,
        reason="OK",
        protocol="HTTP/1.1",
        response_headers=[("Content-Type", "text/xml")],
        body=b"<a/>",
        size=4,
        md5=md5(b"<a/>"),
    )


async def test_a_stalled_writer_makes_the_fetchers_wait_never_the_event_loop(tmp_path):
    archive = Archive(tmp_path, ArchiveSettings(queue_records=2), ManualClock(0.0))
    archive.open()
    os.kill(archive._child.pid, signal.SIGSTOP)  # a disk that does not answer
    try:
        for number in range(2):
            await asyncio.wait_for(archive.exchange(_exchange(number)), 10)
        third = asyncio.create_task(archive.exchange(_exchange(2)))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)  # the loop runs on
            ticks += 1
        assert ticks == 20 and not third.done()  # bounded: the third waits for the writer
    finally:
        os.kill(archive._child.pid, signal.SIGCONT)
    await asyncio.wait_for(third, 30)
    for number in range(3, 20):
        await asyncio.wait_for(archive.exchange(_exchange(number)), 30)
    await asyncio.wait_for(archive.close(), 30)
    assert len([r for r in read_records(tmp_path) if r["type"] == "response"]) == 20


async def test_a_broken_archive_costs_records_never_the_crawl(tmp_path, capfd):
    (tmp_path / "revisits.sqlite").mkdir()  # the index cannot be opened
    archive = Archive(tmp_path, ArchiveSettings(queue_records=1), ManualClock(0.0))
    archive.open()
    for number in range(5):  # each put needs the previous one taken: none may hang
        await asyncio.wait_for(archive.exchange(_exchange(number)), 10)
    await asyncio.wait_for(archive.close(), 10)
    assert "nothing will be archived" in capfd.readouterr().err
    assert not warc_files(tmp_path)


async def test_a_writer_that_dies_frees_the_fetchers(tmp_path):
    archive = Archive(tmp_path, ArchiveSettings(queue_records=1), ManualClock(0.0))
    archive.open()
    archive._child.kill()
    for number in range(5):
        await asyncio.wait_for(archive.exchange(_exchange(number)), 10)
    await asyncio.wait_for(archive.close(), 10)
