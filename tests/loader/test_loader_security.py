"""XXE, billion laughs, quadratic blowup and out-of-scope references.

A local file or an out-of-scope URL is never read: the document is kept without it, stored
``not validated`` with the reason (issue 16: only a document that is not well-formed, or
that breaks a limit, is refused).
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from loader import Check, Loader, LoaderSettings, LoadOutcome
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

URL = "http://xml.test/doc.xml"

BILLION_LAUGHS = (
    b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
"""
    + b"".join(
        b'<!ENTITY lol%d "%s">\n' % (n, (b"&lol%d;" % (n - 1) if n > 1 else b"&lol;") * 10)
        for n in range(1, 10)
    )
    + b"""]>
<lolz>&lol9;</lolz>"""
)


@pytest.fixture
def md():
    return FakeMetadata()


@pytest.fixture
def fetcher():
    return FakeFetcher()


def make_loader(tmp_path, md, fetcher, **settings):
    return Loader(tmp_path / "documents", md, fetcher, ManualClock(0.0), LoaderSettings(**settings))


@pytest.fixture
def secret(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("TOP-SECRET-VALUE")
    return path


def everything_written(tmp_path) -> bytes:
    return b"".join(p.read_bytes() for p in (tmp_path / "documents").rglob("*") if p.is_file())


@pytest.mark.parametrize("reference", ["file://{path}", "file:{path}"], ids=["url", "relative"])
def test_xxe_never_reads_a_local_file(tmp_path, md, fetcher, secret, reference):
    loader = make_loader(tmp_path, md, fetcher)
    system = reference.format(path=secret).encode()
    body = b'<!DOCTYPE r [<!ENTITY x SYSTEM "' + system + b'">]><r>&x;</r>'
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert_kept_without(result, "only http(s) URLs are fetched")
    assert fetcher.requests == []
    assert b"TOP-SECRET" not in everything_written(tmp_path)


def assert_kept_without(result, why: str) -> None:
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.NOT_VALIDATED
    assert why in result.validity.reason


def test_absolute_path_resolves_against_the_document_url_never_the_disk(
    tmp_path, md, fetcher, secret
):
    loader = make_loader(tmp_path, md, fetcher)
    body = f'<!DOCTYPE r [<!ENTITY x SYSTEM "{secret}">]><r>&x;</r>'.encode()
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert result.outcome is LoadOutcome.WAITING
    assert fetcher.urls == [f"http://xml.test{secret}"]
    assert b"TOP-SECRET" not in everything_written(tmp_path)


def test_xxe_through_a_local_external_dtd_is_never_read(tmp_path, md, fetcher, secret):
    loader = make_loader(tmp_path, md, fetcher)
    body = f'<!DOCTYPE r SYSTEM "file://{secret}"><r/>'.encode()
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert_kept_without(result, f"file://{secret} not available: only http(s) URLs are fetched")
    assert fetcher.requests == []
    assert b"TOP-SECRET" not in everything_written(tmp_path)


def test_parameter_entity_to_a_local_file_is_never_read(tmp_path, md, fetcher, secret):
    loader = make_loader(tmp_path, md, fetcher)
    body = f'<!DOCTYPE r [<!ENTITY % p SYSTEM "file://{secret}"> %p;]><r/>'.encode()
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert_kept_without(result, "only http(s) URLs are fetched")
    assert b"TOP-SECRET" not in everything_written(tmp_path)


def test_billion_laughs_refused_fast_with_bounded_memory(tmp_path, md, fetcher):
    loader = make_loader(tmp_path, md, fetcher)
    tracemalloc.start()
    started = time.process_time()
    result = loader.load(md.id_for(URL), URL, BILLION_LAUGHS, {}, 0.0)
    cpu = time.process_time() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.outcome is LoadOutcome.FAILED
    assert result.reason.startswith("entity expansion refused")
    assert peak < 20 * 2**20  # expanded, it would be 3 GB
    assert cpu < 5.0  # generous: a refusal takes milliseconds, an expansion minutes


def test_quadratic_blowup_refused(tmp_path, md, fetcher):
    loader = make_loader(tmp_path, md, fetcher)
    big = b"a" * 100_000
    body = b'<!DOCTYPE r [<!ENTITY e "' + big + b'">]><r>' + b"&e;" * 20_000 + b"</r>"
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert result.outcome is LoadOutcome.FAILED
    assert result.reason.startswith("entity expansion refused")


def test_configured_entity_expansion_limit(tmp_path, md, fetcher):
    loader = make_loader(tmp_path, md, fetcher, max_entity_expansion_bytes=500)
    body = b'<!DOCTYPE r [<!ENTITY a "xxxxxxxxxx"><!ENTITY b "' + b"&a;" * 60 + b'">]><r>&b;</r>'
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert result.outcome is LoadOutcome.FAILED
    assert "expands past 500 bytes" in result.reason


def test_configured_entity_count_limit(tmp_path, md, fetcher):
    loader = make_loader(tmp_path, md, fetcher, max_entity_declarations=3)
    declarations = b"".join(b'<!ENTITY e%d "x">' % n for n in range(5))
    result = loader.load(md.id_for(URL), URL, b"<!DOCTYPE r [" + declarations + b"]><r/>", {}, 0)
    assert result.outcome is LoadOutcome.FAILED
    assert "5 entity declarations" in result.reason


def test_a_shared_external_dtd_is_judged_for_every_document(tmp_path, md, fetcher):
    """The verdicts on a shared DTD are remembered (lxml copies a DTD to show it), but a
    refusal is not, and an internal subset that may change how it reads is judged apart."""
    loader = make_loader(tmp_path, md, fetcher, max_entity_declarations=3)
    dtd_url = "http://xml.test/many.dtd"
    dtd = b"".join(b'<!ENTITY e%d "x">' % n for n in range(3)) + b"<!ELEMENT r ANY>"
    loader.load(md.id_for(dtd_url), dtd_url, dtd, {}, 0.0)
    body = b'<!DOCTYPE r SYSTEM "many.dtd"><r>&e1;</r>'
    for n in range(2):
        url = f"http://xml.test/ok{n}.xml"
        result = loader.load(md.id_for(url), url, body, {}, 0.0)
        assert result.validity.dtd.value == "valid"
    more = body.replace(b'"many.dtd">', b'"many.dtd" [<!ENTITY extra "y">]>')
    for n in range(2):
        url = f"http://xml.test/over{n}.xml"
        result = loader.load(md.id_for(url), url, more, {}, 0.0)
        assert result.outcome is LoadOutcome.FAILED
        assert "4 entity declarations, more than 3" in result.reason
    bigger = dtd + b'<!ENTITY e9 "x">'
    loader.load(md.id_for(dtd_url), dtd_url, bigger, {}, 1.0)  # refreshed: judged again
    result = loader.load(
        md.id_for("http://xml.test/ok2.xml"), "http://xml.test/ok2.xml", body, {}, 1.0
    )
    assert result.outcome is LoadOutcome.FAILED


def test_an_internal_subset_is_judged_with_the_remembered_external_entities(tmp_path, md, fetcher):
    """DocBook's customary internal subset (``<!ENTITY product …>``) reads the external DTD's
    remembered entities: a reference to one still counts in the expansion limit."""
    loader = make_loader(tmp_path, md, fetcher, max_entity_expansion_bytes=500)
    dtd_url = "http://xml.test/book.dtd"
    loader.load(md.id_for(dtd_url), dtd_url, b'<!ENTITY ten "xxxxxxxxxx"><!ELEMENT r ANY>', {}, 0)
    small = b'<!DOCTYPE r SYSTEM "book.dtd" [<!ENTITY product "&ten;">]><r>&product;</r>'
    big = small.replace(b'"&ten;"', b'"' + b"&ten;" * 60 + b'"')
    for n, (body, outcome) in enumerate(
        ((small, LoadOutcome.STORED), (big, LoadOutcome.FAILED), (small, LoadOutcome.STORED))
    ):
        url = f"http://xml.test/book{n}.xml"
        result = loader.load(md.id_for(url), url, body, {}, 0.0)
        assert result.outcome is outcome, result.reason
        if outcome is LoadOutcome.FAILED:
            assert "entity 'product' expands past 500 bytes" in result.reason
    assert result.validity.dtd is Check.VALID


def test_dtd_outside_the_crawl_scope_is_never_asked_for(tmp_path, md, fetcher):
    loader = Loader(
        tmp_path / "documents",
        md,
        fetcher,
        ManualClock(0.0),
        in_scope=lambda url: url.startswith("http://xml.test/"),
    )
    body = b'<!DOCTYPE r SYSTEM "http://evil.test/r.dtd"><r>&undeclared;</r>'
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert_kept_without(result, "http://evil.test/r.dtd not available: outside the crawl scope")
    assert fetcher.requests == []


def test_internal_entities_within_limits_are_expanded(tmp_path, md, fetcher):
    loader = make_loader(tmp_path, md, fetcher)
    body = b'<!DOCTYPE r [<!ENTITY co "Xyleme SA">]><r>&co;</r>'
    result = loader.load(md.id_for(URL), URL, body, {}, 0.0)
    assert result.outcome is LoadOutcome.STORED
