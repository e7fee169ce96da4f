"""What the version store keeps with each stored version: its validity, its number, its MD5.

The loader decides these (it parses and validates); the store (:mod:`metadata.versions`)
keeps them. They live at the store's level so the store, and a second backend of it, know
the rows they hold without importing the loader.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple


class Check(enum.StrEnum):
    """The outcome of one validation (against a DTD, or against an XML Schema)."""

    VALID = "valid"
    INVALID = "invalid"
    NONE = "none"  # the document names no DTD / no schema
    # a streamed document (over stream_threshold_bytes) names one, but cannot be checked with
    # bounded memory: libxml2 checks an element's content on its children in the tree, which
    # the streaming frees, and lxml does not expose libxml2's streaming validator (xmlReader)
    STREAMED = "not validated: streamed"
    # a DTD, entity or schema it needs cannot be had (off-scope, 404, robots.txt, timeout,
    # too large): parsed for well-formedness without it; Validity.reason says which and why
    NOT_VALIDATED = "not validated"


@dataclass(frozen=True, slots=True)
class Validity:
    """What validation said of a document: kept with every stored version.

    ``errors`` holds the first validity errors (DTD first, then schema), each naming its line
    and column; ``reason`` says why a check is :attr:`Check.NOT_VALIDATED`.
    """

    dtd: Check = Check.NONE
    schema: Check = Check.NONE
    errors: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def valid(self) -> bool:
        """True unless a DTD or a schema the document names says it is invalid, or could not
        be checked for want of a dependency."""
        checks = (self.dtd, self.schema)
        return Check.INVALID not in checks and Check.NOT_VALIDATED not in checks

    @property
    def verdict(self) -> str:
        """``valid``, ``invalid: <first error>`` (a check that failed says more than one that
        could not be made) or ``not validated: <reason>``."""
        if Check.INVALID in (self.dtd, self.schema):
            return f"invalid: {self.errors[0]}"
        if Check.NOT_VALIDATED in (self.dtd, self.schema):
            return f"not validated: {self.reason}"
        return "valid"

    def as_dict(self) -> dict:
        data = {"dtd": self.dtd.value, "schema": self.schema.value, "errors": list(self.errors)}
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Validity:
        return cls(
            Check(data["dtd"]), Check(data["schema"]), tuple(data["errors"]), data.get("reason")
        )


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """One stored version of a document, as the repository's index records it."""

    version: int
    md5: str
    fetched_at: float
    size: int
    validity: Validity = field(default_factory=Validity)

    def as_dict(self) -> dict:
        return {
            "version": self.version,
            "md5": self.md5,
            "fetched_at": self.fetched_at,
            "size": self.size,
            "validity": self.validity.as_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> VersionInfo:
        return cls(
            data["version"],
            data["md5"],
            data["fetched_at"],
            data["size"],
            Validity.from_dict(data["validity"]),
        )


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A document's entry in the version store: its URL and versions, oldest first."""

    url_id: int
    url: str
    versions: tuple[VersionInfo, ...]

    @property
    def latest(self) -> VersionInfo:
        return self.versions[-1]


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of the change log: a new version of a document was stored."""

    url_id: int
    url: str
    version: int
    md5: str
    fetched_at: float


class NewVersion(NamedTuple):
    """A version to store: the body (bytes, or the file holding it) and what is known of it.

    The caller has checked that ``md5`` differs from the latest version's (an unchanged
    refresh is not a version); ``md5`` is the one computed while the body was fetched.
    """

    url_id: int
    url: str
    body: bytes | Path
    md5: str
    fetched_at: float
    validity: Validity
    dependencies: tuple[int, ...] = ()  # URL-Ids of the DTDs, entities and schemas it used
