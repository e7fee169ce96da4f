"""DTDs, external entities and schemas fetched through the crawler; parking and timeouts."""

from __future__ import annotations

import pytest

from loader import Check, Loader, LoaderSettings, LoadOutcome
from metadata import LoadStatus, ManualClock, PageType
from tests.loader_fakes import FakeFetcher, FakeMetadata

DOC = "http://xml.test/books/doc.xml"
DTD = "http://xml.test/books/book.dtd"
ENTITY = "http://xml.test/books/chapter.ent"
XSD = "http://xml.test/books/book.xsd"

BOOK_DTD = b"""<!ELEMENT book (title, chapter*)>
<!ELEMENT title (#PCDATA)>
<!ELEMENT chapter (#PCDATA)>
<!ATTLIST book lang CDATA "en">
"""
VALID = b'<?xml version="1.0"?>\n<!DOCTYPE book SYSTEM "book.dtd">\n<book><title>T</title></book>'
INVALID = b'<?xml version="1.0"?>\n<!DOCTYPE book SYSTEM "book.dtd">\n<book><chapter/></book>'
BOOK_XSD = b"""<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
    targetNamespace="urn:book" elementFormDefault="qualified">
  <xs:element name="book"><xs:complexType><xs:sequence>
    <xs:element name="pages" type="xs:int"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>"""


def schema_document(pages: bytes) -> bytes:
    return (
        b'<book xmlns="urn:book" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        b' xsi:schemaLocation="urn:book book.xsd"><pages>' + pages + b"</pages></book>"
    )


@pytest.fixture
def md():
    return FakeMetadata()


@pytest.fixture
def fetcher():
    return FakeFetcher()


@pytest.fixture
def clock():
    return ManualClock(1000.0)


@pytest.fixture
def loader(tmp_path, md, fetcher, clock):
    return Loader(tmp_path / "documents", md, fetcher, clock, LoaderSettings())


def deliver(loader, md, url, body, at=1001.0):
    """What the crawler does when a dependency it queued at priority 0 arrives."""
    return loader.load(md.id_for(url), url, body, {}, at)


def test_document_waits_for_its_dtd_then_loads_valid(loader, md, fetcher):
    doc_id = md.id_for(DOC)
    waiting = loader.load(doc_id, DOC, VALID, {}, 1000.0)
    assert waiting.outcome is LoadOutcome.WAITING
    assert fetcher.requests == [(DTD, doc_id)]
    assert md.status_rows[doc_id][0] is LoadStatus.WAITING_DTD
    assert md.waiting_on(md.id_for(DTD)) == [doc_id]
    assert loader.repository.latest(doc_id) is None

    arrived = deliver(loader, md, DTD, BOOK_DTD)
    assert arrived.outcome is LoadOutcome.DEPENDENCY
    assert md.types[md.id_for(DTD)][0] is PageType.DTD
    assert md.status_rows[doc_id][0] is LoadStatus.LOADED
    stored = loader.repository.latest(doc_id)
    assert stored.validity.dtd is Check.VALID
    assert md.dependencies_of(doc_id) == [DTD]
    assert md.links_of(doc_id) == []  # a DTD is a dependency, not a link
    assert list(loader.parking) == []


def test_invalid_document_is_stored_with_its_first_errors(loader, md):
    deliver(loader, md, DTD, BOOK_DTD)
    result = loader.load(md.id_for(DOC), DOC, INVALID, {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.INVALID
    assert not result.validity.valid
    assert any("line 3" in error for error in result.validity.errors)
    assert loader.repository.latest(result.url_id).validity == result.validity


def test_cached_dtd_is_used_without_asking_again(loader, md, fetcher):
    deliver(loader, md, DTD, BOOK_DTD)
    result = loader.load(md.id_for(DOC), DOC, VALID, {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED
    assert fetcher.requests == []


def test_dtd_default_attributes_and_external_entities(loader, md, fetcher):
    dtd = BOOK_DTD + b'<!ENTITY chapter1 SYSTEM "chapter.ent">\n'
    body = (
        b'<!DOCTYPE book SYSTEM "book.dtd">\n'
        b"<book><title>T</title><chapter>&chapter1;</chapter></book>"
    )
    doc_id = md.id_for(DOC)
    assert loader.load(doc_id, DOC, body, {}, 1000.0).outcome is LoadOutcome.WAITING
    deliver(loader, md, DTD, dtd)
    assert md.status_rows[doc_id][0] is LoadStatus.WAITING_ENTITY
    assert fetcher.urls == [DTD, ENTITY]
    deliver(loader, md, ENTITY, b"It was a dark night.")
    assert md.status_rows[doc_id][0] is LoadStatus.LOADED
    tree = loader.repository.read(doc_id)
    assert tree == body  # the stored body is what was fetched, not its expansion
    assert set(md.dependencies_of(doc_id)) == {DTD, ENTITY}


def test_a_document_whose_dtd_never_comes_is_stored_not_validated(loader, md, clock, fetcher):
    doc_id = md.id_for(DOC)
    loader.load(doc_id, DOC, VALID, {}, 1000.0)
    clock.advance(loader.settings.dependency_timeout_seconds - 1)
    assert loader.expire_waiting() == []
    clock.advance(2)
    [stored] = loader.expire_waiting()
    assert stored.outcome is LoadOutcome.STORED
    assert stored.validity.dtd is Check.NOT_VALIDATED
    assert stored.validity.reason == f"{DTD} not available: not fetched within 86400 s"
    assert md.status_rows[doc_id] == (
        LoadStatus.LOADED,
        f"version 1, not validated: {DTD} not available: not fetched within 86400 s",
    )
    assert list(loader.parking) == []
    other = "http://xml.test/books/other.xml"  # the next document does not wait for it again
    later = loader.load(md.id_for(other), other, VALID, {}, 1000.0)
    assert later.validity.dtd is Check.NOT_VALIDATED
    assert fetcher.urls == [DTD]
    clock.advance(loader.settings.dependency_timeout_seconds)  # a failure is not forever
    third = "http://xml.test/books/third.xml"
    assert loader.load(md.id_for(third), third, VALID, {}, 1000.0).waiting_for == (DTD,)
    assert fetcher.urls == [DTD, DTD]


@pytest.mark.parametrize("reason", ["HTTP 404", "refused by robots.txt", "timeout"])
def test_a_document_whose_dtd_cannot_be_fetched_is_kept_with_its_links(loader, md, reason):
    doc_id = md.id_for(DOC)
    body = VALID.replace(
        b"</book>",
        b'<chapter xmlns:x="http://www.w3.org/1999/xlink" x:href="ch1.xml">&ch;</chapter></book>',
    )
    assert loader.load(doc_id, DOC, body, {}, 1000.0).outcome is LoadOutcome.WAITING
    [stored] = loader.dependency_failed(md.id_for(DTD), DTD, reason)
    assert (stored.url_id, stored.outcome) == (doc_id, LoadOutcome.STORED)
    assert stored.validity.dtd is Check.NOT_VALIDATED
    assert not stored.validity.valid
    assert md.status_rows[doc_id] == (
        LoadStatus.LOADED,
        f"version 1, not validated: {DTD} not available: {reason}",
    )
    assert md.links_of(doc_id) == ["http://xml.test/books/ch1.xml"]
    assert md.dependencies_of(doc_id) == [DTD]
    # the DTD arrives after all: the stored version is checked again
    result = deliver(loader, md, DTD, BOOK_DTD + b'<!ENTITY ch "one">')
    assert "version 1 revalidated: invalid" in result.notes[0]


def test_one_dependency_failing_leaves_the_document_waiting_for_the_others(loader, md):
    first, second = "http://xml.test/books/a.ent", "http://xml.test/books/b.ent"
    body = (
        b'<!DOCTYPE r [<!ENTITY a SYSTEM "a.ent"><!ENTITY b SYSTEM "b.ent">]>'
        b'<r><x href="one.xml"/>&a;&b;</r>'
    )
    doc_id = md.id_for(DOC)
    assert loader.load(doc_id, DOC, body, {}, 1000.0).waiting_for == (first, second)
    [still] = loader.dependency_failed(md.id_for(first), first, "HTTP 404")
    assert still.outcome is LoadOutcome.WAITING
    assert still.waiting_for == (second,)
    [notes] = deliver(loader, md, second, b"<y/>").notes
    assert notes == f"{DOC}: stored"
    stored = loader.repository.latest(doc_id).validity
    assert (stored.dtd, stored.reason) == (Check.NOT_VALIDATED, f"{first} not available: HTTP 404")
    assert md.links_of(doc_id) == ["http://xml.test/books/one.xml"]


def test_a_document_that_is_not_well_formed_is_still_refused(loader, md):
    loader.dependency_failed(md.id_for(DTD), DTD, "HTTP 404")
    result = loader.load(md.id_for(DOC), DOC, VALID.replace(b"</book>", b"</bok>"), {}, 1.0)
    assert result.outcome is LoadOutcome.FAILED
    assert "mismatch" in result.reason


def test_parked_document_survives_a_restart(tmp_path, md, fetcher, clock):
    first = Loader(tmp_path / "documents", md, fetcher, clock)
    doc_id = md.id_for(DOC)
    first.load(doc_id, DOC, VALID, {}, 1000.0)
    second = Loader(tmp_path / "documents", md, fetcher, clock)
    deliver(second, md, DTD, BOOK_DTD)
    assert second.repository.latest(doc_id).validity.dtd is Check.VALID


def test_schema_is_fetched_then_checked(loader, md, fetcher):
    url = "http://xml.test/books/pages.xml"
    waiting = loader.load(md.id_for(url), url, schema_document(b"12"), {}, 1000.0)
    assert waiting.outcome is LoadOutcome.WAITING
    assert md.status_rows[waiting.url_id][0] is LoadStatus.WAITING_SCHEMA
    assert fetcher.urls == [XSD]
    deliver(loader, md, XSD, BOOK_XSD)
    stored = loader.repository.latest(waiting.url_id)
    assert stored.validity.schema is Check.VALID
    assert md.dependencies_of(waiting.url_id) == [XSD]

    other = "http://xml.test/books/bad.xml"
    bad = loader.load(md.id_for(other), other, schema_document(b"many"), {}, 1000.0)
    assert bad.validity.schema is Check.INVALID
    assert "not a valid value" in bad.validity.errors[0]


def test_a_refreshed_schema_replaces_the_compiled_one(loader, md):
    url = "http://xml.test/books/pages.xml"
    loader.load(md.id_for(url), url, schema_document(b"word"), {}, 1000.0)  # waits
    deliver(loader, md, XSD, BOOK_XSD)
    assert loader.repository.latest(md.id_for(url)).validity.schema is Check.INVALID
    deliver(loader, md, XSD, BOOK_XSD.replace(b"xs:int", b"xs:string"))
    again = loader.load(md.id_for(url), url, schema_document(b"words"), {}, 1002.0)
    assert again.validity.schema is Check.VALID


def test_an_oversize_dependency_leaves_its_waiters_not_validated(tmp_path, md, fetcher, clock):
    loader = Loader(
        tmp_path / "documents", md, fetcher, clock, LoaderSettings(max_document_bytes=1000)
    )
    doc_id = md.id_for(DOC)
    loader.load(doc_id, DOC, VALID, {}, 1000.0)
    result = deliver(loader, md, DTD, b"<!-- " + b"x" * 2000 + b" -->")
    assert result.outcome is LoadOutcome.FAILED
    assert md.types[md.id_for(DTD)][0] is PageType.ERROR
    assert md.status_rows[doc_id][0] is LoadStatus.LOADED
    assert (
        "not available: too large (2009 bytes, over the limit of 1000)" in md.status_rows[doc_id][1]
    )


def test_streamed_document_waits_for_its_dtd_too(tmp_path, md, fetcher, clock):
    settings = LoaderSettings(stream_threshold_bytes=64, stream_chunk_bytes=32)
    loader = Loader(tmp_path / "documents", md, fetcher, clock, settings)
    body = INVALID.replace(b"<chapter/>", b"<title>T</title>" + b"<chapter>c</chapter>" * 20)
    doc_id = md.id_for(DOC)
    assert loader.load(doc_id, DOC, body, {}, 1000.0).outcome is LoadOutcome.WAITING
    assert fetcher.urls == [DTD]
    arrived = deliver(loader, md, DTD, BOOK_DTD)
    assert arrived.notes == (f"{DOC}: stored",)
    stored = loader.repository.latest(doc_id)
    assert stored.validity.dtd is Check.STREAMED  # the streaming frees what validation reads
    assert stored.validity.dtd.value == "not validated: streamed"
    assert stored.validity.valid  # not known to be invalid
    assert loader.repository.read(doc_id) == body


def test_a_streamed_document_whose_dtd_is_off_scope_is_kept_with_its_links(tmp_path, md, clock):
    settings = LoaderSettings(stream_threshold_bytes=64, stream_chunk_bytes=32)
    fetcher = FakeFetcher()
    loader = Loader(
        tmp_path / "documents",
        md,
        fetcher,
        clock,
        settings,
        in_scope=lambda url: url.startswith("http://xml.test/"),
    )
    chapters = b"".join(b'<chapter href="c%d.xml">&ch;</chapter>' % n for n in range(20))
    body = b'<!DOCTYPE book SYSTEM "http://dtd.test/book.dtd"><book>' + chapters + b"</book>"
    result = loader.load(md.id_for(DOC), DOC, body, {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED, result.reason
    assert result.validity.dtd is Check.NOT_VALIDATED
    assert (
        result.validity.reason == "http://dtd.test/book.dtd not available: outside the crawl scope"
    )
    assert len(md.links_of(result.url_id)) == 20
    assert fetcher.requests == []


def test_streamed_document_notes_its_unchecked_dtd(tmp_path, md, fetcher, clock):
    settings = LoaderSettings(stream_threshold_bytes=64, stream_chunk_bytes=32)
    loader = Loader(tmp_path / "documents", md, fetcher, clock, settings)
    deliver(loader, md, DTD, BOOK_DTD)
    body = VALID.replace(b"</book>", b"<chapter>c</chapter>" * 10 + b"</book>")
    result = loader.load(md.id_for(DOC), DOC, body, {}, 1000.0)
    assert result.notes == ("DTD not checked on a streamed document",)
    assert result.validity.dtd is Check.STREAMED


def test_streamed_document_without_a_grammar_has_no_dtd_check(tmp_path, md, fetcher, clock):
    settings = LoaderSettings(stream_threshold_bytes=64, stream_chunk_bytes=32)
    loader = Loader(tmp_path / "documents", md, fetcher, clock, settings)
    body = b'<!DOCTYPE r [<!ENTITY e "x">]><r>' + b"<p>&e;</p>" * 20 + b"</r>"
    result = loader.load(md.id_for(DOC), DOC, body, {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.NONE


def test_streamed_document_records_its_schema_unchecked(tmp_path, md, fetcher, clock):
    settings = LoaderSettings(stream_threshold_bytes=64, stream_chunk_bytes=32)
    loader = Loader(tmp_path / "documents", md, fetcher, clock, settings)
    result = loader.load(md.id_for(DOC), DOC, schema_document(b"12" * 40), {}, 1000.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.schema is Check.STREAMED
    assert "schema not checked on a streamed document" in result.notes


def test_a_refreshed_dtd_revalidates_the_documents_that_use_it(loader, md):
    deliver(loader, md, DTD, BOOK_DTD)
    doc_id, other_id = md.id_for(DOC), md.id_for("http://xml.test/books/other.xml")
    loader.load(doc_id, DOC, VALID, {}, 1000.0)
    loader.load(other_id, "http://xml.test/books/other.xml", b"<book/>", {}, 1000.0)
    stricter = BOOK_DTD.replace(b"(title, chapter*)", b"(title, chapter+)")

    refreshed = deliver(loader, md, DTD, stricter, at=2000.0)
    latest = loader.repository.latest(doc_id)
    assert latest.version == 1
    assert latest.validity.dtd is Check.INVALID
    assert "expecting (title , chapter+)" in latest.validity.errors[0]
    assert md.status_rows[doc_id] == (
        LoadStatus.LOADED,
        f"version 1, invalid: {latest.validity.errors[0]}",
    )
    assert refreshed.notes == (
        f"{DOC}: version 1 revalidated: invalid: {latest.validity.errors[0]}",
    )
    assert loader.repository.latest(other_id).validity.dtd is Check.NONE  # does not use it

    assert deliver(loader, md, DTD, stricter, at=3000.0).notes == ()  # same MD5: nothing to do
    back = deliver(loader, md, DTD, BOOK_DTD, at=4000.0)
    assert back.notes == (f"{DOC}: version 1 revalidated: valid",)
    assert loader.repository.latest(doc_id).validity.dtd is Check.VALID
    assert md.status_rows[doc_id] == (LoadStatus.LOADED, "version 1, valid")


def test_a_refreshed_dtd_that_needs_an_entity_leaves_the_validity_and_says_why(loader, md):
    deliver(loader, md, DTD, BOOK_DTD)
    doc_id = md.id_for(DOC)
    loader.load(doc_id, DOC, VALID, {}, 1000.0)
    with_entity = BOOK_DTD + b'<!ENTITY % more SYSTEM "chapter.ent">%more;'
    refreshed = deliver(loader, md, DTD, with_entity, at=2000.0)
    assert refreshed.notes == (f"{DOC}: not revalidated: needs {ENTITY}",)
    assert loader.repository.latest(doc_id).validity.dtd is Check.VALID


def test_the_verdict_prefers_a_failed_check_to_one_that_could_not_be_made():
    from loader import Validity

    both = Validity(Check.INVALID, Check.NOT_VALIDATED, ("no title (line 1)",), "x.xsd: 404")
    assert both.verdict == "invalid: no title (line 1)"
    missing = Validity(Check.VALID, Check.NOT_VALIDATED, (), "x.xsd not available: HTTP 404")
    assert missing.verdict == "not validated: x.xsd not available: HTTP 404"
    assert not missing.valid
    assert Validity.from_dict(missing.as_dict()) == missing
    assert Validity(Check.VALID).verdict == "valid"
