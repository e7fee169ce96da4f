"""The named errors of the metadata store: every failure a caller can act on has its own.

The store's engine errors (``sqlite3``'s, psycopg's) never leave the store:
:func:`translated` turns them into :class:`StoreError`, and a full disk into
:class:`StoreFull`, at the store's boundary, so callers catch the store's errors only.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:  # the PostgreSQL engine's errors, when the [postgres] extra is installed
    from psycopg import Error as _PostgresError
except ImportError:  # pragma: no cover - SQLite only
    _PostgresError = ()  # type: ignore[assignment,misc]

_POSTGRES_FULL = {"53100", "53200"}  # disk_full, out_of_memory (SQLSTATE class 53)


class MetadataError(Exception):
    """Base class of every error the metadata manager raises."""


class InvalidURL(MetadataError):
    """A URL that never gets a URL-Id (no host, a scheme other than http/https, too long…)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"invalid URL {url[:200]!r}: {reason}")
        self.url = url
        self.reason = reason


class URLTooLong(InvalidURL):
    """A URL valid in all but its length: ``canonical`` is its canonical form all the same,
    so whoever refuses it can say first whether it was in scope at all (an off-site link
    is out of scope, whatever its length)."""

    def __init__(self, url: str, reason: str, canonical: str) -> None:
        super().__init__(url, reason)
        self.canonical = canonical


class NotARepository(MetadataError):
    """A file that is missing, corrupt, or not a xyleme metadata database."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = Path(path)
        self.why = why


class RepositoryExists(MetadataError):
    """``Metadata.create`` (or ``xyleme init``) was pointed at an existing database."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(f"{path}: a repository already exists here")
        self.path = Path(path)


class SchemaTooNew(MetadataError):
    """The database was written by a newer xyleme whose schema this version does not know."""

    def __init__(self, path: str | Path, found: int, known: int) -> None:
        super().__init__(
            f"{path}: schema version {found} is newer than this xyleme knows ({known}); "
            "upgrade xyleme"
        )
        self.path = Path(path)
        self.found = found
        self.known = known


class UnknownPage(MetadataError):
    """A URL-Id or URL that the repository has never seen."""

    def __init__(self, what: int | str) -> None:
        super().__init__(f"no page {what!r} in the repository")
        self.what = what


class StoreError(MetadataError):
    """The database failed under a call (unreadable, locked past its timeout, I/O error).

    ``path`` names the database; the backend's own error is chained as ``__cause__``.
    """

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = Path(path)
        self.why = why

    def __reduce__(self) -> tuple[type, tuple[Path, str]]:
        """Pickled with its two arguments (a query's child process sends it back)."""
        return type(self), (self.path, self.why)


class StoreFull(StoreError):
    """The disk (or the database's quota) is full: nothing more can be written."""


@contextmanager
def translated(path: str | Path) -> Iterator[None]:
    """Raise the backend's errors met in the block as :class:`StoreError` or
    :class:`StoreFull` (our own errors pass through).

    >>> import sqlite3
    >>> try:
    ...     with translated("metadata.db"):
    ...         sqlite3.connect(":memory:").execute("SELECT * FROM nowhere")
    ... except StoreError as error:
    ...     print(error)
    metadata.db: database error (no such table: nowhere)
    """
    try:
        yield
    except sqlite3.Error as error:
        if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            raise StoreFull(path, f"disk full ({error})") from error
        raise StoreError(path, f"database error ({error})") from error
    except _PostgresError as error:
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if getattr(error, "sqlstate", None) in _POSTGRES_FULL:
            raise StoreFull(path, f"disk full ({why})") from error
        raise StoreError(path, f"database error ({why})") from error
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise StoreFull(path, f"disk full ({error})") from error
        raise


class DocumentNotFound(MetadataError):
    """The version store holds no document with that URL-Id or URL."""


class VersionNotFound(MetadataError):
    """The version store holds no such version of the document (never stored, or pruned)."""


class RepositoryCorrupt(StoreError):
    """The version store cannot be read (a damaged database or a missing body file)."""
