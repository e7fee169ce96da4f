"""``xyleme export documents``: the stored XML, latest or every version, with its metadata.

Two shapes. JSON Lines: one object per version, ``{url, url_id, version, fetched_at, md5,
size, validity, body}`` (``body`` the text when it is UTF-8, else ``body_base64``). A folder
tree: one file per version under ``HOST/PATH`` names made safe for any file system, and a
``manifest.jsonl`` with the same fields but ``file`` instead of the body. Documents are read
one version at a time, so memory does not grow with the repository.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from loader.records import VersionInfo
from metadata.version_records import StoredDocument
from metadata.versions import VersionStore

MANIFEST = "manifest.jsonl"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 120  # bytes of a name part kept before it is shortened with a hash


def versions(
    repository: VersionStore, *, all_versions: bool, url_prefix: str = ""
) -> Iterator[tuple[StoredDocument, VersionInfo]]:
    """(document, version) pairs, by URL-Id, oldest version first; the latest only unless
    ``all_versions``."""
    for document in repository.documents(url_prefix):
        chosen = document.versions if all_versions else document.versions[-1:]
        for info in chosen:
            yield document, info


def metadata_of(document: StoredDocument, info: VersionInfo) -> dict:
    """A version's metadata, as the JSON Lines and the manifest give it."""
    fetched = datetime.fromtimestamp(info.fetched_at, UTC).isoformat().replace("+00:00", "Z")
    return {
        "url": document.url,
        "url_id": document.url_id,
        "version": info.version,
        "fetched_at": fetched,
        "md5": info.md5,
        "size": info.size,
        "validity": info.validity.as_dict(),
    }


def write_jsonl(
    repository: VersionStore, out: IO[str], *, all_versions: bool, url_prefix: str = ""
) -> int:
    """Every chosen version as one JSON object per line; returns the count."""
    count = 0
    for document, info in versions(repository, all_versions=all_versions, url_prefix=url_prefix):
        row = metadata_of(document, info)
        body = repository.read(document.url_id, info.version)
        try:
            row["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            row["body_base64"] = base64.b64encode(body).decode("ascii")
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_folder(
    repository: VersionStore, folder: Path, *, all_versions: bool, url_prefix: str = ""
) -> int:
    """Every chosen version as a file under ``folder`` (which must be new or empty), with a
    ``manifest.jsonl``; returns the count."""
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty: export documents into a new folder")
    count = 0
    with (folder / MANIFEST).open("w", encoding="utf-8") as manifest:
        for document, info in versions(
            repository, all_versions=all_versions, url_prefix=url_prefix
        ):
            version = info.version if all_versions else None
            path = _free_path(folder, document.url, document.url_id, version)
            path.write_bytes(repository.read(document.url_id, info.version))
            row = metadata_of(document, info)
            row["file"] = path.relative_to(folder).as_posix()
            manifest.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def file_name(url: str, version: int | None = None) -> Path:
    """The relative path of a URL's file: ``HOST[_PORT]/SEGMENTS/LEAF[.vN].xml``, each part
    percent-decoded and reduced to ``[A-Za-z0-9._-]``, a query kept as a short hash.

    >>> file_name("http://a.test:8080/docs/spec%20v1.xml?lang=en", 2).as_posix()
    'a.test_8080/docs/spec_v1.q-bbf4ee439d.v2.xml'
    >>> file_name("http://a.test/").as_posix()
    'a.test/index.xml'
    """
    parts = urlsplit(url)
    host = _safe(parts.hostname or "host") + (f"_{parts.port}" if parts.port else "")
    segments = [_safe(unquote(segment)) for segment in parts.path.split("/") if segment]
    leaf = segments.pop() if segments and not parts.path.endswith("/") else "index"
    stem = leaf.removesuffix(".xml") or "index"
    if parts.query:
        stem += ".q-" + hashlib.sha1(parts.query.encode()).hexdigest()[:10]
    if version is not None:
        stem += f".v{version}"
    return Path(host, *segments, f"{stem}.xml")


def _safe(part: str) -> str:
    """One name part: unsafe runs as ``_``, never ``.``/``..``, long ones shortened."""
    safe = _UNSAFE.sub("_", part).strip(".") or "_"
    if len(safe) > _MAX_NAME:
        safe = safe[:_MAX_NAME] + "-" + hashlib.sha1(part.encode()).hexdigest()[:10]
    return safe


def _free_path(folder: Path, url: str, url_id: int, version: int | None) -> Path:
    """The URL's file under ``folder``; two URLs with the same safe name (or a name that is
    a folder's) get their URL-Id in it, so no version overwrites another."""
    path = folder / file_name(url, version)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            return path
    except (FileExistsError, NotADirectoryError):
        pass
    flat = folder / path.relative_to(folder).parts[0] / "_by_id"
    flat.mkdir(parents=True, exist_ok=True)
    suffix = f".v{version}" if version is not None else ""
    return flat / f"{url_id}{suffix}.xml"
