"""Opening files: missing, corrupt, foreign, too new, or needing a migration."""

import sqlite3

import pytest

from metadata import Metadata, MetadataError, NotARepository, SchemaTooNew, schema
from tests.stores import columns, raw


def test_missing_file_names_it(tmp_path):
    path = tmp_path / "nothing.db"
    with pytest.raises(NotARepository, match=r"nothing\.db"):
        Metadata.open(path)
    assert not path.exists()


def test_corrupt_file_names_it(tmp_path):
    path = tmp_path / "metadata.db"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(NotARepository) as error:
        Metadata.open(path)
    assert str(path) in str(error.value)


def test_foreign_sqlite_file_is_refused(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('application', 'something-else')")
    conn.commit()
    conn.close()
    with pytest.raises(NotARepository, match="not xyleme's"):
        Metadata.open(path)


def test_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(NotARepository, match="not xyleme's"):
        Metadata.open(path, readonly=True)


def set_version(path, version):
    with raw(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))


def test_newer_schema_is_refused(store_url):
    path = store_url
    Metadata.create(path).close()
    set_version(path, schema.latest_version() + 1)
    with pytest.raises(SchemaTooNew):
        Metadata.open(path)
    with pytest.raises(SchemaTooNew):
        Metadata.open(path, readonly=True)


def test_migrations_run_in_order_on_open(store_url, monkeypatch):
    path = store_url
    with Metadata.create(path) as md:
        md.ids_for(["http://example.com/"])

    def add_notes(conn):
        conn.execute("ALTER TABLE pages ADD COLUMN note TEXT")

    def fill_notes(conn):
        conn.execute("UPDATE pages SET note = 'migrated'")

    released = schema.latest_version()
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_notes, fill_notes])
    with pytest.raises(NotARepository, match="needs migrating"):
        Metadata.open(path, readonly=True)
    with Metadata.open(path) as md:
        assert md.url_of(1) == "http://example.com/"
    with raw(path) as conn:
        assert conn.execute("SELECT note FROM pages").fetchall() == [("migrated",)]
        assert schema.schema_version(conn) == released + 2


def test_a_failing_migration_changes_nothing(store_url, monkeypatch):
    path = store_url
    Metadata.create(path).close()

    def add_column(conn):
        conn.execute("ALTER TABLE pages ADD COLUMN note TEXT")

    def broken(conn):
        raise RuntimeError("bug in a migration")

    released = schema.latest_version()
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_column, broken])
    with pytest.raises(RuntimeError, match="bug in a migration"):
        Metadata.open(path)
    with raw(path) as conn:
        assert schema.schema_version(conn) == released
        assert "note" not in columns(conn, "pages")


def test_readonly_open_refuses_writes(store_url):
    path = store_url
    Metadata.create(path).close()
    with Metadata.open(path, readonly=True) as md:
        assert md.max_url_id() == 0
        with pytest.raises(MetadataError, match="read-only"):
            md.ids_for(["http://example.com/"])


def test_the_database_is_in_wal_mode(tmp_path):
    path = tmp_path / "metadata.db"
    Metadata.create(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_version_1_database_gains_robots_and_canonical(tmp_path):
    """A database written before the robots/canonical columns opens, migrated, its rows kept."""
    path = tmp_path / "metadata.db"
    conn = sqlite3.connect(path)
    with conn:
        schema.create_schema(conn)
        conn.execute("INSERT INTO pages(id, url, type) VALUES (1, 'http://example.com/', 'HTML')")
    conn.close()
    with Metadata.open(path) as md:
        record = md.page(1)
        assert (record.url, record.robots, record.canonical_to) == (
            "http://example.com/",
            None,
            None,
        )
    conn = sqlite3.connect(path)
    assert schema.schema_version(conn) == schema.latest_version() >= 2
    conn.close()
