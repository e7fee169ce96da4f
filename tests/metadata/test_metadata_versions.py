"""The version store's schema and migrations (metadata/schema.py): a repository made by main
before the store had them opens, is stamped and migrates; a foreign or newer file is refused."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from loader import Loader, LoadOutcome, Warehouse
from metadata import ManualClock, Metadata, NotARepository, SchemaTooNew, VersionStore, schema
from tests.loader_fakes import FakeFetcher
from tests.paths import ROOT

MAIN_REPOSITORY = ROOT / "tests" / "fixtures" / "main_repository"
A, B = "http://shop.test/a.xml", "http://shop.test/b.xml"


@pytest.fixture
def repo(tmp_path) -> Path:
    """A copy of the repository main's code made (tests/fixtures/main_repository)."""
    shutil.copytree(MAIN_REPOSITORY, tmp_path / "repo")
    return tmp_path / "repo"


def meta(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM meta"))


def test_a_version_store_made_by_main_opens_and_is_stamped(repo):
    assert "meta" not in {
        row[0]
        for row in sqlite3.connect(repo / "documents" / "versions.db").execute(
            "SELECT name FROM sqlite_master"
        )
    }
    versions = VersionStore(repo / "documents")
    document = versions.document(2)
    assert document.url == B
    assert [(v.version, v.fetched_at) for v in document.versions] == [(1, 100.0), (2, 200.0)]
    assert versions.read(2, 1) == b"<shop><item>pad</item></shop>"
    assert [change.url for change in versions.changes()] == [A, B, B]
    versions.close()
    assert meta(repo / "documents" / "versions.db") == {
        "application": schema.VERSIONS_APPLICATION,
        "schema_version": str(schema.latest_version(schema.VERSIONS_MIGRATIONS)),
    }


def test_the_loader_goes_on_over_a_repository_made_by_main(repo):
    with Metadata.open(repo / "metadata.db") as md:
        loader = Loader(repo / "documents", md, FakeFetcher(), ManualClock(300.0))
        body = b"<shop><item>pad</item><item>clip</item><item>ink</item></shop>"
        result = loader.load(2, B, body, {}, 300.0)
        assert (result.outcome, result.version) == (LoadOutcome.STORED, 3)
        unchanged = loader.load(
            1, A, b'<shop><item href="http://shop.test/b.xml">pen</item></shop>', {}, 300.0
        )
        assert unchanged.outcome is LoadOutcome.UNCHANGED
        loader.close()
        warehouse = Warehouse(repo / "documents", lookup_id=md.id_for)
        assert warehouse.document_id(B) == 2
        assert [item.text for item in warehouse.parse(2).iter("item")] == ["pad", "clip", "ink"]


def test_the_version_store_runs_its_migrations_in_order(repo, monkeypatch):
    def add_note(conn):
        conn.execute("ALTER TABLE documents ADD COLUMN note TEXT")

    def fill_note(conn):
        conn.execute("UPDATE documents SET note = 'migrated'")

    monkeypatch.setattr(schema, "VERSIONS_MIGRATIONS", [add_note, fill_note])
    versions = VersionStore(repo / "documents")
    assert versions.latest(1).version == 1
    versions.close()
    path = repo / "documents" / "versions.db"
    assert meta(path)["schema_version"] == "3"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT DISTINCT note FROM documents").fetchall() == [("migrated",)]


def test_a_newer_version_store_is_refused(repo):
    versions = VersionStore(repo / "documents")
    versions.latest(1)  # opened (lazily), so stamped
    versions.close()
    path = repo / "documents" / "versions.db"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(SchemaTooNew, match="schema version 99"):
        VersionStore(repo / "documents").latest(1)


def test_a_foreign_database_is_not_a_version_store(tmp_path):
    folder = tmp_path / "documents"
    folder.mkdir()
    with sqlite3.connect(folder / "versions.db") as conn:
        conn.execute("CREATE TABLE recipes(name TEXT)")
    with pytest.raises(NotARepository, match="not xyleme's version store"):
        VersionStore(folder).latest(1)
