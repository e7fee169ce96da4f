"""``xyleme init --db`` and ``xyleme migrate``: a repository whose metadata lives in
PostgreSQL, and the schema brought forward on either engine."""

import tomllib

import pytest
from click.testing import CliRunner

from metadata import Metadata, schema
from tests.postgres_cluster import free_port
from tests.stores import raw
from xyleme.cli import cli


def run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def test_init_db_puts_the_metadata_in_postgresql_and_commands_find_it(tmp_path, postgres_url):
    directory = tmp_path / "repo"
    result = run("init", directory, "--db", postgres_url)
    assert result.exit_code == 0, result.output
    assert not (directory / "metadata.db").exists()
    config = tomllib.loads((directory / "xyleme.toml").read_text())
    assert config["store"]["url"] == postgres_url
    with Metadata.open(directory / "metadata.db") as md:  # found through xyleme.toml
        md.ids_for(["http://example.com/"])
    shown = run("--repo", directory, "page", "http://example.com/")
    assert shown.exit_code == 0, shown.output
    assert "http://example.com/" in shown.output


def test_init_db_with_a_bad_url_is_bad_input(tmp_path):
    result = run("init", tmp_path / "repo", "--db", "mysql://db.test/x")
    assert result.exit_code == 2
    assert "postgresql://" in result.output and "Traceback" not in result.output


def test_init_db_on_an_unreachable_server_is_one_line(tmp_path):
    url = f"postgresql://xyleme@127.0.0.1:{free_port()}/nothing"
    result = run("init", tmp_path / "repo", "--db", url)
    assert result.exit_code == 1
    assert "cannot connect" in result.output and len(result.output.strip().splitlines()) == 1


def test_migrate_says_from_which_version_to_which(tmp_path, store_url, monkeypatch):
    directory = tmp_path / "repo"
    db = [] if store_url.endswith("metadata.db") else ["--db", store_url]
    assert run("init", directory, *db).exit_code == 0
    latest = schema.latest_version()
    result = run("--repo", directory, "migrate")
    assert result.exit_code == 0, result.output
    assert f"schema version {latest}, already current" in result.output

    def add_notes(conn):
        conn.execute("ALTER TABLE pages ADD COLUMN note TEXT")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, add_notes])
    result = run("--repo", directory, "migrate")
    assert result.exit_code == 0, result.output
    assert f"migrated schema version {latest} -> {latest + 1}" in result.output


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_migrate_refuses_a_newer_store(tmp_path, engine, request):
    directory = tmp_path / "repo"
    db = [] if engine == "sqlite" else ["--db", request.getfixturevalue("postgres_url")]
    assert run("init", directory, *db).exit_code == 0
    where = str(directory / "metadata.db") if engine == "sqlite" else db[1]
    with raw(where) as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'",
            (str(schema.latest_version() + 5),),
        )
    result = run("--repo", directory, "migrate")
    assert result.exit_code == 1
    assert "newer than this xyleme knows" in result.output and "Traceback" not in result.output


def test_a_postgresql_repository_keeps_its_versions_there_or_in_files(tmp_path, postgres_url):
    from metadata import Validity, VersionStore

    directory = tmp_path / "repo"
    assert run("init", directory, "--db", postgres_url).exit_code == 0
    versions = VersionStore(directory / "documents")  # as the loader opens it
    versions.store(1, "http://a.test/a.xml", b"<a>one</a>", "1" * 32, 1.0, Validity())
    versions.close()
    assert not (directory / "documents" / "versions.db").exists()
    with raw(postgres_url) as conn:
        rows = conn.execute("SELECT url_id, codec FROM xyleme_versions.bodies").fetchall()
    assert rows == [(1, "zstd")]

    shared = tmp_path / "shared-bodies"
    config = directory / "xyleme.toml"
    config.write_text(
        config.read_text().replace(
            "[store]\n", f'[store]\nbodies = "files"\nbodies_path = "{shared}"\n', 1
        )
    )
    versions = VersionStore(directory / "documents")
    versions.store(2, "http://a.test/b.xml", b"<b>two</b>", "2" * 32, 2.0, Validity())
    assert versions.read(2) == b"<b>two</b>" and versions.read(1) == b"<a>one</a>"
    versions.close()
    assert [path.name for path in shared.rglob("*.xml")] == [f"2.{'2' * 32}.xml"]
    assert run("--repo", directory, "config", "show").exit_code == 0
