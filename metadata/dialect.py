"""What differs between the store's two engines, SQLite and PostgreSQL, and nothing else.

Every subject of the store writes its SQL once, in the subset both engines accept (SQLite
3.35+ has ``ON CONFLICT … DO UPDATE`` and ``RETURNING``), with ``?`` parameters. A
:class:`Dialect` holds the few things that cannot be written once: how a write transaction
begins, the name of the bytes type, the aggregates that concatenate a column and the tail of
a byte string. :class:`PgConnection` lets a psycopg connection take that SQL: it rewrites
``?`` and ``?N`` into psycopg's ``%s`` (a ``?N`` repeated takes its value again) once per
statement text, and offers ``COPY`` for bulk inserts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

_PARAMETER = re.compile(r"\?(\d*)")
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")  # ":host", not a "::bytea" cast
SMALL_BATCH = 32
"""Rows up to which a PostgreSQL upsert or insert goes by ``executemany`` (pipelined: one
round trip) rather than ``COPY``: measured on a throwaway server, a 1–10-row upsert staged
through a temporary table cost 3–5 ms and ~0.5 ms of server CPU (the table's truncation at
commit included), by ``executemany`` 0.5–0.8 ms and 0.1–0.2 ms; the two meet near 50 rows."""


class Connection(Protocol):
    """The part of a DB-API connection the subjects use (``sqlite3`` or :class:`PgConnection`)."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...

    @property
    def in_transaction(self) -> bool: ...


@dataclass(frozen=True)
class Dialect:
    """One engine's spelling of what the shared SQL cannot say once."""

    name: str
    begin_write: str
    """starts a write transaction (SQLite takes its one write lock at once, not at the first
    write, so two writers never deadlock upgrading a read lock)"""
    begin_snapshot: str
    """starts a read transaction that sees one committed state for all its statements"""
    blob: str
    """the bytes type"""
    serial: str
    """an integer primary key the engine numbers itself"""
    without_rowid: str
    """SQLite's clustered-table clause for a composite primary key (PostgreSQL: none)"""
    list_tables: str
    """the names of the tables of the connection's schema"""
    skip_locked: str
    """ends a claim's select: PostgreSQL locks the rows it takes and skips those another
    claim holds; SQLite's one write lock already serialises claims"""
    functions: tuple[str, ...]
    """SQLite's functions the shared SQL calls that the engine lacks, defined in its schema"""
    serialise_ids: str | None
    """makes the transaction the only one assigning URL-Ids until it ends (SQLite's write
    lock already does: None)"""

    def tail(self, expression: str, size: str) -> str:
        """The last ``size`` bytes of a bytes ``expression`` (all of it when shorter)."""
        if self.name == "sqlite":  # "||" joins blobs as text: the CAST counts bytes again
            return f"substr(CAST({expression} AS BLOB), -{size})"
        return f"substr({expression}, greatest(length({expression}) - {size} + 1, 1))"

    def join_text(self, expression: str, order: str) -> str:
        """The values of ``expression`` over a group, comma-joined in ``order``."""
        if self.name == "sqlite":  # 3.40 has no ORDER BY in aggregates: rows come ordered
            return f"group_concat({expression})"
        return f"string_agg(CAST({expression} AS TEXT), ',' ORDER BY {order})"

    def join_bytes(self, expression: str, order: str) -> str:
        """The bytes of ``expression`` over a group, concatenated in ``order``."""
        if self.name == "sqlite":
            return f"CAST(group_concat({expression}, '') AS BLOB)"
        return f"string_agg({expression}, ''::bytea ORDER BY {order})"

    def among(
        self, column: str, values: Sequence[Any], *, first: int | None = None
    ) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``, and the parameters that says it with: SQLite's
        ``IN (?, ?, …)``, a placeholder a value; PostgreSQL's ``= ANY(?)``, one array
        parameter, so a statement has one text whatever the count (parsed and planned once,
        then prepared; a list of 900 placeholders cost the driver ~1 ms to parse, uncached,
        at each call). ``first``: the placeholders are numbered from it (``?N`` statements).

        >>> SQLITE.among("id", [4, 5])
        ('id IN (?, ?)', [4, 5])
        >>> POSTGRESQL.among("url", ["a", "b"], first=8)
        ('url = ANY(?8)', [['a', 'b']])
        """
        if self.name == "sqlite":
            numbers = range(first, first + len(values)) if first else [""] * len(values)
            return f"{column} IN ({', '.join(f'?{n}' for n in numbers)})", list(values)
        return f"{column} = ANY(?{first or ''})", [list(values)]

    def render(self, ddl: str) -> str:
        """A schema statement written with ``{blob}``, ``{serial}`` and ``{without_rowid}``
        for this engine."""
        return ddl.format(blob=self.blob, serial=self.serial, without_rowid=self.without_rowid)

    def upsert_many(
        self,
        conn: Connection,
        table: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
    ) -> None:
        """Insert or replace rows keyed by their first column; a key given twice ends with
        its last row. SQLite, and PostgreSQL for up to ``SMALL_BATCH`` rows: :func:`upsert_sql`
        by ``executemany``. A larger batch on PostgreSQL goes by ``COPY`` into a temporary
        table, then into ``table`` by the same upsert, as one ``INSERT … SELECT`` (one
        statement for the batch instead of one per row)."""
        latest = list({row[0]: row for row in rows}.values())
        if not latest:
            return
        if not isinstance(conn, PgConnection) or len(latest) <= SMALL_BATCH:
            conn.executemany(upsert_sql(table, columns), latest)
            return
        stage = f"staged_{table}"
        conn.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} (LIKE {table}) ON COMMIT DELETE ROWS"
        )
        conn.copy(stage, columns, latest)
        conn.execute(upsert_sql(table, columns, source=stage))
        conn.execute(f"DELETE FROM {stage}")  # a second batch of the transaction starts afresh

    def insert_many(
        self, conn: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        """Append rows to ``table``: ``executemany`` on SQLite, ``COPY`` on PostgreSQL (a
        batch of new URLs, refusals or waits costs one round trip, not one per row) unless
        it has ``SMALL_BATCH`` rows or fewer (``executemany``, as cheap for so few)."""
        if isinstance(conn, PgConnection):
            rows = list(rows)
            if len(rows) > SMALL_BATCH:
                conn.copy(table, columns, rows)
                return
        marks = ", ".join("?" * len(columns))
        conn.executemany(f"INSERT INTO {table}({', '.join(columns)}) VALUES ({marks})", rows)

    def update_many(
        self,
        conn: Connection,
        table: str,
        columns: Sequence[tuple[str, str]],
        rows: Iterable[Sequence[Any]],
    ) -> tuple[int, int]:
        """Set ``columns`` (``(name, SQL type)`` pairs) of the rows of ``table`` whose ``id``
        is each row's first value; an id given twice takes its last row. Returns the rows
        changed and the distinct ids given (fewer changed: some id has no row). SQLite, and
        PostgreSQL for up to ``SMALL_BATCH`` rows: ``UPDATE … WHERE id = ?`` by
        ``executemany``; more on PostgreSQL: one ``UPDATE … FROM unnest(arrays)``, one
        statement for the batch (an OPIC flush's scores are a row a page of the part: by
        ``executemany`` 14,637 rows cost ~29,000 statements of the server and the driver)."""
        latest = list({row[0]: row for row in rows}.values())
        if not latest:
            return 0, 0
        names = [name for name, _ in columns]
        if not isinstance(conn, PgConnection) or len(latest) <= SMALL_BATCH:
            sets = ", ".join(f"{name} = ?" for name in names)
            moved = [(*row[1:], row[0]) for row in latest]
            changed = conn.executemany(f"UPDATE {table} SET {sets} WHERE id = ?", moved)
            return changed.rowcount, len(latest)
        arrays = ", ".join(f"?::{kind}[]" for _, kind in (("id", "bigint"), *columns))
        sets = ", ".join(f"{name} = given.{name}" for name in names)
        changed = conn.execute(
            f"UPDATE {table} SET {sets} FROM unnest({arrays}) AS given(id, {', '.join(names)}) "
            f"WHERE {table}.id = given.id",
            [list(column) for column in zip(*latest, strict=True)],
        )
        return changed.rowcount, len(latest)


def upsert_sql(table: str, columns: Sequence[str], source: str | None = None) -> str:
    """Insert rows into ``table``, replacing the other columns of a row whose key (the first
    column) exists: one row of ``?`` values, or every row of the table ``source``.

    >>> print(upsert_sql("state", ("key", "value")).replace(" ON ", "\\n"))
    INSERT INTO state(key, value) VALUES (?, ?)
    CONFLICT(key) DO UPDATE SET value = excluded.value
    """
    names = ", ".join(columns)
    rows = (
        f"SELECT {names} FROM {source}" if source else f"VALUES ({', '.join('?' * len(columns))})"
    )
    updates = ", ".join(f"{name} = excluded.{name}" for name in columns[1:])
    return f"INSERT INTO {table}({names}) {rows} ON CONFLICT({columns[0]}) DO UPDATE SET {updates}"


SQLITE = Dialect(
    name="sqlite",
    begin_write="BEGIN IMMEDIATE",
    begin_snapshot="BEGIN",
    blob="BLOB",
    serial="INTEGER PRIMARY KEY",
    without_rowid=" WITHOUT ROWID",
    list_tables="SELECT name FROM sqlite_master WHERE type = 'table'",
    skip_locked="",
    functions=(),
    serialise_ids=None,
)
POSTGRESQL = Dialect(
    name="postgresql",
    begin_write="BEGIN",
    begin_snapshot="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    blob="BYTEA",
    serial="BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    without_rowid="",
    list_tables=(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    ),
    skip_locked=" FOR UPDATE SKIP LOCKED",
    functions=(  # the reports' host and reason rules are written with SQLite's instr
        "CREATE FUNCTION instr(text, text) RETURNS integer "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN strpos($1, $2)",
    ),
    serialise_ids="SELECT pg_advisory_xact_lock(7865130829)",  # any fixed key: "xyleme" ids
)


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> tuple[str, tuple[int, ...] | None]:
    """``sql`` with psycopg's placeholders, and for ``?N`` statements the 0-based position
    of the value each placeholder takes (None: the values go in as given, a sequence or,
    for ``:name`` parameters, a mapping).

    >>> translate("SELECT ?1 + ?2 * ?1 AS pct")
    ('SELECT %s + %s * %s AS pct', (0, 1, 0))
    >>> translate("SELECT 100 % ?")[0]
    'SELECT 100 %% %s'
    >>> translate("UPDATE t SET a = ? WHERE id = ?")
    ('UPDATE t SET a = %s WHERE id = %s', None)
    >>> translate("SELECT ''::bytea WHERE host = :host")[0]
    "SELECT ''::bytea WHERE host = %(host)s"
    """
    numbers = [int(match.group(1)) - 1 for match in _PARAMETER.finditer(sql) if match.group(1)]
    text = _NAMED.sub(r"%(\1)s", _PARAMETER.sub("%s", sql.replace("%", "%%")))
    return text, (tuple(numbers) if numbers else None)


class PgConnection:
    """A psycopg connection (autocommit: the store says BEGIN and COMMIT itself) taking the
    shared ``?`` SQL."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        text, order = translate(sql)
        return self.raw.execute(text, _ordered(params, order))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        """Every row through one statement; the cursor's ``rowcount`` sums the rows changed."""
        text, order = translate(sql)
        cursor = self.raw.cursor()
        cursor.executemany(text, [_ordered(row, order) for row in rows])
        return cursor

    def copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        with self.raw.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def scan(self, sql: str, params: Sequence[Any] = (), itersize: int = 10_000) -> list[tuple]:
        """Every row of a long read through a server-side cursor, ``itersize`` rows a fetch
        (the caller holds a transaction: a named cursor lives inside one)."""
        text, order = translate(sql)
        with self.raw.cursor(name="xyleme_scan") as cursor:
            cursor.itersize = itersize
            cursor.execute(text, _ordered(params, order))
            return list(cursor)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


def dialect_of(conn: Connection) -> Dialect:
    """The dialect a connection speaks (for the helpers given a connection alone)."""
    return POSTGRESQL if isinstance(conn, PgConnection) else SQLITE


def _ordered(params: Any, order: tuple[int, ...] | None) -> Any:
    return params if order is None else [params[index] for index in order]
