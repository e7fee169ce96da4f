"""Revalidation: a refreshed DTD, entity or schema checks again the documents that used it.

The repository knows which stored documents used a dependency; when the dependency's body
changes, the latest version of each is checked again and its new validity (and the loaded
status detail that names it) recorded. The check itself is the loader's, handed in.
"""

from __future__ import annotations

from collections.abc import Callable

from loader.errors import DocumentRejected
from loader.interfaces import MetadataPort
from loader.records import Validity
from loader.settings import LoaderSettings
from metadata.types import LoadStatus
from metadata.versions import VersionStore

# A stored body and its URL -> its validity now, or the dependencies to fetch first
# (raises DocumentRejected when the new dependency makes it unreadable).
Validate = Callable[[bytes, str], Validity | tuple[str, ...]]


def revalidate(
    dependency_id: int,
    repository: VersionStore,
    metadata: MetadataPort,
    settings: LoaderSettings,
    validate: Validate,
) -> list[str]:
    """Check again the latest version of every document that used ``dependency_id``; one
    note per document checked or left as it was.

    A document the new dependency makes unreadable, or that now needs a dependency not
    cached yet, keeps its validity and gets a note; streamed documents are not checked.
    """
    notes = []
    for url_id in repository.dependants(dependency_id):
        latest = repository.latest(url_id)
        if latest is None or latest.size > settings.stream_threshold_bytes:
            continue
        url = repository.document(url_id).url
        try:
            validity = validate(repository.read(url_id, latest.version), url)
        except DocumentRejected as rejected:
            notes.append(f"{url}: not revalidated: {rejected.reason}")
            continue
        if not isinstance(validity, Validity):
            notes.append(f"{url}: not revalidated: needs {', '.join(validity)}")
            continue
        if validity == latest.validity:
            continue
        repository.set_validity(url_id, latest.version, validity)
        verdict = validity.verdict
        status = metadata.status(url_id)
        if status is not None and status[0] is LoadStatus.LOADED:
            metadata.set_status(url_id, LoadStatus.LOADED, f"version {latest.version}, {verdict}")
        notes.append(f"{url}: version {latest.version} revalidated: {verdict}")
    return notes
