"""A batch of loads: the writes of many documents, made in two transactions at its end.

Storing a version and telling the metadata manager about it cost a transaction each per
document when made one by one; a batch collects them (versions, children, types, statuses)
and makes them together: first the metadata (one transaction: URL-Ids of the links,
Link-Data, types, Status-Data), then the versions (one transaction of the repository). In
that order a crash between the two leaves a document whose new version is not stored yet:
its next fetch differs from the stored MD5 and is loaded again, links and all.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from loader.admission import LinkAdmission, Refusals
from loader.interfaces import MetadataPort
from loader.records import LoadOutcome, LoadResult, VersionInfo
from metadata import InvalidURL, LoadStatus, NewVersion, PageType, VersionStore, canonicalize_url

WAITING_STATUSES = frozenset(
    {LoadStatus.WAITING_DTD, LoadStatus.WAITING_ENTITY, LoadStatus.WAITING_SCHEMA}
)


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What the loader reads of a page before loading its body."""

    latest: VersionInfo | None  # its newest stored version
    status: tuple[LoadStatus, str | None] | None  # its Status-Data
    awaited: bool  # documents wait on it (then it is a dependency)

    @property
    def waiting(self) -> bool:
        """Whether it is parked (its status says it waits for a dependency)."""
        return self.status is not None and self.status[0] in WAITING_STATUSES


class BatchReads:
    """The :class:`DocumentState` of every page of a batch, read for all of them at once.

    Reading them page by page cost three queries per document. The states stay right until
    the loader writes: every write (:meth:`stale`) makes the pages still ahead be read again
    together, at the next :meth:`take`. A page outside the batch (a parked document a
    dependency's arrival retries) is read on its own.
    """

    def __init__(self, read: Callable[[list[int]], dict[int, DocumentState]]) -> None:
        self._read = read
        self._ahead: Counter[int] = Counter()
        self._known: dict[int, DocumentState] | None = None

    def expect(self, url_ids: Iterable[int]) -> None:
        """The pages of the batch, before any is loaded."""
        self._ahead.update(url_ids)
        self._known = None

    def stale(self) -> None:
        """Something was written: read the pages ahead again before using their states."""
        self._known = None

    def take(self, url_id: int) -> DocumentState:
        """The state of a page about to be loaded."""
        if self._ahead[url_id] <= 0:
            return self._read([url_id])[url_id]
        if self._known is None:
            self._known = self._read(list(self._ahead))
        self._ahead[url_id] -= 1
        if not self._ahead[url_id]:
            del self._ahead[url_id]
        return self._known[url_id]


@dataclass
class PendingWrites:
    """What the documents of a batch loaded so far still have to write."""

    reads: BatchReads
    admission: LinkAdmission = field(default_factory=LinkAdmission)
    versions: list[NewVersion] = field(default_factory=list)
    links: list[tuple[int, list[str], list[str]]] = field(default_factory=list)
    types: list[tuple[int, PageType, str | None]] = field(default_factory=list)
    statuses: list[tuple[int, LoadStatus, str | None]] = field(default_factory=list)
    url_ids: set[int] = field(default_factory=set)
    link_counts: dict[tuple[int, int], tuple[tuple[tuple[int, str], ...], int]] = field(
        default_factory=dict
    )

    def holds(self, url_id: int) -> bool:
        """Whether a write for this document is pending (then flush before loading it again:
        its latest version and status must be read as written)."""
        return url_id in self.url_ids

    def add_type(self, url_id: int, page_type: PageType) -> None:
        self.url_ids.add(url_id)
        self.types.append((url_id, page_type, None))

    def add_status(self, url_id: int, status: LoadStatus, detail: str) -> None:
        self.url_ids.add(url_id)
        self.statuses.append((url_id, status, detail))

    def add_version(
        self,
        new: NewVersion,
        links: list[str],
        dependencies: list[str],
        sitemaps: Iterable[str] = (),
    ) -> None:
        """A stored version and its links; ``sitemaps``, the links an index names as
        sitemaps, are admitted as such (:class:`LinkAdmission`)."""
        self.admission.sitemaps.update(key for key in map(_canonical, sitemaps) if key)
        self.url_ids.add(new.url_id)
        self.versions.append(new)
        self.links.append((new.url_id, links, dependencies))

    def flush(self, metadata: MetadataPort, repository: VersionStore) -> None:
        """Make the pending writes: the metadata's in one transaction, then the versions."""
        if not self.url_ids:
            return
        with metadata.transaction():
            named = _link_rows(metadata, self.links, self.admission)
            self.admission.sitemaps.clear()
            rows = [
                (url_id, [i for i, _ in children], needed) for url_id, children, needed in named
            ]
            if rows:
                metadata.set_children_many(rows)
            if self.types:
                metadata.set_type_many(self.types)
            if self.statuses:
                metadata.set_status_many(self.statuses)
        versions = [
            new._replace(dependencies=tuple(needed))
            for new, (_, _, needed) in zip(self.versions, rows, strict=True)
        ]
        stored = repository.store_many(versions)
        for new, info, (_, children, needed) in zip(self.versions, stored, named, strict=True):
            self.link_counts[new.url_id, info.version] = (tuple(children), len(needed))
        self.versions, self.links, self.types, self.statuses = [], [], [], []
        self.url_ids = set()

    def finished(self, result: LoadResult) -> LoadResult:
        """A stored document's result with the counts of links and dependencies recorded."""
        if result.outcome is not LoadOutcome.STORED:
            return result
        counts = self.link_counts.get((result.url_id, result.version))
        if counts is None:
            return result
        children, dependencies = counts
        return replace(result, links=len(children), children=children, dependencies=dependencies)


def _link_rows(
    metadata: MetadataPort,
    documents: list[tuple[int, list[str], list[str]]],
    admission: LinkAdmission,
) -> list[tuple[int, list[tuple[int, str]], list[int]]]:
    """``(url_id, children, dependencies)`` of a batch's documents, the children as
    ``(URL-Id, canonical URL)`` and the dependencies as URL-Ids, from one
    ``ids_for`` call for all their URLs (canonicalised here; the URLs the metadata manager
    refuses are recorded with the document that named them, as ``ids_for`` does). A link the
    crawl does not admit (``admission``) is recorded as rejected, never given a URL-Id. A
    document's link to itself is a child, once, as an HTML page's is (ARCHITECTURE.md "The
    link matrix"); an Atom feed's ``rel="self"`` is no link at all (loader.vocabularies)."""
    keyed = []  # per document, the canonical links admitted, and its dependencies
    refused: Refusals = defaultdict(list)
    for url_id, links, dependencies in documents:
        urls = (*links, *dependencies)
        keys = [_canonical(url) for url in urls]
        invalid = [url for url, key in zip(links, keys, strict=False) if key is None]
        invalid = admission.judged(invalid, url_id, refused)  # an off-site one: out of scope
        invalid += [
            url for url, key in zip(dependencies, keys[len(links) :], strict=True) if key is None
        ]
        if invalid:
            metadata.ids_for(invalid, referrer=url_id)  # records why each was refused
        valid = (key for key in keys[: len(links)] if key is not None)
        keyed.append((admission.admitted(valid, url_id, refused), keys[len(links) :]))
    LinkAdmission.record(metadata, refused)
    wanted = list(
        dict.fromkeys(key for pair in keyed for keys in pair for key in keys if key is not None)
    )
    ids = dict(zip(wanted, metadata.ids_for(wanted, canonical=True), strict=True))
    del wanted
    rows = []
    for (url_id, _, _), (links, needed) in zip(documents, keyed, strict=True):
        children: dict[int, str] = {}  # in link order, each once
        for key in links:
            child = ids.get(key)
            if child is not None:
                children.setdefault(child, key)
        found = [ids.get(key) for key in needed if key is not None]
        rows.append(
            (url_id, list(children.items()), [i for i in dict.fromkeys(found) if i is not None])
        )
    return rows


def _canonical(url: str) -> str | None:
    """The canonical URL (the same string when it already is), or None if refused."""
    try:
        key = canonicalize_url(url)
    except InvalidURL:
        return None
    return url if key == url else key
