"""The named errors of the metadata manager: every failure a caller can act on has its own."""

from __future__ import annotations

from pathlib import Path


class MetadataError(Exception):
    """Base class of every error the metadata manager raises."""


class InvalidURL(MetadataError):
    """A URL that never gets a URL-Id (no host, a scheme other than http/https, too long…)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"invalid URL {url[:200]!r}: {reason}")
        self.url = url
        self.reason = reason


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
