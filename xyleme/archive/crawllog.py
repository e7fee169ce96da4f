"""The crawl log: one tab-separated line per fetch, Heritrix's crawl.log for xyleme.

Columns (docs/archive.md has the table)::

    time status size url hops referrer content_type duration_ms md5 level type clock reason

``time`` is the real time the fetch ended and ``clock`` the repository clock's (metadata's
``fetched_at``, the WARC-Date): they are equal in a real-time crawl and differ under the
simulated web's accelerated clock. Every fetch has its line: a robots.txt read first
(``hops`` ending in ``P``, Heritrix's prerequisite) and a 429/503 tried again later too. A
missing value is ``-``. Each file starts with a ``#``
line naming the columns; past ``max_bytes`` it is rotated (``crawl.log`` → ``crawl.log.1``…).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from xyleme.archive.exchange import Fetch

COLUMNS = (
    "time",
    "status",
    "size",
    "url",
    "hops",
    "referrer",
    "content_type",
    "duration_ms",
    "md5",
    "level",
    "type",
    "clock",
    "reason",
)
HEADER = "#" + "\t".join(COLUMNS) + "\n"
LOG_NAME = "crawl.log"
_CLEAN = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def iso(seconds: float) -> str:
    """ISO 8601 UTC with milliseconds, as the log writes it."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def format_line(fetch: Fetch) -> str:
    """The log line of one fetch (tabs and newlines in values become spaces)."""
    values = (
        iso(fetch.wall),
        fetch.status,
        fetch.size,
        fetch.url,
        fetch.hops,
        fetch.referrer,
        fetch.content_type,
        fetch.duration_ms,
        fetch.md5,
        fetch.level,
        fetch.page_type,
        iso(fetch.at),
        fetch.reason,
    )
    cells = (
        "-" if value is None or value == "" else str(value).translate(_CLEAN) for value in values
    )
    return "\t".join(cells) + "\n"


def parse_line(line: str) -> dict[str, str | int | None]:
    """A log line back as a dict (numbers as ints, ``-`` as None); raises ValueError."""
    cells = line.rstrip("\n").split("\t")
    if len(cells) != len(COLUMNS):
        raise ValueError(f"a crawl log line has {len(COLUMNS)} columns, not {len(cells)}")
    row: dict[str, str | int | None] = {}
    for name, cell in zip(COLUMNS, cells, strict=True):
        value: str | int | None = None if cell == "-" else cell
        if value is not None and name in ("status", "size", "duration_ms", "level"):
            value = int(value)
        row[name] = value
    return row


class RotatingLog:
    """Appends lines to ``folder/crawl.log``, rotated past ``max_bytes`` (one thread)."""

    def __init__(self, folder: Path, max_bytes: int, backups: int) -> None:
        self.path = folder / LOG_NAME
        self.max_bytes = max_bytes
        self.backups = backups
        self._file: TextIO | None = None
        self._size = 0

    def write(self, line: str) -> None:
        size = len(line.encode("utf-8"))
        if self._file is None:
            self._open()
        elif self._size + size > self.max_bytes and self._size > len(HEADER):
            self._rotate()
        self._file.write(line)
        self._size += size

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8", newline="")
        self._size = self._file.tell()
        if self._size == 0:
            self._file.write(HEADER)
            self._size = len(HEADER)

    def _rotate(self) -> None:
        self.close()
        if self.backups == 0:
            self.path.unlink(missing_ok=True)
        else:
            self.path.with_name(f"{LOG_NAME}.{self.backups}").unlink(missing_ok=True)
            for number in range(self.backups - 1, 0, -1):
                older = self.path.with_name(f"{LOG_NAME}.{number}")
                if older.exists():
                    older.rename(self.path.with_name(f"{LOG_NAME}.{number + 1}"))
            self.path.rename(self.path.with_name(f"{LOG_NAME}.1"))
        self._open()
