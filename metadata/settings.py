"""The metadata manager's settings; they follow :mod:`conventions` like every package's."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

SynchronousMode = Literal["OFF", "NORMAL", "FULL", "EXTRA"]
BodyPlace = Literal["rows", "files"]


@dataclass(frozen=True, slots=True, config=SETTINGS)
class MetadataSettings:
    """How the metadata manager stores its data; every field has a documented default."""

    observation_limit: Annotated[int, Field(ge=2, le=100_000)] = 64
    """accesses kept per page for the change-rate estimators (§6.1); oldest dropped"""
    rejected_limit: Annotated[int, Field(ge=1, le=100_000_000)] = 10_000
    """rows kept in the rejected-links table; oldest dropped"""
    busy_timeout: Annotated[float, Field(ge=0.0, le=3600.0)] = 10.0
    """seconds a writer waits for another process's write lock"""
    synchronous: SynchronousMode = "NORMAL"
    """durability: NORMAL survives a killed process, FULL also a power cut (SQLite's
    synchronous; PostgreSQL commits with synchronous_commit off below FULL)"""
    cache_mb: Annotated[int, Field(ge=1, le=65_536)] = 64
    """SQLite page cache per connection, in MiB"""
    pool_size: Annotated[int, Field(ge=2, le=100)] = 4
    """PostgreSQL: connections the store's pool keeps at most (a writer, a scanner, exports)"""


@dataclass(frozen=True, slots=True, config=SETTINGS)
class StoreSettings:
    """Where the repository's metadata lives (``[store]`` in ``xyleme.toml``)."""

    url: Annotated[str, Field(max_length=4096, pattern=r"^$|^(sqlite|postgresql|postgres)://")] = ""
    """the metadata store: empty for metadata.db in the repository (SQLite), or
    postgresql://user@host:port/dbname (set by `xyleme init --db`)"""
    bodies: BodyPlace = "rows"
    """where the XML version bodies go: rows of the version store (zstd, in PostgreSQL when
    url names one), or files addressed by URL-Id and MD5 under bodies_path"""
    bodies_path: Annotated[str, Field(max_length=4096)] = ""
    """files: the folder of the bodies, one path every worker mounts (default
    documents/bodies in the repository)"""
