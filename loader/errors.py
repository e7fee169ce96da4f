"""Named exceptions of the loader.

A :class:`DocumentRejected` is never a crash: the loader turns it into data (the page becomes
type ERROR with :attr:`DocumentRejected.reason`, which names the line and column when lxml
gives them) and the previous good version stays in the repository.
"""

from __future__ import annotations

# The version store's own errors (metadata.errors), named here too for the loader's readers.
from metadata.errors import DocumentNotFound as DocumentNotFound
from metadata.errors import RepositoryCorrupt as RepositoryCorrupt
from metadata.errors import VersionNotFound as VersionNotFound


class LoaderError(Exception):
    """Base of every error the loader raises."""


class DocumentRejected(LoaderError):
    """A document the loader refuses to load; ``reason`` is what gets recorded."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        where = ""
        if line is not None:
            where = f" (line {line})" if column is None else f" (line {line}, column {column})"
        self.reason = f"{reason}{where}"
        super().__init__(self.reason)


class MalformedDocument(DocumentRejected):
    """Not well-formed XML."""


class EncodingProblem(DocumentRejected):
    """An unknown encoding name, or bytes that are not in the announced encoding."""


class EntityExpansionRefused(DocumentRejected):
    """Entity expansion past the limits: billion laughs, quadratic blowup, too many entities."""


class DocumentTooLarge(DocumentRejected):
    """A document over ``max_document_bytes``."""


class DocumentTooDeep(DocumentRejected):
    """Element nesting deeper than ``max_depth``."""


class DependencyFailed(DocumentRejected):
    """A DTD, entity or schema the document needs could not be fetched, or never came."""


class QueryError(LoaderError):
    """An XPath expression or namespace binding that cannot be evaluated."""


class QueryTimeout(LoaderError):
    """A query that ran past its time limit and was stopped; ``partial`` holds the matches
    found before it was (a caller shows them with a warning rather than losing them)."""

    def __init__(self, message: str, partial: list | None = None) -> None:
        super().__init__(message)
        self.partial = partial or []
