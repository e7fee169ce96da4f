"""The loader against the real metadata manager, and the `xyleme load` command."""

from __future__ import annotations

import pytest

from loader import Check, Loader, LoadOutcome
from metadata import FetchResult, LoadStatus, ManualClock, Metadata, PageType
from tests.loader_fakes import FakeFetcher, xyleme

DOC = "http://XML.test:80/books/./doc.xml"  # canonicalised by the metadata manager
DTD = "http://xml.test/books/book.dtd"
BOOK_DTD = b"<!ELEMENT book (title)><!ELEMENT title (#PCDATA)>"
BOOK = b'<!DOCTYPE book SYSTEM "book.dtd"><book><title>T</title></book>'


@pytest.fixture
def md(tmp_path):
    with Metadata.create(tmp_path / "metadata.db", clock=ManualClock(1000.0)) as metadata:
        yield metadata


@pytest.fixture
def loader(tmp_path, md):
    return Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(1000.0))


DOC_ONE = "http://xml.test/books/one.xml"


def fetched(md, url: str) -> int:
    """What the crawler does before handing an XML page over: record the fetch."""
    url_id = md.id_for(url)
    md.record_fetch(FetchResult(url_id, 1000.0, PageType.XML, status=200, md5="0" * 32))
    return url_id


def test_links_and_dependencies_reach_link_data(loader, md):
    url_id = fetched(md, DOC)
    body = (
        b'<r xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="A.xml"/><b href="/c"/></r>'
    )
    result = loader.load(url_id, md.url_of(url_id), body, {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED
    assert md.urls_of(md.children(url_id)) == [
        "http://xml.test/books/A.xml",
        "http://xml.test/c",
    ]
    assert md.status(url_id) == (LoadStatus.LOADED, "version 1, valid")
    assert md.page(url_id).page_type is PageType.XML


def test_a_feeds_rel_self_is_no_link_whatever_its_spelling(loader, md):
    url_id = fetched(md, DOC)
    body = b'<feed xmlns="http://www.w3.org/2005/Atom"><link rel="self" href="doc.xml"/>'
    body += b'<link rel="self" href="HTTP://xml.TEST/books/doc.xml"/><link href="next.xml"/></feed>'
    result = loader.load(url_id, DOC, body, {}, 1000.0)
    assert md.urls_of(md.children(url_id)) == ["http://xml.test/books/next.xml"]
    assert result.links == 1


def test_links_the_crawl_refuses_are_rejected_never_children(tmp_path, md):
    """An off-site DocBook ``ulink`` (or any link the crawl's admission refuses) gets no
    URL-Id and no place in Link-Data: it is a rejected link with its reason, recorded once."""

    def refusal(url: str) -> str | None:
        return None if url.startswith("http://xml.test/") else "out of scope"

    loader = Loader(
        tmp_path / "documents", md, FakeFetcher(), ManualClock(1000.0), link_refusal=refusal
    )
    body = b'<article><ulink url="http://other.test/x.html"/><ulink url="next.xml"/></article>'
    for name in ("one.xml", "two.xml"):
        url_id = fetched(md, f"http://xml.test/books/{name}")
        result = loader.load(url_id, md.url_of(url_id), body, {}, 1000.0)
        assert md.urls_of(md.children(url_id)) == ["http://xml.test/books/next.xml"]
        assert result.links == 1
    assert md.id_for("http://other.test/x.html", create=False) is None
    rejected = [(r.url, r.reason, r.referrer) for r in md.rejected()]
    assert rejected == [("http://other.test/x.html", "out of scope", md.id_for(DOC_ONE))]


def test_dtd_round_trip_through_status_data(loader, md):
    url_id = fetched(md, DOC)
    waiting = loader.load(url_id, md.url_of(url_id), BOOK, {}, 1000.0)
    assert waiting.outcome is LoadOutcome.WAITING
    dtd_id = md.id_for(DTD, create=False)
    assert md.waiting_on(dtd_id) == [url_id]
    assert md.status(url_id)[0] is LoadStatus.WAITING_DTD
    assert loader.fetcher.requests == [(DTD, url_id)]

    arrived = loader.load(dtd_id, DTD, BOOK_DTD, {}, 1001.0)
    assert arrived.outcome is LoadOutcome.DEPENDENCY
    assert arrived.notes == ("http://xml.test/books/doc.xml: stored",)
    assert md.page(dtd_id).page_type is PageType.DTD
    assert md.waiting_on(dtd_id) == []
    assert md.status(url_id)[0] is LoadStatus.LOADED
    assert list(md.dependencies(url_id)) == [dtd_id]
    assert list(md.children(url_id)) == []
    assert loader.repository.latest(url_id).validity.dtd is Check.VALID


def test_failure_is_an_error_row_with_its_reason(loader, md):
    url_id = fetched(md, DOC)
    result = loader.load(url_id, md.url_of(url_id), b"<r>\n<a></r>", {}, 1000.0)
    page = md.page(url_id)
    assert page.page_type is PageType.ERROR
    assert page.reason == result.reason
    assert "line 2, column" in page.reason
    assert md.status(url_id) == (LoadStatus.FAILED, result.reason)


def test_cli_load_parks_then_finishes_a_document(tmp_path):
    repo = tmp_path / "warehouse"
    assert xyleme(tmp_path, "init", str(repo)).returncode == 0
    (tmp_path / "doc.xml").write_bytes(BOOK)
    (tmp_path / "book.dtd").write_bytes(BOOK_DTD)
    first = xyleme(repo, "load", "http://xml.test/books/doc.xml", str(tmp_path / "doc.xml"))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        f"http://xml.test/books/doc.xml: waiting: waiting for {DTD}",
        f"  needs {DTD}: load it with `xyleme load {DTD} FILE`",
    ]
    second = xyleme(repo, "load", DTD, str(tmp_path / "book.dtd"))
    assert second.stdout.splitlines()[1] == "  http://xml.test/books/doc.xml: stored"
    assert xyleme(repo, "doc", "http://XML.test:80/books/doc.xml").stdout == BOOK.decode()


def test_cli_load_reports_a_refusal(tmp_path):
    repo = tmp_path / "warehouse"
    xyleme(tmp_path, "init", str(repo))
    (tmp_path / "bad.xml").write_bytes(b"<r><a></r>")
    done = xyleme(repo, "load", "http://xml.test/bad.xml", str(tmp_path / "bad.xml"))
    assert done.returncode == 1
    assert "failed: Opening and ending tag mismatch" in done.stdout
    assert "Traceback" not in done.stderr


def test_worker_threads_share_one_loader(loader, md):
    from concurrent.futures import ThreadPoolExecutor

    urls = [f"http://xml.test/t/{n}.xml" for n in range(40)]
    ids = md.ids_for(urls)
    bodies = [b'<r><a href="%d.xml"/></r>' % (n + 1) for n in range(40)]
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(lambda job: loader.load(*job, {}, 5.0), zip(ids, urls, bodies, strict=True))
        )
    assert {r.outcome for r in results} == {LoadOutcome.STORED}
    assert len(list(loader.repository.changes())) == 40
    assert all(md.status(i)[0] is LoadStatus.LOADED for i in ids)
    assert md.urls_of(md.children(ids[0])) == ["http://xml.test/t/1.xml"]


def test_cli_reports_a_corrupt_version_store(tmp_path):
    repo = tmp_path / "warehouse"
    xyleme(tmp_path, "init", str(repo))
    (tmp_path / "doc.xml").write_bytes(b"<r/>")
    assert (
        xyleme(repo, "load", "http://xml.test/doc.xml", str(tmp_path / "doc.xml")).returncode == 0
    )
    (repo / "documents" / "versions.db").write_bytes(b"not a database" * 512)
    for wal in (repo / "documents").glob("versions.db-*"):
        wal.unlink()
    for command in (["doc", "http://xml.test/doc.xml"], ["changes", "--since", "0"]):
        ran = xyleme(repo, *command)
        assert ran.returncode == 1
        assert "unreadable version store" in ran.stderr
