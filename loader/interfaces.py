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
from typing import Protocol, runtime_checkable

from loader.records import LoadResult
from metadata import LoadStatus, PageType

Body = bytes | Path
"""A fetched body: the bytes, or the path of the file the crawler spooled a large body to."""
FetchedBody = tuple[int, str, Body, Mapping[str, str], float]
"""One body handed to the loader: ``(url_id, url, body, headers, fetched_at)``."""


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
    ) -> LoadResult:
        """Parse, validate, store and link one fetched body (or cache it as a dependency)."""
        ...

    def dependency_failed(self, url_id: int, url: str, reason: str) -> list[LoadResult]:
        """A DTD / entity / schema the loader asked for could not be fetched.

        ``reason`` says why in a few words ("HTTP 404", "refused by robots.txt", "timeout",
        "too large", "outside the crawl scope"); it is kept with the documents that needed
        it, which are stored without it, ``not validated`` (issue 16). Only a document that
        is not well-formed without it fails.
        """
        ...


@runtime_checkable
class DependencyFetcher(Protocol):
    """How the loader asks for a DTD, an external entity or a schema.

    ``request`` must not block: the crawler queues ``url`` at priority 0 and, when it has the
    body, calls :meth:`DocumentSink.load` with it (or :meth:`DocumentSink.dependency_failed`).
    """

    def request(self, url: str, referrer_id: int) -> None: ...


class MetadataPort(Protocol):
    """The slice of ``metadata.Metadata`` the loader uses (see docs/interfaces.md)."""

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

    def set_status_many(self, rows: Iterable[tuple[int, LoadStatus, str | None]]) -> None: ...

    def set_status(
        self,
        url_id: int,
        status: LoadStatus,
        detail: str | None = None,
        waiting_for: Iterable[int] = (),
    ) -> None: ...

    def status(self, url_id: int) -> tuple[LoadStatus, str | None] | None: ...

    def statuses(self, url_ids: Iterable[int]) -> dict[int, tuple[LoadStatus, str | None]]: ...

    def waiting_on(self, dependency_id: int) -> list[int]: ...

    def awaited(self, dependency_ids: Iterable[int]) -> set[int]: ...
