"""The warehouse: every stored version of every XML document, content-addressed by MD5.

Layout under ``DIR/documents/``::

    docs/<url_id // 1000>/<url_id>.json         versions of the document, newest last
    docs/<url_id // 1000>/<url_id>.<md5>.xml    the bodies, one file per distinct content
    changes.log                                 one JSON line per stored version

An unchanged refresh stores nothing (same MD5); a document that goes back to an earlier
content shares that body file. Reading the latest or a given version is one small JSON read
and one file read. Writes go through a temporary file and ``os.replace``, so a crash leaves
the previous state. The repository holds no SQL: URL-Ids come from the metadata manager.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from loader.dependencies import write_atomically
from loader.errors import DocumentNotFound, VersionNotFound
from loader.records import Validity, VersionInfo


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A document's entry in the repository: its URL and versions, oldest first."""

    url_id: int
    url: str
    versions: tuple[VersionInfo, ...]

    @property
    def latest(self) -> VersionInfo:
        return self.versions[-1]


@dataclass(frozen=True, slots=True)
class Change:
    """One line of the change log: a new version of a document was stored."""

    url_id: int
    url: str
    version: int
    md5: str
    fetched_at: float


class DocumentRepository:
    """Versions of XML documents on disk (see the module docstring for the layout)."""

    def __init__(self, folder: Path, versions_kept: int = 10) -> None:
        if versions_kept < 1:
            raise ValueError("a repository keeps at least one version per document")
        self.folder = Path(folder)
        self.versions_kept = versions_kept
        self._docs = self.folder / "docs"
        self._docs.mkdir(parents=True, exist_ok=True)
        self._change_log = self.folder / "changes.log"
        self._log: TextIO | None = None
        self._log_lock = threading.Lock()

    def _shard(self, url_id: int) -> Path:
        return self._docs / f"{url_id // 1000:06d}"

    def _body(self, url_id: int, md5: str) -> Path:
        return self._shard(url_id) / f"{url_id}.{md5}.xml"

    def document(self, url_id: int) -> StoredDocument:
        """The document's entry; raises :class:`DocumentNotFound` if nothing is stored."""
        try:
            data = json.loads((self._shard(url_id) / f"{url_id}.json").read_bytes())
        except FileNotFoundError:
            raise DocumentNotFound(f"no stored document with URL-Id {url_id}") from None
        versions = tuple(VersionInfo.from_dict(v) for v in data["versions"])
        return StoredDocument(data["url_id"], data["url"], versions)

    def latest(self, url_id: int) -> VersionInfo | None:
        """The newest stored version, or None when the document was never stored."""
        try:
            return self.document(url_id).latest
        except DocumentNotFound:
            return None

    def version(self, url_id: int, version: int | None = None) -> VersionInfo:
        """A given version (the latest when ``version`` is None)."""
        document = self.document(url_id)
        if version is None:
            return document.latest
        for info in document.versions:
            if info.version == version:
                return info
        kept = ", ".join(str(v.version) for v in document.versions)
        raise VersionNotFound(f"document {url_id} has no version {version} (versions kept: {kept})")

    def path_of(self, url_id: int, version: int | None = None) -> Path:
        """The file holding a version's body (read it in chunks for large documents)."""
        return self._body(url_id, self.version(url_id, version).md5)

    def read(self, url_id: int, version: int | None = None) -> bytes:
        """A version's body (the latest when ``version`` is None)."""
        return self.path_of(url_id, version).read_bytes()

    def store(
        self,
        url_id: int,
        url: str,
        body: bytes | Path,
        md5: str,
        fetched_at: float,
        validity: Validity,
    ) -> VersionInfo:
        """Add a version; the body file is written only if no kept version has that MD5.

        The caller has checked that ``md5`` differs from the latest version's (an unchanged
        refresh is not a version).
        """
        shard = self._shard(url_id)
        try:
            previous = self.document(url_id).versions
        except DocumentNotFound:
            previous = ()
            shard.mkdir(exist_ok=True)
        if md5 not in {v.md5 for v in previous}:
            temporary = shard / f".{url_id}.{md5}.tmp"
            if isinstance(body, bytes):
                temporary.write_bytes(body)
            else:
                shutil.copyfile(body, temporary)
            temporary.replace(self._body(url_id, md5))
        size = len(body) if isinstance(body, bytes) else body.stat().st_size
        number = previous[-1].version + 1 if previous else 1
        info = VersionInfo(number, md5, fetched_at, size, validity)
        kept = (*previous, info)[-self.versions_kept :]
        index = {"url_id": url_id, "url": url, "versions": [v.as_dict() for v in kept]}
        write_atomically(shard / f"{url_id}.json", json.dumps(index).encode())
        for dropped in {v.md5 for v in previous} - {v.md5 for v in kept}:
            self._body(url_id, dropped).unlink(missing_ok=True)
        change = {"url_id": url_id, "url": url, "version": number, "md5": md5, "at": fetched_at}
        with self._log_lock:  # loader worker threads share the log
            if self._log is None:
                self._log = open(self._change_log, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            self._log.write(json.dumps(change) + "\n")  # line-buffered: readers see whole lines
        return info

    def close(self) -> None:
        """Close the change log (reopened on the next store)."""
        with self._log_lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def documents(self, url_prefix: str = "") -> Iterator[StoredDocument]:
        """Every stored document (whose URL starts with ``url_prefix``), by URL-Id."""
        indexes = self._docs.glob("*/*.json")
        for index in sorted(indexes, key=lambda p: (p.parent.name, int(p.stem))):
            document = self.document(int(index.stem))
            if document.url.startswith(url_prefix):
                yield document

    def changes(self, since: float = float("-inf")) -> Iterator[Change]:
        """Versions stored with a fetch time at or after ``since``, in the order stored."""
        if not self._change_log.exists():
            return
        with open(self._change_log, encoding="utf-8") as log:
            for line in log:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a crash while it was appended
                if entry["at"] >= since:
                    yield Change(
                        entry["url_id"], entry["url"], entry["version"], entry["md5"], entry["at"]
                    )
