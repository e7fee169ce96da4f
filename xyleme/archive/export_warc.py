"""``xyleme export warc``: the archive's WARC files, whole or a time/URL-filtered subset.

Whole files are copied byte for byte. A filtered export keeps each file's warcinfo record
and the records whose WARC-Date falls in ``[since, until)`` and whose target URL starts
with ``url_prefix``, copied as the gzip members they are (never decoded, re-encoded or held
in memory), so the result is a valid WARC file that indexers read like the originals.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator

from xyleme.archive.warcfiles import warc_files

_CHUNK = 1 << 20


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
    """Export the archive's finished files into one stream, or a folder (one file per
    source file, same names). Returns (files read, records copied; -1 when whole files
    were copied)."""
    sources = warc_files(archive)
    copied = 0
    for source in sources:
        if isinstance(out, Path):
            out.mkdir(parents=True, exist_ok=True)
            with (out / source.name).open("wb") as target:
                counted = copy_records(source, target, keep)
        else:
            counted = copy_records(source, out, keep)
        copied = -1 if counted < 0 else copied + counted
    return len(sources), copied
