"""Loading well-formed, malformed, badly encoded, oversize and deep documents."""

from __future__ import annotations

import codecs
import threading

import pytest
from lxml import etree

from loader import PARSE_LOCK, Check, Loader, LoaderSettings, LoadOutcome
from loader.dependencies import CacheResolver
from metadata import LoadStatus, ManualClock, PageType
from tests.loader_fakes import FakeFetcher, FakeMetadata
from xyleme.crawler.htmlparse import extract_links

URL = "http://xml.test/catalog.xml"


@pytest.fixture
def md():
    return FakeMetadata()


def make_loader(tmp_path, md, **settings):
    return Loader(
        tmp_path / "documents", md, FakeFetcher(), ManualClock(1000.0), LoaderSettings(**settings)
    )


def load(loader, md, body, url=URL, headers=None, at=1000.0):
    return loader.load(md.id_for(url), url, body, headers or {}, at)


def test_well_formed_document_is_stored_as_xml(tmp_path, md):
    loader = make_loader(tmp_path, md)
    result = load(loader, md, b"<catalog><item>pen</item></catalog>")
    assert result.outcome is LoadOutcome.STORED
    assert result.version == 1
    assert result.validity.dtd is Check.NONE
    assert loader.repository.read(result.url_id) == b"<catalog><item>pen</item></catalog>"
    assert md.types[result.url_id] == (PageType.XML, None)
    assert md.status_rows[result.url_id][0] is LoadStatus.LOADED


def test_malformed_document_is_error_naming_line_and_column(tmp_path, md):
    loader = make_loader(tmp_path, md)
    result = load(loader, md, b"<catalog>\n  <item>pen</catalog>")
    assert result.outcome is LoadOutcome.FAILED
    assert "line 2, column" in result.reason
    assert "mismatch" in result.reason
    assert md.types[result.url_id] == (PageType.ERROR, result.reason)
    assert md.status_rows[result.url_id] == (LoadStatus.FAILED, result.reason)


def test_recovery_after_a_failure_types_the_page_xml_again(tmp_path, md):
    loader = make_loader(tmp_path, md)
    load(loader, md, b"<r>")
    assert md.types[1][0] is PageType.ERROR
    load(loader, md, b"<r/>", at=2000.0)
    assert md.types[1] == (PageType.XML, None)


def test_return_to_the_stored_content_after_a_failure_clears_the_error(tmp_path, md):
    loader = make_loader(tmp_path, md)
    load(loader, md, b"<r>good</r>")
    load(loader, md, b"<r>bad", at=2000.0)
    again = load(loader, md, b"<r>good</r>", at=3000.0)
    assert again.outcome is LoadOutcome.UNCHANGED
    assert md.types[1] == (PageType.XML, None)
    assert md.status_rows[1] == (LoadStatus.LOADED, "version 1, unchanged")


def test_bad_refresh_keeps_the_previous_good_version(tmp_path, md):
    loader = make_loader(tmp_path, md)
    good = load(loader, md, b"<catalog><item>pen</item></catalog>")
    bad = load(loader, md, b"<catalog><item>", at=2000.0)
    assert bad.outcome is LoadOutcome.FAILED
    document = loader.repository.document(good.url_id)
    assert [v.version for v in document.versions] == [1]
    assert loader.repository.read(good.url_id) == b"<catalog><item>pen</item></catalog>"


def test_http_charset_decodes_a_latin1_body(tmp_path, md):
    loader = make_loader(tmp_path, md)
    body = "<r>café</r>".encode("latin-1")
    result = load(loader, md, body, headers={"Content-Type": "text/xml; charset=ISO-8859-1"})
    assert result.outcome is LoadOutcome.STORED


def test_latin1_bytes_without_charset_are_an_encoding_error(tmp_path, md):
    loader = make_loader(tmp_path, md)
    result = load(loader, md, "<r>café</r>".encode("latin-1"))
    assert result.outcome is LoadOutcome.FAILED
    assert result.reason.startswith("encoding error")
    assert "line 1, column" in result.reason


def test_unknown_http_charset_is_refused_by_name(tmp_path, md):
    loader = make_loader(tmp_path, md)
    result = load(loader, md, b"<r/>", headers={"content-type": "application/xml; charset=klingon"})
    assert result.outcome is LoadOutcome.FAILED
    assert "unknown encoding 'klingon' in the HTTP charset" in result.reason


def test_byte_order_mark_wins_over_http_charset(tmp_path, md):
    loader = make_loader(tmp_path, md)
    body = codecs.BOM_UTF16_LE + "<r>ŝ</r>".encode("utf-16-le")
    result = load(loader, md, body, headers={"Content-Type": "text/xml; charset=iso-8859-1"})
    assert result.outcome is LoadOutcome.STORED


def test_declared_encoding_is_used(tmp_path, md):
    loader = make_loader(tmp_path, md)
    body = '<?xml version="1.0" encoding="ISO-8859-1"?><r>café</r>'.encode("latin-1")
    assert load(loader, md, body).outcome is LoadOutcome.STORED


def test_oversize_document_is_refused_without_parsing(tmp_path, md):
    loader = make_loader(tmp_path, md, max_document_bytes=100, stream_threshold_bytes=50)
    result = load(loader, md, b"<r>" + b"x" * 200 + b"</r>")
    assert result.outcome is LoadOutcome.FAILED
    assert "over the limit of 100" in result.reason


def test_too_deep_document_is_refused(tmp_path, md):
    loader = make_loader(tmp_path, md, max_depth=10)
    result = load(loader, md, b"<a>" * 11 + b"</a>" * 11)
    assert result.outcome is LoadOutcome.FAILED
    assert "deeper than 10" in result.reason
    assert load(loader, md, b"<a>" * 10 + b"</a>" * 10, url="http://xml.test/ok.xml").version == 1


def test_default_depth_limit_is_libxml2s(tmp_path, md):
    loader = make_loader(tmp_path, md)
    result = load(loader, md, b"<a>" * 300 + b"</a>" * 300)
    assert result.outcome is LoadOutcome.FAILED
    assert result.reason.startswith("elements nested deeper than 256 (line 1, column")


def test_too_deep_streamed_document_is_refused(tmp_path, md):
    loader = make_loader(tmp_path, md, max_depth=10, stream_threshold_bytes=64)
    result = load(loader, md, b"<a>" * 30 + b"</a>" * 30)
    assert result.outcome is LoadOutcome.FAILED
    assert "deeper than 10" in result.reason


def test_streamed_document_is_stored_whole(tmp_path, md):
    loader = make_loader(tmp_path, md, stream_threshold_bytes=1024, stream_chunk_bytes=100)
    body = (
        b"<list>" + b"".join(b'<i href="/p%d.xml">%d</i>' % (n, n) for n in range(500)) + b"</list>"
    )
    result = load(loader, md, body)
    assert result.outcome is LoadOutcome.STORED
    assert loader.repository.read(result.url_id) == body
    assert result.links == 500


def test_streamed_malformed_document_names_the_line(tmp_path, md):
    loader = make_loader(tmp_path, md, stream_threshold_bytes=64, stream_chunk_bytes=16)
    body = b"<list>\n" + b"<i>x</i>\n" * 20 + b"<i>oops</list>"
    result = load(loader, md, body)
    assert result.outcome is LoadOutcome.FAILED
    assert "line 22" in result.reason


def test_spooled_file_body_is_loaded(tmp_path, md):
    loader = make_loader(tmp_path, md)
    spooled = tmp_path / "spool.xml"
    spooled.write_bytes(b"<r><a href='x.xml'/></r>")
    result = load(loader, md, spooled)
    assert result.outcome is LoadOutcome.STORED
    assert md.links_of(result.url_id) == ["http://xml.test/x.xml"]
    assert spooled.exists()  # the crawler owns its spool file


def _loader_with_a_modular_dtd(tmp_path, md):
    """A loader whose cache holds a DTD that loads a module (as XHTML's DTD does)."""
    loader = make_loader(tmp_path, md)
    load(loader, md, b'<!ENTITY x "y">', url="http://xml.test/mod.ent")
    load(
        loader,
        md,
        b'<!ENTITY % mod SYSTEM "mod.ent"> %mod; <!ELEMENT r ANY>',
        url="http://xml.test/a.dtd",
    )
    return loader


def test_a_parse_in_another_thread_cannot_take_the_resolver(tmp_path, md, monkeypatch):
    """lxml swaps libxml2's process-wide entity loader around each parse: a parse that began
    earlier in another thread and ended during the loader's put libxml2's own loader back,
    and the loader's next DTD module was refused as a network load (the realistic site's
    XHTML pages, beside the crawler's HTML parser). Every parse holds PARSE_LOCK: the
    loader's waits for the other to end, and is right at its first try."""
    loader = _loader_with_a_modular_dtd(tmp_path, md)
    began, other_done = threading.Event(), threading.Event()

    class Slow(etree.Resolver):
        def resolve(self, system_url, public_id, context):
            began.set()
            other_done.wait(0.3)  # long enough for the loader's parse to try to begin
            return self.resolve_string(b"<!ELEMENT o ANY>", context)

    def other_parse() -> None:  # begins before the loader's parse
        parser = etree.XMLParser(load_dtd=True, no_network=True)
        parser.resolvers.add(Slow())
        with PARSE_LOCK:
            etree.fromstring(b'<!DOCTYPE o SYSTEM "http://other.test/o.dtd"><o/>', parser)
        other_done.set()

    answer = CacheResolver.resolve
    asked = []

    def resolve(self, system_url, public_id, context):
        asked.append(system_url)
        if system_url == "http://xml.test/a.dtd":  # unlocked, the other parse ended here
            assert other_done.wait(10), "the other parse never ended"
        return answer(self, system_url, public_id, context)

    monkeypatch.setattr(CacheResolver, "resolve", resolve)
    other = threading.Thread(target=other_parse)
    other.start()
    assert began.wait(10), "the other parse never began"
    result = load(loader, md, b'<!DOCTYPE r SYSTEM "a.dtd"><r>&x;</r>')
    other.join(10)
    assert result.outcome is LoadOutcome.STORED, result.reason
    assert result.validity.dtd is Check.VALID
    # asked by the document's one parse (nothing retried), then once more when the loader
    # keeps the DTD for the documents after it (loader.dtdreuse)
    assert asked.count("http://xml.test/a.dtd") == 2


def test_the_crawlers_html_parses_beside_the_loader_never_break_its_dtd(tmp_path, md):
    """The crawler parses HTML in its own thread while the loader validates against a
    modular DTD: every document is stored valid."""
    loader = _loader_with_a_modular_dtd(tmp_path, md)
    page = b"<html><body>" + b'<p><a href="/p%d">x</a></p>' * 200 + b"</body></html>"
    stop = threading.Event()

    def crawl() -> None:
        while not stop.is_set():
            extract_links(page, "http://html.test/")

    crawler = threading.Thread(target=crawl)
    crawler.start()
    try:
        results = [
            load(loader, md, b'<!DOCTYPE r SYSTEM "a.dtd"><r>&x;</r>', url=f"{URL}{n}")
            for n in range(60)
        ]
    finally:
        stop.set()
        crawler.join(10)
    assert {(r.outcome, r.validity.dtd) for r in results} == {(LoadOutcome.STORED, Check.VALID)}
