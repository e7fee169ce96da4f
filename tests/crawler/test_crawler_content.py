"""What a body is (issue 16, "Kind by Content-Type"): the table of Content-Type and body to
kind, the suffix deny list, and resources recorded (type, size, MD5) but never loaded."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader import LoadOutcome, LoadResult
from metadata import PAGE_TYPE_CODE, FetchResult, PageType
from tests import crawler_fixtures
from tests.crawler_site import Page
from tests.loader_fakes import OneByOneSink
from xyleme.config import ConfigError, config_from_mapping
from xyleme.crawler import CrawlerSettings, Level
from xyleme.crawler.content import classify, declared_kind, forbids_sniffing, parse_mime_type
from xyleme.crawler.denylist import SuffixDenyList

make_crawler = crawler_fixtures.make_crawler

HTML, XML, DTD, RESOURCE = PageType.HTML, PageType.XML, PageType.DTD, PageType.RESOURCE
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
UTF16_XML = "\ufeff<?xml version='1.0' encoding='UTF-16'?><a/>".encode("utf-16-le")


@pytest.mark.parametrize(
    ("content_type", "url", "head", "page_type", "media"),
    [
        # the declared type decides
        ("text/html; charset=utf-8", "http://a/x", b"", HTML, "text/html"),
        ("TEXT/HTML", "http://a/x.xml", b"<?xml version='1.0'?><catalog/>", HTML, "text/html"),
        ("text/html", "http://a/x", b"<!DOCTYPE html><p>", HTML, "text/html"),
        ("application/xhtml+xml", "http://a/x.html", b"<html/>", XML, "application/xhtml+xml"),
        ("text/xml", "http://a/x", b"<!DOCTYPE html><p>", XML, "text/xml"),
        ("application/xml", "http://a/x", b"", XML, "application/xml"),
        ("application/atom+xml", "http://a/x", b"", XML, "application/atom+xml"),
        ("image/svg+xml", "http://a/x.svg", b"", XML, "image/svg+xml"),
        ("application/vnd.mozilla.xul+xml", "http://a/x", b"", XML,
         "application/vnd.mozilla.xul+xml"),
        ("application/xml-dtd", "http://a/x", b"", DTD, "application/xml-dtd"),
        ("application/xml-external-parsed-entity", "http://a/x", b"", DTD,
         "application/xml-external-parsed-entity"),
        ("image/png", "http://a/x.html", b"<html>", RESOURCE, "image/png"),
        ("text/css", "http://a/style.css", b"body{}", RESOURCE, "text/css"),
        ("application/javascript", "http://a/x.js", b"var a;", RESOURCE, "application/javascript"),
        ("application/json", "http://a/x", b"{}", RESOURCE, "application/json"),
        ("application/pdf", "http://a/x", b"%PDF-1.4", RESOURCE, "application/pdf"),
        # a feed served as HTML (the standard's "mislabeled feed")
        ("text/html", "http://a/x", b"<?xml version='1.0'?>\n<!-- c --><rss version='2.0'>",
         XML, "application/rss+xml"),
        ("text/html", "http://a/x", b"\xef\xbb\xbf<feed xmlns='http://www.w3.org/2005/Atom'>",
         XML, "application/atom+xml"),
        ("text/html", "http://a/x",
         b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' "
         b"xmlns='http://purl.org/rss/1.0/'>", XML, "application/rss+xml"),
        ("text/html", "http://a/x", b"<rdf:RDF xmlns:rdf='urn:other'>", HTML, "text/html"),
        # missing, invalid or generic: sniffed
        (None, "http://a/x", b"  <?xml version='1.0'?><a/>", XML, "text/xml"),
        ("", "http://a/x", b"\xef\xbb\xbf<?xml version='1.0'?><a/>", XML, "text/xml"),
        ("nonsense", "http://a/x", b"<!DOCTYPE HTML>\n<p>", HTML, "text/html"),
        (None, "http://a/x", UTF16_XML, XML, "text/xml"),
        ("unknown/unknown", "http://a/x", b"\t<HTML>", HTML, "text/html"),
        ("*/*", "http://a/x", b"<table border=1>", HTML, "text/html"),
        ("application/octet-stream", "http://a/x", b"<!DOCTYPE html><p>", HTML, "text/html"),
        ("application/octet-stream", "http://a/x", b"<?xml version='1.0'?>", XML, "text/xml"),
        ("application/octet-stream", "http://a/x", PNG, RESOURCE, "image/png"),
        ("binary/octet-stream", "http://a/x", b"<?xml version='1.0'?>", XML, "text/xml"),
        ("application/octet-stream", "http://a/x", b"GIF89a\x01\x00", RESOURCE, "image/gif"),
        ("application/octet-stream", "http://a/x", b"PK\x03\x04\x14\x00", RESOURCE,
         "application/zip"),
        ("application/octet-stream", "http://a/x", b"\x00\x01\x02\x03", RESOURCE,
         "application/octet-stream"),
        (None, "http://a/x", b"RIFF\x24\x00\x00\x00WEBPVP8 ", RESOURCE, "image/webp"),
        (None, "http://a/x", b"%PDF-1.7\n", RESOURCE, "application/pdf"),
        (None, "http://a/x", b"just some words", RESOURCE, "text/plain"),
        (None, "http://a/x", b"<htmlfoo>", RESOURCE, "text/plain"),  # no tag-terminating byte
        # text/plain: the standard's text-or-binary rule first
        ("text/plain", "http://a/x", b"just text", RESOURCE, "text/plain"),
        ("text/plain", "http://a/x", PNG, RESOURCE, "image/png"),
        ("text/plain", "http://a/x", b"\x00\x00binary", RESOURCE, "application/octet-stream"),
        ("text/plain; charset=iso-8859-1", "http://a/f.rss", b"<?xml version='1.0'?><rss>",
         XML, "text/xml"),
        ("text/plain", "http://a/x", b"<html><body>", HTML, "text/html"),
        # DTDs, which browsers never meet
        ("text/plain", "http://a/doc.dtd", b"<!ELEMENT a ANY>", DTD, "application/xml-dtd"),
        ("application/octet-stream", "http://a/docbook.mod", b"<!-- module -->", DTD,
         "application/xml-dtd"),
        ("application/octet-stream", "http://a/song.mod", b"M.K.\x00\x01\x02", RESOURCE,
         "application/octet-stream"),  # an Amiga music module, not a DocBook one
        (None, "http://a/x", b"<?xml encoding='utf-8'?>\n<!-- a DTD -->\n<!ENTITY % p 'x'>",
         DTD, "application/xml-dtd"),
        ("text/plain", "http://a/x", b"  %isolat1;\n<!ATTLIST a b CDATA #IMPLIED>", DTD,
         "application/xml-dtd"),
    ],
)  # fmt: skip
def test_kind_by_content_type_then_sniffing(content_type, url, head, page_type, media):
    kind = classify(content_type, url, head)
    assert (kind.page_type, kind.media) == (page_type, media)


def test_nosniff_keeps_the_declared_type():
    xml = b"<?xml version='1.0'?><a/>"
    assert classify("text/plain", "http://a/x", xml, nosniff=True).page_type is RESOURCE
    assert classify("application/octet-stream", "http://a/x", xml, nosniff=True).media == (
        "application/octet-stream"
    )
    feed = b"<rss version='2.0'>"
    assert classify("text/html", "http://a/x", feed, nosniff=True).page_type is HTML
    # no type at all: sniffed, but without the scriptable signatures (the standard)
    assert classify(None, "http://a/x", b"<html>", nosniff=True).media == "text/plain"
    assert declared_kind("text/plain", nosniff=True).page_type is RESOURCE
    assert forbids_sniffing("nosniff") and not forbids_sniffing("sniff, nosniff")


def test_declared_kind_needs_no_body_only_for_decided_types():
    assert declared_kind("image/jpeg").page_type is RESOURCE
    assert declared_kind("application/rss+xml").page_type is XML
    for generic in (None, "", "text/plain", "text/html", "*/*", "application/octet-stream"):
        assert declared_kind(generic) is None, generic


def test_mime_types_are_parsed_as_the_standard_says():
    parsed = parse_mime_type('text/html;charset="shift_jis";charset=utf-8;x="a;b\\"c"')
    assert parsed.essence == "text/html"
    assert parsed.params == {"charset": "shift_jis", "x": 'a;b"c'}
    for bad in ("text", "/html", "text/", "te xt/html", "text/html tail", None, ""):
        assert parse_mime_type(bad) is None, bad


def test_the_default_deny_list_is_binary_media_only_and_configurable():
    settings = CrawlerSettings()
    deny = SuffixDenyList(frozenset(settings.denied_suffixes))
    for binary in ("a.jpg", "a.PNG", "a.mp4", "a.zip", "a.woff2", "a.exe", "a.pdf", "a.docx"):
        assert deny.refusal(f"http://a.example/{binary}") is not None, binary
    for maybe_document in ("a.css", "a.js", "a.svg", "a.xml", "a.php", "a.txt", "a", "a.json"):
        assert deny.refusal(f"http://a.example/{maybe_document}") is None, maybe_document
    assert CrawlerSettings(denied_suffixes=(".JPG", "png")).denied_suffixes == ("jpg", "png")
    with pytest.raises(ValueError, match="not a file suffix"):
        CrawlerSettings(denied_suffixes=("a/b",))
    config = config_from_mapping({"crawler": {"denied_suffixes": ["gif"]}})
    assert config.crawler.denied_suffixes == ("gif",)
    with pytest.raises(ConfigError, match="denied_suffixes"):
        config_from_mapping({"crawler": {"denied_suffixes": "gif"}})


# ---------------------------------------------------------------------- crawls


class RecordingSink(OneByOneSink):
    """The loader's DocumentSink: keeps what it is handed."""

    def __init__(self):
        self.loaded: list[str] = []
        self.headers: dict[str, dict[str, str]] = {}

    def load(self, url_id, url, body, headers, fetched_at):
        self.loaded.append(url)
        self.headers[url] = headers
        return LoadResult(url_id, LoadOutcome.STORED)

    def dependency_failed(self, url_id, url, reason):
        return []


async def test_resources_are_recorded_with_type_size_and_md5_and_never_loaded(site, md):
    css = b"body { color: red }"
    script = b"console.log('x');"
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>"
    site.add("a.test", "/style.css", Page(css, 200, "text/css"))
    site.add("a.test", "/app.js", Page(script, 200, "application/javascript"))
    site.add("a.test", "/logo", Page(PNG, 200, "application/octet-stream"))
    site.add("a.test", "/raw", Page(b"\x00\x01\x02binary", 200, ""))
    site.add("a.test", "/notes.txt", Page(b"plain words", 200, "text/plain"))
    site.add("a.test", "/drawing.svg", Page(svg, 200, "image/svg+xml"))
    home = site.html(
        "a.test",
        "/",
        ["/style.css", "/app.js", "/logo", "/raw", "/notes.txt", "/drawing.svg", "/photo.jpg"],
    )
    sink = RecordingSink()
    crawler = make_crawler(md, sink=sink)
    crawler.submit(home)
    stats = await crawler.run()

    expected = {
        "/style.css": ("text/css", css),
        "/app.js": ("application/javascript", script),
        "/logo": ("image/png", PNG),
        "/raw": ("application/octet-stream", b"\x00\x01\x02binary"),
        "/notes.txt": ("text/plain", b"plain words"),
    }
    for path, (media, body) in expected.items():
        page = md.page_by_url(site.url("a.test", path))
        assert page.page_type is RESOURCE, path
        assert page.content_type == media, path
        assert (page.size, page.md5) == (len(body), hashlib.md5(body).hexdigest()), path
        assert page.reason is None and md.children(page.url_id).tolist() == []
    assert sink.loaded == [site.url("a.test", "/drawing.svg")]  # the only document
    assert stats["by_type"]["RESOURCE"] == 5
    rejected = {entry.url: entry.reason for entry in md.rejected()}
    assert rejected[site.url("a.test", "/photo.jpg")] == "suffix .jpg: binary media"
    assert not any(hit.path == "/photo.jpg" for hit in site.hits)


async def test_a_big_resource_is_not_downloaded_to_be_ignored(site, md):
    video = b"\x1a\x45\xdf\xa3" + b"v" * 200_000
    url = site.add("a.test", "/clip", Page(video, 200, "video/webm"))
    crawler = make_crawler(md, max_resource_bytes=10_000)
    crawler.submit(url)
    stats = await crawler.run()
    page = md.page_by_url(url)
    assert page.page_type is RESOURCE and page.content_type == "video/webm"
    assert page.size == len(video) and page.md5 is None  # declared size, never hashed
    assert stats["bytes"] < 50_000


async def test_a_resource_is_read_conditionally_and_stays_a_resource(site, md):
    etag = '"css1"'

    def style(request):
        if request.headers.get("If-None-Match") == etag:
            return Page(b"", 304, headers={"ETag": etag})
        return Page(b"p{}", 200, "text/css", headers={"ETag": etag})

    url = site.add("a.test", "/s.css", style)
    crawler = make_crawler(md)
    crawler.submit(url)
    await crawler.run()
    crawler.submit(md.page_by_url(url).url_id, Level.REFRESH)
    await crawler.run()
    assert site.hits[-1].headers.get("If-None-Match") == etag
    page = md.page_by_url(url)
    assert page.page_type is RESOURCE and page.unchanged_accesses == 1


async def test_xml_looking_html_is_html_and_a_feed_served_as_html_is_xml(site, md):
    xhtml = (
        b"<?xml version='1.0' encoding='utf-8'?>\n"
        b"<!DOCTYPE html PUBLIC '-//W3C//DTD XHTML 1.0 Strict//EN' "
        b"'http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd'>\n"
        b"<html xmlns='http://www.w3.org/1999/xhtml'><body><a href='/next.html'>n</a>"
        b"<a href='/feed'>f</a></body></html>"
    )
    home = site.add("a.test", "/", Page(xhtml, 200, "text/html"))
    site.html("a.test", "/next.html", [])
    feed = site.add("a.test", "/feed", Page(b"<?xml version='1.0'?><rss/>", 200, "text/html"))
    sink = RecordingSink()
    crawler = make_crawler(md, sink=sink)
    crawler.submit(home)
    await crawler.run()
    assert md.page_by_url(home).page_type is HTML
    assert sorted(md.urls_of(md.children(md.page_by_url(home).url_id).tolist())) == sorted(
        [site.url("a.test", "/next.html"), feed]
    )
    assert md.page_by_url(feed).page_type is XML and sink.loaded == [feed]
    assert not any("w3.org" in hit.host for hit in site.hits)


async def test_the_loader_reads_a_sniffed_document_by_its_sniffed_type(site, md):
    # RFC 7303: text/plain's charset (a server default) is not the XML document's encoding
    xml = "<?xml version='1.0' encoding='utf-8'?><a>\u00e9</a>".encode()
    sniffed = site.add("a.test", "/data", Page(xml, 200, "text/plain; charset=iso-8859-1"))
    declared = site.add("a.test", "/decl.xml", Page(xml, 200, "text/xml; charset=utf-8"))
    sink = RecordingSink()
    crawler = make_crawler(md, sink=sink)
    crawler.submit(sniffed)
    crawler.submit(declared)
    await crawler.run()
    assert md.page_by_url(sniffed).page_type is XML
    assert md.page_by_url(sniffed).content_type == "text/plain; charset=iso-8859-1"
    assert sink.headers[sniffed]["Content-Type"] == "text/xml"
    assert sink.headers[declared]["Content-Type"] == "text/xml; charset=utf-8"


def test_resource_is_a_page_type_of_its_own_and_the_older_codes_stay(md):
    codes = {t.value: c for t, c in PAGE_TYPE_CODE.items()}
    assert codes == {
        "HTML": 0,
        "XML": 1,
        "DTD": 2,
        "ERROR": 3,
        "DEAD": 4,
        "UNKNOWN": 5,
        "RESOURCE": 6,
    }
    url_id = md.id_for("http://a.test/logo")
    md.record_fetch(FetchResult(url_id, 1_000_000.0, RESOURCE, 200, md5="ab", size=3))
    view = md.refresh_view()
    assert view["type"][view["id"] == url_id].tolist() == [codes["RESOURCE"]]
    assert md.count_by_type()[RESOURCE] == 1


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.text(max_size=40), st.sampled_from(["text/html", "text/plain"])),
    st.binary(max_size=64),
    st.booleans(),
)
def test_any_header_and_body_get_a_kind(content_type, head, nosniff):
    kind = classify(content_type, "http://a/x", head, nosniff=nosniff)
    assert kind.page_type in (HTML, XML, DTD, RESOURCE) and kind.media
