"""A batch of loads: the writes of many documents, made in two transactions at its end.

Storing a version and telling the metadata manager about it cost a transaction each per
document when made one by one; a batch collects them (versions, children, types, statuses)
and makes them together: first the metadata (one transaction: URL-Ids of the links,
Link-Data, types, Status-Data), then the versions (one transaction of the repository). In
that order a crash between the two leaves a document whose new version is not stored yet:
its next fetch differs from the stored MD5 and is loaded again, links and all.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from loader.interfaces import MetadataPort
from loader.records import LoadOutcome, LoadResult
from loader.repository import DocumentRepository, NewVersion
from metadata.types import LoadStatus, PageType


@dataclass
class PendingWrites:
    """What the documents of a batch loaded so far still have to write."""

    versions: list[NewVersion] = field(default_factory=list)
    links: list[tuple[int, list[str], list[str]]] = field(default_factory=list)
    types: list[tuple[int, PageType, str | None]] = field(default_factory=list)
    statuses: list[tuple[int, LoadStatus, str | None]] = field(default_factory=list)
    url_ids: set[int] = field(default_factory=set)
    link_counts: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

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

    def add_version(self, new: NewVersion, links: list[str], dependencies: list[str]) -> None:
        self.url_ids.add(new.url_id)
        self.versions.append(new)
        self.links.append((new.url_id, links, dependencies))

    def flush(self, metadata: MetadataPort, repository: DocumentRepository) -> None:
        """Make the pending writes: the metadata's in one transaction, then the versions."""
        if not self.url_ids:
            return
        with metadata.transaction():
            rows = []
            for url_id, links, dependencies in self.links:
                urls = links + dependencies
                ids = metadata.ids_for(urls, referrer=url_id) if urls else []
                children = [i for i in dict.fromkeys(ids[: len(links)]) if i is not None]
                needed = [i for i in dict.fromkeys(ids[len(links) :]) if i is not None]
                rows.append((url_id, children, needed))
            if rows:
                metadata.set_children_many(rows)
            if self.types:
                metadata.set_type_many(self.types)
            if self.statuses:
                metadata.set_status_many(self.statuses)
        stored = repository.store_many(self.versions)
        for new, info, (_, children, needed) in zip(self.versions, stored, rows, strict=True):
            self.link_counts[new.url_id, info.version] = (len(children), len(needed))
        self.versions, self.links, self.types, self.statuses = [], [], [], []
        self.url_ids = set()

    def finished(self, result: LoadResult) -> LoadResult:
        """A stored document's result with the counts of links and dependencies recorded."""
        if result.outcome is not LoadOutcome.STORED:
            return result
        counts = self.link_counts.get((result.url_id, result.version))
        if counts is None:
            return result
        return replace(result, links=counts[0], dependencies=counts[1])
