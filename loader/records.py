"""The typed records the loader hands back: validity, load results, stored versions."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


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
    dependencies: int = 0
    waiting_for: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    retried: tuple[LoadResult, ...] = ()
    """For a dependency: the documents that waited on it, loaded again, each with its result
    (the crawler follows the links of those stored)."""


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
