"""The versioned repository: versions only on change, N kept, any version cheap to read."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from loader import (
    Check,
    Loader,
    LoaderSettings,
    LoadOutcome,
    Validity,
)
from loader.errors import DocumentNotFound, RepositoryCorrupt, VersionNotFound
from metadata import ManualClock, NewVersion, VersionStore
from tests.loader_fakes import FakeFetcher, FakeMetadata

URL = "http://xml.test/prices.xml"


@pytest.fixture
def repository(tmp_path, store_url):
    """The version store in its file, then in the PostgreSQL store's database."""
    postgres = store_url if store_url.startswith("postgresql:") else None
    return VersionStore(tmp_path / "documents", versions_kept=3, store_url=postgres)


def store(repository, body: bytes, at: float, url_id: int = 7):
    return repository.store(url_id, URL, body, hashlib.md5(body).hexdigest(), at, Validity())


def test_versions_are_numbered_and_readable(repository):
    store(repository, b"<p>1</p>", 10.0)
    store(repository, b"<p>2</p>", 20.0)
    assert [v.version for v in repository.document(7).versions] == [1, 2]
    assert repository.read(7) == b"<p>2</p>"
    assert repository.read(7, 1) == b"<p>1</p>"
    assert repository.version(7, 1).fetched_at == 10.0


def test_only_the_configured_number_of_versions_is_kept(repository):
    for n in range(5):
        store(repository, b"<p>%d</p>" % n, float(n))
    document = repository.document(7)
    assert [v.version for v in document.versions] == [3, 4, 5]
    with pytest.raises(VersionNotFound, match="versions kept: 3, 4, 5"):
        repository.read(7, 1)
    assert len(repository.stored_bodies(7)) == 3  # pruned versions' bodies are gone


def test_a_return_to_earlier_content_shares_its_body(repository):
    store(repository, b"<p>a</p>", 1.0)
    store(repository, b"<p>b</p>", 2.0)
    store(repository, b"<p>a</p>", 3.0)
    assert repository.version(7, 1).md5 == repository.version(7, 3).md5
    assert repository.read(7, 1) == repository.read(7, 3) == b"<p>a</p>"
    assert len(repository.stored_bodies(7)) == 2


def test_unknown_document(repository):
    with pytest.raises(DocumentNotFound):
        repository.read(99)
    assert repository.latest(99) is None


def test_change_log_lists_versions_since_a_time(repository):
    store(repository, b"<p>1</p>", 10.0)
    store(repository, b"<p>2</p>", 20.0, url_id=8)
    assert [(c.url_id, c.version) for c in repository.changes(15.0)] == [(8, 1)]
    assert len(list(repository.changes())) == 2


def store_path(repository, path: Path):
    body = path.read_bytes()
    return repository.store(7, URL, path, hashlib.md5(body).hexdigest(), 0.0, Validity())


def test_a_batch_is_stored_in_one_transaction(repository):
    def new(url_id, body):
        md5 = hashlib.md5(body if isinstance(body, bytes) else b"?").hexdigest()
        return NewVersion(url_id, f"{URL}?{url_id}", body, md5, 1.0, Validity())

    infos = repository.store_many([new(1, b"<a/>"), new(2, b"<b/>"), new(1, b"<c/>")])
    assert [(i.version, i.size) for i in infos] == [(1, 4), (1, 4), (2, 4)]
    assert repository.read(1) == b"<c/>" and repository.read(2) == b"<b/>"
    with pytest.raises(FileNotFoundError):
        repository.store_many([new(3, b"<d/>"), new(4, Path("/nonexistent/body.xml"))])
    assert repository.latest(3) is None  # the failed batch stored nothing


def test_large_bodies_are_kept_in_files_of_their_own(tmp_path):
    repository = VersionStore(tmp_path / "documents", 2, file_threshold_bytes=100)
    spooled = tmp_path / "spooled.xml"
    spooled.write_bytes(b"<r>" + b"x" * 200 + b"</r>")
    store_path(repository, spooled)
    for n in (1, 2):
        store(repository, b"<r>%d</r>" % n + b"y" * 200, float(n))
    assert repository.read(7) == b"<r>2</r>" + b"y" * 200
    files = list((tmp_path / "documents" / "bodies").rglob("*.xml"))
    assert len(files) == 2  # the first version was pruned with its file


def test_a_corrupt_store_is_a_clear_error(tmp_path):
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "versions.db").write_bytes(b"this is not a database" * 100)
    repository = VersionStore(folder)
    with pytest.raises(RepositoryCorrupt, match=r"versions\.db: unreadable version store"):
        repository.latest(7)


def test_a_missing_body_file_is_a_clear_error(tmp_path):
    repository = VersionStore(tmp_path / "documents", file_threshold_bytes=10)
    store(repository, b"<p>a long enough body</p>", 1.0)
    for path in (tmp_path / "documents" / "bodies").rglob("*.xml"):
        path.unlink()
    with pytest.raises(RepositoryCorrupt, match="body file of document 7 is gone"):
        repository.read(7)


def test_loader_stores_a_version_only_on_change(tmp_path):
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    url_id = md.id_for(URL)
    first = loader.load(url_id, URL, b"<p>1</p>", {}, 10.0)
    same = loader.load(url_id, URL, b"<p>1</p>", {}, 20.0)
    changed = loader.load(url_id, URL, b"<p>2</p>", {}, 30.0)
    assert (first.outcome, same.outcome, changed.outcome) == (
        LoadOutcome.STORED,
        LoadOutcome.UNCHANGED,
        LoadOutcome.STORED,
    )
    assert same.version == 1
    assert changed.version == 2
    assert [v.fetched_at for v in loader.repository.document(url_id).versions] == [10.0, 30.0]


def test_validity_is_kept_with_each_version(tmp_path):
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0), LoaderSettings())
    dtd = b"<!DOCTYPE p [<!ELEMENT p (#PCDATA)>]>"
    url_id = md.id_for(URL)
    loader.load(url_id, URL, dtd + b"<p>1</p>", {}, 10.0)
    loader.load(url_id, URL, dtd + b"<p><b/></p>", {}, 20.0)
    versions = loader.repository.document(url_id).versions
    assert [v.validity.dtd for v in versions] == [Check.VALID, Check.INVALID]
    assert versions[1].validity.errors
