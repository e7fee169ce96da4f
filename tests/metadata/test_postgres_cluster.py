"""The throwaway PostgreSQL cluster the store's tests run on starts, isolates and answers."""

from __future__ import annotations

import psycopg

from tests.postgres_cluster import PostgresCluster


def test_each_test_gets_an_empty_database_of_its_own(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=30) as conn:
        conn.execute("CREATE TABLE pages (id bigint PRIMARY KEY, url text NOT NULL)")
        conn.execute("INSERT INTO pages VALUES (1, 'http://a.test/')")
        assert conn.execute("SELECT url FROM pages").fetchall() == [("http://a.test/",)]
        version = conn.execute("SHOW server_version_num").fetchone()[0]
    assert int(version) >= 130000


def test_the_cluster_listens_on_loopback_only(postgres_cluster: PostgresCluster) -> None:
    with psycopg.connect(postgres_cluster.url(), connect_timeout=30) as conn:
        listen = conn.execute("SHOW listen_addresses").fetchone()[0]
    assert listen == "127.0.0.1"
