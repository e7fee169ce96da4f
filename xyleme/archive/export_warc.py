"""``xyleme export warc``: the archive's WARC files, whole or a time/URL-filtered subset.

Whole files are copied byte for byte. A filtered export keeps each file's warcinfo record
and the records whose WARC-Date falls in ``[since, until)`` and whose target URL starts
with ``url_prefix``, copied as the gzip members they are (never decoded, re-encoded or held
in memory), so the result is a valid WARC file that indexers read like the originals.

The crawl workers of a shared store write their archives in folders of their own,
``archive/part-I-of-N/`` (docs/scaleout.md): the export reads the archive's folder and every
part's, parts in order (into a folder, each part's files go to a sub-folder of the same
name: two workers' files may share a name).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator

from xyleme.archive.warcfiles import warc_files

_CHUNK = 1 << 20
_PART = re.compile(r"part-(\d+)-of-(\d+)")


def archive_folders(archive: Path) -> list[Path]:
    """The archive's folder, then its crawl workers' (``part-I-of-N``), by N then I."""
    parts = []
    for folder in archive.iterdir() if archive.is_dir() else ():
        found = _PART.fullmatch(folder.name)
        if found and folder.is_dir():
            parts.append(((int(found.group(2)), int(found.group(1))), folder))
    return [archive, *(folder for _, folder in sorted(parts))]


@dataclass(frozen=True, slots=True)
class RecordFilter:
    """Which records a WARC export keeps (every field None: all of them)."""

    since: float | None = None
    until: float | None = None
    url_prefix: str | None = None

    @property
    def everything(self) -> bool:
        return self.since is None and self.until is None and not self.url_prefix

    def keeps(self, record_type: str, url: str | None, date: str | None) -> bool:
        if record_type == "warcinfo":
            return True
        if self.url_prefix and not (url or "").startswith(self.url_prefix):
            return False
        if self.since is None and self.until is None:
            return True
        moment = datetime.fromisoformat(date).timestamp() if date else None
        if moment is None:
            return False
        return (self.since is None or moment >= self.since) and (
            self.until is None or moment < self.until
        )


def copy_records(source: Path, out: BinaryIO, keep: RecordFilter) -> int:
    """Copy the records of one WARC file that ``keep`` accepts; returns how many (warcinfo
    not counted)."""
    if keep.everything:
        with source.open("rb") as stream:
            shutil.copyfileobj(stream, out, _CHUNK)
        return -1
    copied = 0
    with source.open("rb") as stream, source.open("rb") as raw:
        iterator = ArchiveIterator(stream)
        for record in iterator:
            headers = record.rec_headers
            wanted = keep.keeps(
                record.rec_type,
                headers.get_header("WARC-Target-URI"),
                headers.get_header("WARC-Date"),
            )
            if not wanted:
                continue
            raw.seek(iterator.get_record_offset())
            _copy_bytes(raw, out, iterator.get_record_length())
            copied += record.rec_type != "warcinfo"
    return copied


def _copy_bytes(source: BinaryIO, out: BinaryIO, length: int) -> None:
    while length > 0:
        chunk = source.read(min(_CHUNK, length))
        if not chunk:
            raise OSError("WARC file shorter than its records")
        out.write(chunk)
        length -= len(chunk)


def export_warc(archive: Path, out: BinaryIO | Path, keep: RecordFilter) -> tuple[int, int]:
    """Export the finished files of the archive and of its workers' parts into one stream,
    or a folder (one file per source file, same names, a part's in its sub-folder).
    Returns (files read, records copied; -1 when whole files were copied)."""
    sources = [source for folder in archive_folders(archive) for source in warc_files(folder)]
    copied = 0
    for source in sources:
        if isinstance(out, Path):
            into = out / source.parent.relative_to(archive)
            into.mkdir(parents=True, exist_ok=True)
            with (into / source.name).open("wb") as target:
                counted = copy_records(source, target, keep)
        else:
            counted = copy_records(source, out, keep)
        copied = -1 if counted < 0 else copied + counted
    return len(sources), copied
