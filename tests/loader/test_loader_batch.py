"""Loader.load_many: a batch gives the results one load per document gives, and writes its
metadata in one transaction and its versions in one transaction of the repository."""

from __future__ import annotations

import contextlib

import pytest

from loader import Check, Loader, LoadOutcome
from metadata import LoadStatus, ManualClock, Metadata, PageType, VersionStore
from tests.loader_fakes import FakeFetcher

BASE = "http://batch.test/"
DTD = b"<!ELEMENT book (title)><!ELEMENT title (#PCDATA)>"
VALID = b'<!DOCTYPE book SYSTEM "book.dtd"><book><title>T</title></book>'
INVALID = b'<!DOCTYPE book SYSTEM "book.dtd"><book><oops/></book>'
LINKED = b'<r><a href="a.xml"/><b src="/img/b.svg"/><c href="mailto:x@batch.test"/></r>'
MALFORMED = b"<r><a></r>"


def open_loader(folder):
    folder.mkdir(exist_ok=True)
    metadata = Metadata.create(folder / "metadata.db", clock=ManualClock(0.0))
    loader = Loader(folder / "documents", metadata, FakeFetcher(), ManualClock(0.0))
    return loader, metadata


def fetched(metadata, name: str, body: bytes, at: float = 1.0):
    url = BASE + name
    return (metadata.id_for(url), url, body, {"Content-Type": "application/xml"}, at)


def summary(result):
    return (result.outcome, result.version, result.links, result.dependencies, result.reason)


@pytest.fixture
def pair(tmp_path):
    """Two fresh loaders: one loads one document at a time, the other in a batch."""
    one, one_md = open_loader(tmp_path / "one")
    many, many_md = open_loader(tmp_path / "many")
    yield (one, one_md), (many, many_md)
    one_md.close()
    many_md.close()


def test_a_batch_gives_the_results_of_one_load_per_document(pair):
    names = [
        ("book.dtd", DTD),
        ("valid.xml", VALID),
        ("invalid.xml", INVALID),
        ("linked.xml", LINKED),
        ("bad.xml", MALFORMED),
        ("linked.xml", LINKED),  # unchanged, in the same batch
        ("valid.xml", VALID.replace(b">T<", b">U<")),  # a second version, in the same batch
    ]
    (one, one_md), (many, many_md) = pair
    singles = [one.load(*fetched(one_md, n, b, at)) for at, (n, b) in enumerate(names)]
    batch = many.load_many([fetched(many_md, n, b, at) for at, (n, b) in enumerate(names)])
    assert [summary(r) for r in batch] == [summary(r) for r in singles]
    assert [r.outcome for r in batch] == [
        LoadOutcome.DEPENDENCY,
        LoadOutcome.STORED,
        LoadOutcome.STORED,
        LoadOutcome.STORED,
        LoadOutcome.FAILED,
        LoadOutcome.UNCHANGED,
        LoadOutcome.STORED,
    ]
    assert batch[2].validity.dtd is Check.INVALID and batch[3].links == 2
    for name in ("valid.xml", "invalid.xml", "linked.xml", "bad.xml"):
        one_id, many_id = one_md.id_for(BASE + name), many_md.id_for(BASE + name)
        assert many_md.status(many_id) == one_md.status(one_id)
        assert many_md.page(many_id).page_type == one_md.page(one_id).page_type
        assert many_md.urls_of(many_md.children(many_id)) == one_md.urls_of(one_md.children(one_id))
    valid_id = many_md.id_for(BASE + "valid.xml")
    assert many_md.status(valid_id) == (LoadStatus.LOADED, "version 2, valid")
    assert [v.version for v in many.repository.document(valid_id).versions] == [1, 2]
    assert many_md.page(many_md.id_for(BASE + "bad.xml")).page_type is PageType.ERROR


def test_a_document_waiting_in_a_batch_is_loaded_when_its_dtd_arrives_in_it(tmp_path):
    loader, md = open_loader(tmp_path)
    waiting, dependency = loader.load_many(
        [fetched(md, "valid.xml", VALID), fetched(md, "book.dtd", DTD)]
    )
    assert waiting.outcome is LoadOutcome.WAITING
    assert dependency.notes == (f"{BASE}valid.xml: stored",)
    valid_id = md.id_for(BASE + "valid.xml")
    assert md.status(valid_id) == (LoadStatus.LOADED, "version 1, valid")
    assert loader.repository.latest(valid_id).validity.dtd is Check.VALID
    md.close()


class CountingMetadata(Metadata):
    """The real manager, counting the transactions the loader opens."""

    transactions = 0

    @contextlib.contextmanager
    def transaction(self):
        CountingMetadata.transactions += 1
        with super().transaction():
            yield


def test_a_batch_writes_its_metadata_in_one_transaction_and_its_versions_in_one(
    tmp_path, monkeypatch
):
    md = CountingMetadata.create(tmp_path / "metadata.db", clock=ManualClock(0.0))
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    batches = []
    store_many = VersionStore.store_many
    monkeypatch.setattr(
        VersionStore,
        "store_many",
        lambda self, versions: batches.append(len(versions)) or store_many(self, versions),
    )
    documents = [
        fetched(md, f"d{n}.xml", LINKED.replace(b"a.xml", b"%d.xml" % n)) for n in range(5)
    ]
    results = loader.load_many(documents)
    assert [r.outcome for r in results] == [LoadOutcome.STORED] * 5
    assert CountingMetadata.transactions == 1
    assert batches == [5]
    assert md.urls_of(md.children(documents[4][0])) == [f"{BASE}4.xml", f"{BASE}img/b.svg"]
    md.close()


def test_a_failed_metadata_write_stores_no_version(tmp_path, monkeypatch):
    loader, md = open_loader(tmp_path)
    item = fetched(md, "linked.xml", LINKED)

    def refuse(rows):
        raise OSError("disk full")

    monkeypatch.setattr(md, "set_status_many", refuse)
    with pytest.raises(OSError, match="disk full"):
        loader.load_many([item])
    assert loader.repository.latest(item[0]) is None  # the next fetch loads it again
    assert md.children(item[0]).tolist() == []
    monkeypatch.undo()
    assert loader.load(*item).outcome is LoadOutcome.STORED
    md.close()
