"""WARC files on disk: one gzip member per record, rotated by size, whole after a crash.

A file is written as ``NAME.warc.gz.open`` and renamed to ``NAME.warc.gz`` when closed
(Heritrix's convention), so a reader knows which files are finished. Each record is its own
gzip member (WARC 1.1, annex D.2), flushed whole: a crash can only cut the record being
written, and :func:`recover` cuts a left-over ``.open`` file back to its last whole record
before renaming it. Names follow the IIPC recommendation, ``PREFIX-TIMESTAMP-SERIAL-HOST``.
"""

from __future__ import annotations

import logging
import re
import socket
import time
import zlib
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.warcwriter import WARCWriter

log = logging.getLogger(__name__)

WARC_SUFFIX = ".warc.gz"
OPEN_SUFFIX = ".open"
_SERIAL = re.compile(r"-(\d{5,})-[^-]*\.warc\.gz(\.open)?$")


class _Members:
    """A binary stream that gzips what is written and ends a gzip member at each flush:
    warcio flushes once per record, so every record is one member (a compression level of
    our choosing: warcio's own wrapper always uses 9, three times slower than 6)."""

    def __init__(self, out: BinaryIO, level: int) -> None:
        self._out = out
        self._level = level
        self._zip = self._compressor()

    def _compressor(self) -> zlib._Compress:
        return zlib.compressobj(self._level, zlib.DEFLATED, zlib.MAX_WBITS + 16)

    def write(self, data: bytes) -> int:
        self._out.write(self._zip.compress(data))
        return len(data)

    def flush(self) -> None:
        self._out.write(self._zip.flush())
        self._zip = self._compressor()


def warc_files(folder: Path) -> list[Path]:
    """The finished WARC files of a folder, oldest first (by serial number)."""
    return sorted(folder.glob(f"*{WARC_SUFFIX}"), key=_serial)


def _serial(path: Path) -> int:
    found = _SERIAL.search(path.name)
    return int(found.group(1)) if found else -1


def whole_length(path: Path) -> int:
    """How many bytes of a WARC file hold whole records (the rest is a cut record)."""
    end = 0
    with path.open("rb") as stream:
        iterator = ArchiveIterator(stream, no_record_parse=False, check_digests=False)
        try:
            for record in iterator:
                record.content_stream().read()  # a cut member fails here, not later
                end = iterator.get_record_offset() + iterator.get_record_length()
        except (ArchiveLoadFailed, EOFError, zlib.error, ValueError, OSError) as error:
            log.warning("%s: cut after %d bytes (%s)", path, end, error)
    return end


def recover(folder: Path) -> list[Path]:
    """Close the ``.open`` files a crash left: cut each to its last whole record, rename it.

    Returns the recovered files (an empty one is removed).
    """
    recovered = []
    for path in sorted(folder.glob(f"*{WARC_SUFFIX}{OPEN_SUFFIX}")):
        keep = whole_length(path)
        if keep == 0:
            path.unlink()
            continue
        with path.open("r+b") as stream:
            stream.truncate(keep)
        final = path.with_name(path.name.removesuffix(OPEN_SUFFIX))
        path.rename(final)
        recovered.append(final)
        log.info("recovered %s (%d bytes of whole records)", final, keep)
    return recovered


class WarcFiles:
    """Writes warcio records to ``folder``, starting a new file past ``max_bytes``.

    Used by the archive's writer process. ``info`` goes in each file's warcinfo record.
    """

    def __init__(
        self, folder: Path, max_bytes: int, level: int, info: dict[str, str], prefix: str = "xyleme"
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.level = level
        self.info = info
        self.prefix = prefix
        self.host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._writer: WARCWriter | None = None
        self._serial = 1 + max(
            (_serial(path) for path in folder.glob(f"*{WARC_SUFFIX}*")), default=0
        )
        self.builder = WARCWriter(None, gzip=False, warc_version="1.1")
        """Makes records (``create_warc_record``…) for :meth:`write`."""

    @property
    def path(self) -> Path | None:
        """The file being written (its final name), if one is open."""
        return None if self._path is None else self._path.with_name(self._path.name[:-5])

    def write(self, record) -> tuple[str, int]:
        """Append one record; returns (file name, offset). A failed write is cut back."""
        if self._file is None or self._file.tell() >= self.max_bytes:
            self._start()
        start = self._file.tell()
        try:
            self._writer.write_record(record)
        except BaseException:
            self._file.truncate(start)
            self._file.seek(start)
            raise
        return self.path.name, start

    def flush(self) -> None:
        """Hand what was written to the operating system (a killed process loses nothing)."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Close the current file under its final name."""
        if self._file is None:
            return
        self._file.close()
        final = self.path
        self._path.rename(final)
        self._file = self._path = self._writer = None

    def _start(self) -> None:
        self.close()
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        name = f"{self.prefix}-{stamp}-{self._serial:05d}-{self.host}{WARC_SUFFIX}"
        self._serial += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        self._path = self.folder / (name + OPEN_SUFFIX)
        self._file = self._path.open("xb")
        self._writer = WARCWriter(_Members(self._file, self.level), gzip=False, warc_version="1.1")
        self._writer.write_record(self.builder.create_warcinfo_record(name, self.info))
