"""The typed records the loader hands back: load results (validity and stored versions are
the version store's records, :mod:`metadata.version_records`, re-exported here)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from metadata import Check, Validity, VersionInfo


class LoadOutcome(enum.StrEnum):
    """What :meth:`loader.Loader.load` did with a body."""

    STORED = "stored"  # a new version is in the repository
    UNCHANGED = "unchanged"  # same MD5 as the latest version: nothing new stored
    WAITING = "waiting"  # parked until its DTD / entities / schema arrive (Status-Data)
    FAILED = "failed"  # refused: the page is ERROR with the reason, the old version stays
    DEPENDENCY = "dependency"  # a DTD, entity or schema: cached, waiting documents retried


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The answer of the loader for one body handed to it."""

    url_id: int
    outcome: LoadOutcome
    version: int | None = None
    md5: str | None = None
    validity: Validity | None = None
    reason: str | None = None
    links: int = 0
    children: tuple[tuple[int, str], ...] = ()
    """For a stored document: its ``links`` children, ``(URL-Id, canonical URL)`` each (the
    links the crawl admits), so the crawler scouts them without reading them back."""
    sitemaps: tuple[str, ...] = ()
    """For a stored sitemap index: its entries (``<sitemap><loc>``), children too, which the
    crawler fetches as sitemaps (the suffix deny list does not refuse them)."""
    dependencies: int = 0
    waiting_for: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    retried: tuple[LoadResult, ...] = ()
    """For a dependency: the documents that waited on it, loaded again, each with its result
    (the crawler follows the links of those stored)."""


__all__ = ["Check", "LoadOutcome", "LoadResult", "Validity", "VersionInfo"]
