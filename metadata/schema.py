"""The database schema, its version, and the path that migrates old databases forward.

Tables (one per data module of paper §4, plus bookkeeping):

* ``pages`` — Map-Data and Refresh-Data in one row per URL-Id: the canonical URL (unique
  index: the inverse mapping) and every Refresh-Data field. One table keeps id assignment
  at one insert per new URL and the refresh scan at one sequential read.
* ``links`` — Link-Data: each page's children as one little-endian int32 BLOB (at most
  65,534, the paper's cap, with the number of extra links), and its DTD/schema dependencies.
  A BLOB per page lets the link export concatenate bytes instead of building an object per
  edge.
* ``observations`` — the bounded access history of each page (packed float64 triples), kept
  apart from ``pages`` so the refresh scan does not read it.
* ``load_status`` and ``waiting`` — Status-Data: a document's loading status and the
  dependencies (DTDs, entities) it waits for.
* ``rejected`` — the bounded table of URLs refused a URL-Id.
* ``state`` — small named blobs (checkpoints, the clock's epoch and speed).
* ``host_stats`` — the crawler's per-host facts (delay, queue, robots.txt) at its last
  checkpoint, for ``xyleme hosts`` (version 3).
* ``host_fetches`` — the fetches of each host by status, summed over every run (version 4).
* ``pages.host_hash``, ``claimed_by``, ``claimed_until`` — the host-hash parts and the
  leases of several crawl workers (version 5).
* ``workers`` — the heartbeats of the crawl workers and coordinators sharing the store
  (version 6).
* ``cash_parts`` and ``cash_transfers`` — OPIC's cash across crawl workers: each part's
  books and the cash in flight between parts (version 7).
* ``sitemaps`` — the pages the sites named as sitemaps, read as sitemaps whenever they are
  read again (version 8).
* ``meta`` — the application marker and the schema version.

The version store (``documents/versions.db``, :mod:`metadata.versions`) has its tables here
too (:data:`VERSIONS_SCHEMA`): ``documents``, ``versions``, ``bodies``, ``changes`` and
``needs``, with the same ``meta`` bookkeeping. It is a file of its own because it holds the
bulk (the bodies): the loader's batches of bodies then never hold the write lock the
crawler's fetch records wait for, and the refresh scans never page through bodies.

``create_schema`` builds version 1; each later change is a function appended to
:data:`MIGRATIONS` (:data:`VERSIONS_MIGRATIONS` for the version store), and :func:`migrate`
runs either list, so a new database and an old migrated one go through the same steps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from metadata.dialect import SQLITE, Connection, Dialect
from metadata.errors import NotARepository, SchemaTooNew

APPLICATION = "xyleme-metadata"
"""The ``meta.application`` marker that tells our database from any other SQLite file."""
VERSIONS_APPLICATION = "xyleme-versions"
"""The version store's marker (``documents/versions.db``)."""

Migration = Callable[[Connection], None]


def add_robots_and_canonical(conn: Connection) -> None:
    """Version 2: an HTML page's robots meta directives and its ``rel=canonical`` target.

    ``pages.robots`` holds the directives the crawler honours, sorted and comma-joined
    (``noarchive,noindex``), NULL when the page states none; ``pages.canonical_to`` the
    URL-Id of the page's ``rel=canonical`` URL when that is another page.
    """
    conn.execute("ALTER TABLE pages ADD COLUMN robots TEXT")
    conn.execute("ALTER TABLE pages ADD COLUMN canonical_to INTEGER")


def add_host_stats(conn: Connection) -> None:
    """Version 3: ``host_stats``, one row per host (``scheme://host[:port]``) holding what
    only the running crawler knows, as of its last checkpoint: the delay in force, the queue,
    robots.txt's state, the pages scouted against the host budget.

    ``written`` is the real (wall-clock) time of the snapshot, so a reader says how old each
    figure is; ``at`` the simulated time. A host the crawler forgot keeps its last row.
    (Released with REAL and INTEGER: PostgreSQL's REAL is 4 bytes, so the types are now
    written as both engines read them alike; SQLite's affinities are the same.)
    """
    conn.execute(
        """
        CREATE TABLE host_stats (
          host TEXT PRIMARY KEY,
          written DOUBLE PRECISION NOT NULL,
          at DOUBLE PRECISION NOT NULL,
          delay DOUBLE PRECISION,
          queued BIGINT,
          in_flight BIGINT,
          backoff DOUBLE PRECISION,
          robots TEXT,
          robots_note TEXT,
          robots_age DOUBLE PRECISION,
          crawl_delay DOUBLE PRECISION,
          scouted BIGINT,
          budget BIGINT
        )
        """
    )


def add_host_fetches(conn: Connection) -> None:
    """Version 4: ``host_fetches``, how many fetches each host (``scheme://host[:port]``)
    answered with each status, over every run: one row per host and crawl-log status (an
    HTTP status, or a negative code for a fetch without response: docs/archive.md).

    Heritrix's hosts report counts fetches, not pages: a page read three times counts three
    answers, robots.txt and a retried 429/503 included. The crawler counts them in memory;
    each checkpoint adds its counts to these rows. Fetches made before this version are not
    counted (their pages' last answers are all the older database knows).
    """
    conn.execute(
        """
        CREATE TABLE host_fetches (
          host TEXT NOT NULL,
          status INTEGER NOT NULL,
          fetches BIGINT NOT NULL,
          PRIMARY KEY (host, status)
        )
        """
    )


def add_claims(conn: Connection) -> None:
    """Version 5: what several crawl workers over one store need (issue 20,
    :mod:`metadata.claims`): ``pages.host_hash``, the stable hash of the page's host (worker
    I of N owns the hosts whose hash is I modulo N), filled in for the pages there are, and
    the claim a worker holds on a page (``claimed_by``, ``claimed_until``: wall-clock end
    of its lease). No index on the hash: a part is ``host_hash % N``, which no index on the
    column serves, and each index costs every new URL's insert (~30% for this one)."""
    from conventions import host_hash  # the host rule, at the bottom of the import graph

    conn.execute("ALTER TABLE pages ADD COLUMN host_hash BIGINT")
    conn.execute("ALTER TABLE pages ADD COLUMN claimed_by TEXT")
    conn.execute("ALTER TABLE pages ADD COLUMN claimed_until DOUBLE PRECISION")
    pages = conn.execute("SELECT id, url FROM pages").fetchall()
    conn.executemany(
        "UPDATE pages SET host_hash = ? WHERE id = ?",
        [(host_hash(url), url_id) for url_id, url in pages],
    )


def add_workers(conn: Connection) -> None:
    """Version 6: ``workers``, one row per crawl worker or coordinator process sharing the
    store (issue 20, :mod:`metadata.heartbeats`): its role, part of the hosts (worker I of
    N), process and machine, the hosts it holds, the pages it read and its rate, and its
    last heartbeat (wall-clock seconds: a row whose heartbeat is old is a dead process's)."""
    conn.execute(
        """
        CREATE TABLE workers (
          name TEXT PRIMARY KEY,
          role TEXT NOT NULL,
          part INTEGER,
          parts INTEGER,
          pid INTEGER NOT NULL,
          host TEXT NOT NULL,
          hosts_owned BIGINT NOT NULL,
          pages_read BIGINT NOT NULL,
          pages_per_s DOUBLE PRECISION NOT NULL,
          started DOUBLE PRECISION NOT NULL,
          heartbeat DOUBLE PRECISION NOT NULL,
          state TEXT NOT NULL
        )
        """
    )


def add_cash_transfers(conn: Connection) -> None:
    """Version 7 (issue 20's second migration of part 2, after the workers' version 6): OPIC's
    cash across crawl workers (OPIC §4.1, :mod:`metadata.cash_transfers`). ``cash_parts``,
    one row per part of the hosts: the cash its last checkpoint holds, what it publishes for
    the other parts (total weight, G-time credited, known pages, rate sum), its epoch (the
    flushes it committed) and when it last flushed. ``cash_transfers``, the cash sent to
    pages of another part and not yet taken by it (page -1: that part's virtual page), keyed
    so that one sender's batch cannot be written twice; its key begins with the receiving
    part, which deletes its rows at each flush."""
    conn.execute(
        """
        CREATE TABLE cash_parts (
          part INTEGER PRIMARY KEY,
          parts INTEGER NOT NULL,
          epoch BIGINT NOT NULL,
          cash DOUBLE PRECISION NOT NULL,
          weight DOUBLE PRECISION NOT NULL,
          g DOUBLE PRECISION NOT NULL,
          named BIGINT NOT NULL,
          rate_sum DOUBLE PRECISION NOT NULL,
          written DOUBLE PRECISION
        )
        """
    )
    conn.execute(
        """
        CREATE TABLE cash_transfers (
          to_part INTEGER NOT NULL,
          from_part INTEGER NOT NULL,
          batch BIGINT NOT NULL,
          page BIGINT NOT NULL,
          amount DOUBLE PRECISION NOT NULL,
          PRIMARY KEY (to_part, from_part, batch, page)
        )
        """
    )


def add_sitemaps(conn: Connection) -> None:
    """Version 8: ``sitemaps``, the pages a site named as sitemaps (its robots.txt's
    ``Sitemap:`` lines, a sitemap index's entries).

    A sitemap is read by the protocol's rules (a gzip file unpacked under the 50 MB cap, a
    text list of URLs, its suffix never refused): the request that first read it knew it,
    a refresh of the URL-Id alone does not. The fact is kept per page so every later read is
    a sitemap's too (issue 16, the real-web trial); one row per page, so the refresh plan
    asks once for its batch.
    """
    conn.execute("CREATE TABLE sitemaps (url_id INTEGER PRIMARY KEY)")


MIGRATIONS: list[Migration] = [
    add_robots_and_canonical,
    add_host_stats,
    add_host_fetches,
    add_claims,
    add_workers,
    add_cash_transfers,
    add_sitemaps,
]
"""``MIGRATIONS[i]`` upgrades schema version ``i + 1`` to ``i + 2``, inside the caller's
transaction. Append only; never edit a released migration."""


VERSIONS_SCHEMA = """
CREATE TABLE documents(url_id INTEGER PRIMARY KEY, url TEXT NOT NULL);
CREATE TABLE versions(
    url_id INTEGER NOT NULL, version INTEGER NOT NULL, md5 TEXT NOT NULL,
    fetched_at DOUBLE PRECISION NOT NULL, size BIGINT NOT NULL, validity TEXT NOT NULL,
    PRIMARY KEY (url_id, version)){without_rowid};
CREATE TABLE bodies(
    url_id INTEGER NOT NULL, md5 TEXT NOT NULL, codec TEXT NOT NULL, body {blob},
    PRIMARY KEY (url_id, md5));
CREATE TABLE changes(
    seq {serial}, url_id INTEGER NOT NULL, version INTEGER NOT NULL,
    md5 TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
CREATE TABLE needs(
    dependency INTEGER NOT NULL, url_id INTEGER NOT NULL,
    PRIMARY KEY (dependency, url_id)){without_rowid};
"""
"""Version 1 of the version store: the tables the loader kept before the store had a
``meta`` table (a store without one, holding these tables, is version 1). Written for both
engines as :data:`SCHEMA` is (released with REAL: the same affinity in SQLite)."""

VERSIONS_TABLES = frozenset({"documents", "versions", "bodies", "changes", "needs"})

VERSIONS_MIGRATIONS: list[Migration] = []
"""The version store's migrations, as :data:`MIGRATIONS` (append only)."""


def latest_version(migrations: list[Migration] | None = None) -> int:
    """The schema version this code writes (with :data:`MIGRATIONS` unless told others)."""
    return 1 + len(MIGRATIONS if migrations is None else migrations)


def prepare_versions(conn: Connection, path: Path | str, dialect: Dialect = SQLITE) -> None:
    """Give a version store its version-1 tables and ``meta`` (inside the caller's
    transaction): an empty file gets the tables; a store made before the ``meta`` table
    (its five tables, no marker) is stamped version 1; any other file is refused."""
    tables = {row[0] for row in conn.execute(dialect.list_tables)}
    if "meta" in tables:
        return
    if not tables:
        for statement in dialect.render(VERSIONS_SCHEMA).split(";"):  # executescript COMMITs
            if statement.strip():
                conn.execute(statement)
    elif not VERSIONS_TABLES.issubset(tables):
        raise NotARepository(path, "a database, but not xyleme's version store")
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)",
        [("application", VERSIONS_APPLICATION), ("schema_version", "1")],
    )


SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE pages (
  id INTEGER PRIMARY KEY, url TEXT NOT NULL, discovered_at DOUBLE PRECISION,
  type TEXT NOT NULL DEFAULT 'UNKNOWN', status BIGINT, reason TEXT,
  first_access DOUBLE PRECISION, last_access DOUBLE PRECISION,
  last_change DOUBLE PRECISION, last_modified DOUBLE PRECISION, etag TEXT, md5 TEXT,
  content_type TEXT, size BIGINT, refreshes BIGINT NOT NULL DEFAULT 0,
  unchanged_accesses BIGINT NOT NULL DEFAULT 0, failures BIGINT NOT NULL DEFAULT 0,
  importance DOUBLE PRECISION, interest DOUBLE PRECISION, opic_cash DOUBLE PRECISION,
  opic_importance DOUBLE PRECISION, change_rate DOUBLE PRECISION, change_rate_method TEXT,
  next_refresh DOUBLE PRECISION, redirect_to BIGINT);
CREATE UNIQUE INDEX pages_by_url ON pages (url);
CREATE TABLE links (
  id INTEGER PRIMARY KEY, children {blob} NOT NULL, extra BIGINT NOT NULL DEFAULT 0,
  dependencies {blob});
CREATE TABLE observations (id INTEGER PRIMARY KEY, history {blob} NOT NULL);
CREATE TABLE load_status (id INTEGER PRIMARY KEY, status TEXT NOT NULL, detail TEXT);
CREATE TABLE waiting (dependency BIGINT, page BIGINT, PRIMARY KEY (dependency, page));
CREATE INDEX waiting_by_page ON waiting (page);
CREATE TABLE rejected (
  seq {serial}, url TEXT NOT NULL, reason TEXT NOT NULL, referrer BIGINT,
  at DOUBLE PRECISION);
CREATE TABLE state (key TEXT PRIMARY KEY, value {blob} NOT NULL)
"""
"""Version 1 of the metadata schema, in the SQL both engines take (``{blob}`` and
``{serial}`` are the engine's, :class:`~metadata.dialect.Dialect`). The types are
PostgreSQL's; SQLite gives ``DOUBLE PRECISION`` and ``BIGINT`` the affinities REAL and
INTEGER, and ``INTEGER PRIMARY KEY`` stays its rowid."""


def create_schema(conn: Connection, dialect: Dialect = SQLITE) -> None:
    """Create the version-1 tables on an empty database (no transaction of its own)."""
    for statement in [*dialect.render(SCHEMA).split(";"), *dialect.functions]:
        conn.execute(statement)
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)",
        [("application", APPLICATION), ("schema_version", "1")],
    )


def schema_version(conn: Connection) -> int:
    """The version recorded in ``meta`` (raises the engine's error on a foreign database)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0])


def migrate(conn: Connection, path: Path, migrations: list[Migration] | None = None) -> int:
    """Bring the schema to :func:`latest_version` inside the caller's transaction, with
    ``migrations`` (:data:`MIGRATIONS`, or :data:`VERSIONS_MIGRATIONS` for the version store).

    Returns the version found before migrating; raises :class:`SchemaTooNew` when the file
    was written by a newer xyleme.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    found = schema_version(conn)
    latest = latest_version(migrations)
    if found > latest:
        raise SchemaTooNew(path, found, latest)
    for version in range(found, latest):
        migrations[version - 1](conn)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version + 1),))
    return found
