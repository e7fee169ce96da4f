"""A raw connection to a test's store, on either engine, with the store's ``?`` SQL: what a
test reaches under the API with (a schema version to set, a table to inspect)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from metadata import target_of
from metadata.dialect import Connection, PgConnection


@contextmanager
def raw(store_url: str) -> Iterator[Connection]:
    """An autocommit connection to the store at ``store_url`` (closed at the end)."""
    target = target_of(store_url)
    if target.path is not None:
        conn: Connection = sqlite3.connect(target.path, isolation_level=None)
    else:
        import psycopg

        conn = PgConnection(psycopg.connect(target.url, autocommit=True))
    try:
        yield conn
    finally:
        conn.close()  # type: ignore[attr-defined]


def columns(conn: Connection, table: str) -> list[str]:
    """The column names of ``table``, as the engine reports them."""
    return [column[0] for column in conn.execute(f"SELECT * FROM {table} LIMIT 0").description]


def in_threads(work: Callable[[int], None], count: int, deadline_s: float = 120) -> None:
    """Run ``work(0)`` … ``work(count - 1)`` at once, one thread each; fail if one is still
    running after ``deadline_s`` (a stuck writer, not a slow machine)."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=deadline_s)
        assert not thread.is_alive(), f"{work.__name__} is stuck"
