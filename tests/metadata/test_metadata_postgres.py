"""What only the PostgreSQL engine meets: a server that does not answer, a database that is
not xyleme's, a repository folder that names its store in xyleme.toml, concurrent writers."""

import pytest

from metadata import (
    Metadata,
    MetadataSettings,
    NotARepository,
    RepositoryExists,
    StoreError,
    target_of,
)
from tests.postgres_cluster import free_port
from tests.stores import in_threads, raw


def test_an_unreachable_server_is_one_line_naming_the_store_without_its_password():
    url = f"postgresql://crawler:secret@127.0.0.1:{free_port()}/warehouse"
    with pytest.raises(NotARepository, match="cannot connect") as caught:
        Metadata.open(url)
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)


def test_an_unknown_scheme_is_refused():
    with pytest.raises(NotARepository, match="unknown store URL scheme 'mysql'"):
        Metadata.open("mysql://db.test/warehouse")


def test_a_database_of_other_tables_is_not_taken_nor_opened(postgres_url):
    with raw(postgres_url) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    with pytest.raises(NotARepository, match="other tables"):
        Metadata.create(postgres_url)
    with pytest.raises(NotARepository, match="not xyleme's"):
        Metadata.open(postgres_url)
    with raw(postgres_url) as conn:  # nothing was added
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert tables == [("invoices",)]


def test_a_second_create_is_refused(postgres_url):
    Metadata.create(postgres_url).close()
    with pytest.raises(RepositoryExists):
        Metadata.create(postgres_url)


def test_a_repository_folder_names_its_store_in_xyleme_toml(tmp_path, postgres_url):
    (tmp_path / "xyleme.toml").write_text(f'[store]\nurl = "{postgres_url}"\n')
    Metadata.create(postgres_url).close()
    assert target_of(tmp_path / "metadata.db").url == postgres_url
    with Metadata.open(tmp_path / "metadata.db") as md:
        assert md.ids_for(["http://a.test/"]) == [1]
    assert not (tmp_path / "metadata.db").exists()


def test_writers_in_threads_of_two_stores_never_share_an_id(postgres_url):
    Metadata.create(postgres_url).close()
    stores = [Metadata.open(postgres_url), Metadata.open(postgres_url)]
    given: list[list[int | None]] = [[], []]

    def assign(k: int) -> None:
        for batch in range(20):
            urls = [f"http://{k}.test/{batch}/{n}" for n in range(50)] + ["http://both.test/"]
            given[k] += stores[k].ids_for(urls)

    in_threads(assign, 2)
    for md in stores:
        md.close()
    ids = [url_id for k in range(2) for url_id in given[k]]
    both = {url_id for n, url_id in enumerate(ids) if n % 51 == 50}
    assert len(both) == 1  # one URL named by both writers: one id
    assert len(set(ids)) == 2 * 20 * 50 + 1  # every other URL its own id


def test_writers_racing_for_the_same_new_urls_get_one_dense_id_each(postgres_url):
    """The id lock is taken only when a URL lacks an id: two writers that both find the same
    URLs missing look them up again under it, so the second reuses the first's ids."""
    Metadata.create(postgres_url).close()
    stores = [Metadata.open(postgres_url), Metadata.open(postgres_url)]
    given: list[list[int | None]] = [[], []]

    def assign(k: int) -> None:
        for batch in range(30):
            urls = [f"http://shared.test/{batch}/{n}" for n in range(40)]
            given[k] += stores[k].ids_for(urls if k == 0 else urls[::-1])[:: 1 if k == 0 else -1]

    in_threads(assign, 2)
    for md in stores:
        md.close()
    assert given[0] == given[1]
    assert sorted(given[0]) == list(range(1, 30 * 40 + 1))


def test_the_synchronous_setting_sets_the_sessions_commit_mode(postgres_url):
    """Below FULL a commit returns before its WAL is flushed (survives a killed process, as
    SQLite's NORMAL); FULL leaves the server's own setting (on unless its admin says)."""
    Metadata.create(postgres_url).close()
    asked = "SELECT setting, source FROM pg_settings WHERE name = 'synchronous_commit'"
    with Metadata.open(postgres_url, settings=MetadataSettings(synchronous="NORMAL")) as md:
        assert md._one(asked) == ("off", "client")
    with Metadata.open(postgres_url, settings=MetadataSettings(synchronous="FULL")) as md:
        assert md._one(asked)[1] != "client"


def test_a_read_only_opening_is_read_only_on_the_server_too(postgres_url):
    Metadata.create(postgres_url).close()
    with Metadata.open(postgres_url, readonly=True) as md:
        with pytest.raises(StoreError, match="read-only transaction"):
            md._one("INSERT INTO state(key, value) VALUES ('k', 'v')")
        assert md.max_url_id() == 0
