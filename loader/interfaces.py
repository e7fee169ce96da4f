"""The loader's contracts with its neighbours (docs/interfaces.md).

* :class:`DocumentSink` is how the crawler hands documents to the loader (the loader
  implements it);
* :class:`DependencyFetcher` is how the loader asks the crawler for DTDs, external entities and
  schemas (the crawler implements it, queueing the URL at priority 0, and hands the body back
  through :meth:`DocumentSink.load` when it arrives);
* :class:`MetadataPort` is the part of ``metadata.Metadata`` the loader writes through, so the
  loader can be tested without a database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

from loader.records import LoadResult
from metadata import PageType, StatusAPI

Body = bytes | Path
"""A fetched body: the bytes, or the path of the file the crawler spooled a large body to."""


class FetchedBody(NamedTuple):
    """One body handed to the loader, with the MD5 its fetch computed (None: the loader
    computes it; a body is hashed once on its road from the fetch to the store)."""

    url_id: int
    url: str
    body: Body
    headers: Mapping[str, str]
    fetched_at: float
    md5: str | None = None


@runtime_checkable
class DocumentSink(Protocol):
    """Where the crawler sends every XML page and every dependency it fetched for the loader.

    Calls are synchronous and CPU-bound (parsing): an asyncio caller runs them in a worker
    thread (lxml releases the GIL while it parses). The loader commits its metadata writes in
    its own transactions, after the crawler's fetch record.
    """

    def load(
        self,
        url_id: int,
        url: str,
        body: Body,
        headers: Mapping[str, str],
        fetched_at: float,
        md5: str | None = None,
    ) -> LoadResult:
        """Parse, validate, store and link one fetched body (or cache it as a dependency).

        ``md5`` is the body's MD5 when the caller has it (the crawler hashes as it reads)."""
        ...

    def load_many(self, fetched: Sequence[FetchedBody]) -> list[LoadResult]:
        """:meth:`load` each body, in order, with the writes of the batch made together."""
        ...

    def dependency_arrived(
        self, url_id: int, url: str, body: Body, fetched_at: float
    ) -> LoadResult:
        """A DTD, entity or schema the loader asked for (:class:`DependencyFetcher`) was
        fetched: cache it and load the documents that waited on it (``LoadResult.retried``)."""
        ...

    def dependency_failed(self, url_id: int, url: str, reason: str) -> list[LoadResult]:
        """A DTD / entity / schema the loader asked for could not be fetched.

        ``reason`` says why in a few words ("HTTP 404", "refused by robots.txt", "timeout",
        "too large", "outside the crawl scope"); it is kept with the documents that needed
        it, which are stored without it, ``not validated`` (issue 16). Only a document that
        is not well-formed without it fails.
        """
        ...

    def expire_waiting(self) -> list[LoadResult]:
        """Load the documents that waited longer than the dependency timeout, without what
        they wait for (called periodically: the crawler's ``lane.expire_waiting``)."""
        ...


@runtime_checkable
class DependencyFetcher(Protocol):
    """How the loader asks for a DTD, an external entity or a schema.

    ``request`` must not block: the crawler queues ``url`` at priority 0 and, when it has the
    body, calls :meth:`DocumentSink.dependency_arrived` with it (or
    :meth:`DocumentSink.dependency_failed`).
    """

    def request(self, url: str, referrer_id: int) -> None: ...


class MetadataPort(StatusAPI, Protocol):
    """The slice of ``metadata.Metadata`` the loader uses (see docs/interfaces.md): all of
    Status-Data (:class:`metadata.StatusAPI`), and these."""

    def id_for(self, url: str, create: bool = True) -> int | None: ...

    def ids_for(
        self, urls: Sequence[str], *, referrer: int | None = None, create: bool = True
    ) -> list[int | None]: ...

    def url_of(self, url_id: int) -> str: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def reject(self, urls: Iterable[str], reason: str, referrer: int | None = None) -> None: ...

    def set_children_many(
        self, rows: Iterable[tuple[int, Iterable[int], Iterable[int]]]
    ) -> None: ...

    def set_type(self, url_id: int, page_type: PageType, reason: str | None = None) -> None: ...

    def set_type_many(self, rows: Iterable[tuple[int, PageType, str | None]]) -> None: ...
