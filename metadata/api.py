"""The store's contract, one typed Protocol per subject: what a second backend implements.

:class:`metadata.Metadata` (SQLite) implements :class:`MetadataAPI`, the union of the
subjects below; :class:`metadata.versions.VersionStore` implements :class:`VersionsAPI` and
:class:`metadata.revisits.RevisitIndex` :class:`RevisitsAPI`. A PostgreSQL backend (issue 20)
implements the same Protocols with the same behaviour:

* every write call is one transaction (all of it commits, or none), and calls made inside
  :meth:`CoreAPI.transaction` commit together;
* the whole-table reads (:meth:`RanksAPI.refresh_view`, :meth:`FetchesAPI.observation_history`,
  :meth:`LinksAPI.link_matrix`, :meth:`LinksAPI.export_links`) read one committed state and
  never hold the writers back; inside :meth:`CoreAPI.snapshot` they read the same one;
* URL-Ids are dense positive integers given in order of discovery and never change;
* errors are the store's own (:mod:`metadata.errors`): :class:`~metadata.errors.UnknownPage`,
  :class:`~metadata.errors.InvalidURL`, and :class:`~metadata.errors.StoreError` (a full
  disk is :class:`~metadata.errors.StoreFull`) for whatever the database itself reports —
  never the driver's exceptions.

The method docstrings live on the SQLite implementation (``metadata/page_ids.py`` and its
siblings); ``tests/metadata/test_metadata_api.py`` checks that it matches these signatures, and a
second backend runs the same check.

>>> import tempfile, pathlib
>>> from metadata import Metadata
>>> from metadata.api import MetadataAPI
>>> path = pathlib.Path(tempfile.mkdtemp()) / "metadata.db"
>>> with Metadata.create(path) as md:
...     isinstance(md, MetadataAPI)
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, Self, runtime_checkable

import numpy as np

from metadata.cash_transfers import CashPart, CashTotal
from metadata.clock import Clock
from metadata.heartbeats import Heartbeat
from metadata.link_matrix import LinkMatrix
from metadata.revisits import Stored
from metadata.types import FetchResult, LoadStatus, Observation, PageRecord, PageType, RejectedLink
from metadata.version_records import Change, NewVersion, StoredDocument, Validity, VersionInfo


@runtime_checkable
class CoreAPI(Protocol):
    """Opening, closing, and grouping calls: transactions and read snapshots."""

    path: Path
    readonly: bool
    clock: Clock

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...


@runtime_checkable
class PageIdsAPI(Protocol):
    """URL-Ids (Map-Data, paper §4): canonical URL ↔ dense id, and the refused URLs."""

    def ids_for(
        self,
        urls: Iterable[str],
        *,
        referrer: int | None = None,
        create: bool = True,
        canonical: bool = False,
    ) -> list[int | None]: ...

    def id_for(self, url: str, create: bool = True) -> int | None: ...

    def url_of(self, url_id: int) -> str: ...

    def urls_of(self, ids: Iterable[int]) -> list[str]: ...

    def mark_sitemaps(self, url_ids: Iterable[int]) -> None: ...

    def sitemap_urls(self) -> set[str]: ...

    def reject(
        self, urls: str | Iterable[str], reason: str, referrer: int | None = None
    ) -> None: ...

    def reject_many(self, refusals: Iterable[tuple[str, str, int | None]]) -> None: ...

    def rejected(self, limit: int = 100) -> list[RejectedLink]: ...

    def max_url_id(self) -> int: ...


@runtime_checkable
class FetchesAPI(Protocol):
    """Fetch records and observations (Refresh-Data, §4 and §6.1.1), and page types."""

    def record_fetch(self, result: FetchResult) -> bool | None: ...

    def record_fetches(self, results: Sequence[FetchResult]) -> list[bool | None]: ...

    def page(self, url_id: int) -> PageRecord: ...

    def page_by_url(self, url: str) -> PageRecord: ...

    def observations(self, url_id: int) -> list[Observation]: ...

    def observation_history(self) -> dict[str, np.ndarray]: ...

    def set_type(self, url_id: int, page_type: PageType, reason: str | None = None) -> None: ...

    def set_type_many(self, rows: Iterable[tuple[int, PageType, str | None]]) -> None: ...

    def content_md5s(self, page_type: PageType) -> dict[int, str]: ...

    def count_by_type(self) -> dict[PageType, int]: ...


@runtime_checkable
class LinksAPI(Protocol):
    """Link-Data (§4): each page's children and dependencies, and the rankings' matrix."""

    def set_children(
        self,
        url_id: int,
        child_ids: Iterable[int] | np.ndarray,
        *,
        dependencies: Iterable[int] | np.ndarray = (),
    ) -> None: ...

    def set_children_many(
        self, rows: Iterable[tuple[int, Iterable[int], Iterable[int]]]
    ) -> None: ...

    def children(self, url_id: int) -> np.ndarray: ...

    def children_many(self, url_ids: Iterable[int]) -> dict[int, np.ndarray]: ...

    def extra_children(self, url_id: int) -> int: ...

    def dependencies(self, url_id: int) -> np.ndarray: ...

    def parents(self, url_id: int) -> np.ndarray: ...

    def export_links(
        self, chunk_edges: int = 1 << 20
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...

    def link_matrix(
        self, chunk_edges: int = 1 << 20, *, in_scope: Callable[[str], bool] | None = None
    ) -> AbstractContextManager[LinkMatrix]: ...


@runtime_checkable
class StatusAPI(Protocol):
    """Status-Data (§4): a document's loading status and the dependencies it waits for."""

    def set_status(
        self,
        url_id: int,
        status: LoadStatus,
        detail: str | None = None,
        waiting_for: Iterable[int] = (),
    ) -> None: ...

    def set_status_many(self, rows: Iterable[tuple[int, LoadStatus, str | None]]) -> None: ...

    def status(self, url_id: int) -> tuple[LoadStatus, str | None] | None: ...

    def statuses(self, url_ids: Iterable[int]) -> dict[int, tuple[LoadStatus, str | None]]: ...

    def awaited(self, dependency_ids: Iterable[int]) -> set[int]: ...

    def waiting_for(self, url_id: int) -> list[int]: ...

    def waiting_on(self, dependency_id: int) -> list[int]: ...


@runtime_checkable
class NamedStateAPI(Protocol):
    """Small named blobs alone: what the command table needs, which the light
    :class:`~metadata.glance.Glance` opened writable gives without the manager."""

    def put_state(self, key: str, value: bytes) -> None: ...

    def get_state(self, key: str) -> bytes | None: ...

    def delete_state(self, key: str) -> bool: ...


@runtime_checkable
class StateAPI(NamedStateAPI, Protocol):
    """Small named blobs (checkpoints, commands) and the repository's clock."""

    def state_keys(self, prefix: str = "") -> list[str]: ...

    def latest_time(self) -> float | None: ...

    def repository_clock(
        self, speed: float | None = None, *, start: float | None = None, running: bool = True
    ) -> Clock: ...


@runtime_checkable
class RanksAPI(Protocol):
    """Scores (importance, interest, OPIC, change rates) and the refresh scan's view."""

    def set_scores(
        self,
        column: str,
        ids: Sequence[int] | np.ndarray,
        values: Sequence[float] | np.ndarray,
        *,
        method: str | None = None,
    ) -> None: ...

    def scores(self, column: str) -> tuple[np.ndarray, np.ndarray]: ...

    def refresh_view(self) -> dict[str, np.ndarray]: ...


@runtime_checkable
class ClaimsAPI(Protocol):
    """Due pages claimed by crawl workers, by part of the hosts, for a lease (issue 20)."""

    def claim_due(
        self,
        part: int,
        parts: int,
        worker: str,
        *,
        limit: int,
        due_by: float,
        lease_s: float,
        now: float | None = None,
        among: Iterable[int] | None = None,
    ) -> list[int]: ...

    def release_claims(self, url_ids: Iterable[int], worker: str) -> int: ...

    def claimed_by(self, worker: str) -> list[int]: ...

    def claimed_pages(self, url_ids: Iterable[int]) -> list[tuple[int, str, bool, bool]]: ...

    def renew_claims(self, url_ids: Iterable[int], worker: str, until: float) -> int: ...

    def finish_claims(
        self, url_ids: Iterable[int], worker: str, *, not_before: float | None = None
    ) -> int: ...

    def make_due(self, url_ids: Iterable[int], at: float) -> int: ...


@runtime_checkable
class WorkersAPI(Protocol):
    """The heartbeats of the crawl workers and coordinators sharing the store (issue 20)."""

    def heartbeat(self, heartbeat: Heartbeat, *, now: float) -> None: ...

    def workers(self, *, now: float | None = None) -> list[dict]: ...

    def forget_worker(self, name: str) -> bool: ...


@runtime_checkable
class CashTransfersAPI(Protocol):
    """OPIC's cash across crawl workers: each part's books and the transfers between parts
    (OPIC §4.1, issue 20)."""

    def open_cash_parts(self, parts: int) -> list[CashPart]: ...

    def cash_parts(self) -> list[CashPart]: ...

    def send_cash(
        self, from_part: int, batch: int, transfers: Mapping[int, tuple[np.ndarray, np.ndarray]]
    ) -> int: ...

    def take_cash(self, to_part: int) -> tuple[np.ndarray, np.ndarray]: ...

    def save_cash_part(self, book: CashPart) -> CashPart: ...

    def cash_total(self) -> CashTotal: ...

    def parts_of(self, url_ids: np.ndarray, parts: int) -> np.ndarray: ...

    def part_page_ids(self, part: int, parts: int) -> np.ndarray: ...


@runtime_checkable
class MetadataAPI(
    CoreAPI,
    PageIdsAPI,
    FetchesAPI,
    LinksAPI,
    StatusAPI,
    StateAPI,
    RanksAPI,
    ClaimsAPI,
    WorkersAPI,
    CashTransfersAPI,
    Protocol,
):
    """The whole metadata store of one repository: every subject above."""


@runtime_checkable
class VersionsAPI(Protocol):
    """XML versions (paper §2): every stored version of every document, by MD5.

    ``store_many`` stores a batch in one transaction; a body is kept once per document and
    content; the versions past the kept count are pruned with the bodies no kept version
    shares. Errors: :class:`~metadata.errors.DocumentNotFound`,
    :class:`~metadata.errors.VersionNotFound`, :class:`~metadata.errors.RepositoryCorrupt`.
    """

    def close(self) -> None: ...

    def document(self, url_id: int) -> StoredDocument: ...

    def latest(self, url_id: int) -> VersionInfo | None: ...

    def latest_many(self, url_ids: Sequence[int]) -> dict[int, VersionInfo]: ...

    def version(self, url_id: int, version: int | None = None) -> VersionInfo: ...

    def read(self, url_id: int, version: int | None = None) -> bytes: ...

    def dependants(self, dependency_id: int) -> list[int]: ...

    def set_validity(self, url_id: int, version: int, validity: Validity) -> None: ...

    def stored_bodies(self, url_id: int) -> list[str]: ...

    def documents(self, url_prefix: str = "") -> Iterator[StoredDocument]: ...

    def changes(self, since: float = float("-inf")) -> Iterator[Change]: ...

    def store(
        self,
        url_id: int,
        url: str,
        body: bytes | Path,
        md5: str,
        fetched_at: float,
        validity: Validity,
    ) -> VersionInfo: ...

    def store_many(self, new_versions: Sequence[NewVersion]) -> list[VersionInfo]: ...


@runtime_checkable
class RevisitsAPI(Protocol):
    """The archive's revisit index: per URL, the last WARC response record written.

    :meth:`put` keeps in memory; :meth:`commit` (after the WARC files are flushed) writes.
    """

    def get(self, url: str) -> Stored | None: ...

    def put(self, url: str, stored: Stored) -> None: ...

    def commit(self) -> None: ...

    def close(self) -> None: ...
