"""Every error goes to the document that caused it (issue 18, fault 2), batches included.

An off-scope schema of one document was once recorded against the documents loaded after it
in the same thread (lxml kept the resolver's exception on a shared parser and raised it at
that parser's next use), while the culprit itself was recorded valid.
"""

from __future__ import annotations

import pytest

from loader import Check, Loader, LoaderSettings, LoadOutcome
from metadata import LoadStatus, ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

SCOPE = "http://xml.test/"
OFF_SCOPE_SCHEMA = (
    b'<book xmlns="urn:book" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
    b' xsi:schemaLocation="urn:book http://elsewhere.test/book.xsd"><pages>1</pages></book>'
)
PLAIN = b'<r><a href="x.xml"/></r>'
WITH_DTD = b"<!DOCTYPE r [<!ELEMENT r (a)*><!ELEMENT a EMPTY><!ATTLIST a href CDATA #IMPLIED>]>"


@pytest.fixture
def md():
    return FakeMetadata()


@pytest.fixture
def loader(tmp_path, md):
    return Loader(
        tmp_path / "documents",
        md,
        FakeFetcher(),
        ManualClock(0.0),
        LoaderSettings(),
        in_scope=lambda url: url.startswith(SCOPE),
    )


def batch(md, *bodies: bytes) -> list[tuple]:
    urls = [f"{SCOPE}doc{n}.xml" for n in range(len(bodies))]
    return [(md.id_for(u), u, b, {}, 0.0) for u, b in zip(urls, bodies, strict=True)]


@pytest.mark.parametrize("others", [(PLAIN, PLAIN), (WITH_DTD + PLAIN, PLAIN)])
def test_an_off_scope_schema_is_charged_to_its_own_document_in_a_batch(loader, md, others):
    culprit, *rest = loader.load_many(batch(md, OFF_SCOPE_SCHEMA, *others))
    for result in rest:
        assert result.outcome is LoadOutcome.STORED, result.reason
        assert md.status_rows[result.url_id][0] is LoadStatus.LOADED
        assert "elsewhere" not in (md.status_rows[result.url_id][1] or "")
    assert culprit.outcome is LoadOutcome.STORED
    assert culprit.validity.schema is Check.NOT_VALIDATED
    assert not culprit.validity.valid
    assert "elsewhere.test/book.xsd" in culprit.validity.reason
    assert "outside the crawl scope" in culprit.validity.reason
    status, detail = md.status_rows[culprit.url_id]
    assert status is LoadStatus.LOADED and detail.startswith("version 1, not validated: ")


def test_an_off_scope_schema_is_charged_to_its_own_document_one_by_one(loader, md):
    items = batch(md, OFF_SCOPE_SCHEMA, PLAIN, WITH_DTD + PLAIN)
    results = [loader.load(*item) for item in items]
    assert results[0].validity.schema is Check.NOT_VALIDATED
    assert [r.outcome for r in results[1:]] == [LoadOutcome.STORED, LoadOutcome.STORED]


def test_the_same_off_scope_schema_twice_is_charged_each_time(loader, md):
    results = loader.load_many(batch(md, OFF_SCOPE_SCHEMA, OFF_SCOPE_SCHEMA, PLAIN))
    assert [r.validity.schema for r in results[:2]] == [Check.NOT_VALIDATED] * 2
    assert results[2].outcome is LoadOutcome.STORED
