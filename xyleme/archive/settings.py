"""The archive's settings: WARC files and the crawl log (issue 17), ``[archive]`` in xyleme.toml.

They follow every package's settings convention (``conventions``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True, config=SETTINGS)
class ArchiveSettings:
    """Where and how every HTTP exchange and every fetch are kept (docs/archive.md)."""

    enabled: bool = True
    """write every HTTP exchange to WARC 1.1 files (request, response, revisit records)"""
    crawl_log: bool = True
    """write one line per fetch to the crawl log (time, status, size, URL, hops, referrer…)"""
    folder: Annotated[str, Field(min_length=1, max_length=4096)] = "archive"
    """folder of the WARC files and the crawl log, relative to the repository"""
    max_file_bytes: Annotated[int, Field(ge=MIB, le=1 << 40)] = 1024 * MIB
    """a WARC file past this size is closed and the next record starts a new one"""
    queue_records: Annotated[int, Field(ge=1, le=100_000)] = 256
    """exchanges and log lines waiting for the writer process; past it the fetchers wait"""
    gzip_level: Annotated[int, Field(ge=1, le=9)] = 6
    """gzip compression level of the WARC records (1 fastest, 9 smallest)"""
    crawl_log_max_bytes: Annotated[int, Field(ge=64 * 1024, le=1 << 40)] = 100 * MIB
    """a crawl log past this size is rotated (crawl.log → crawl.log.1 → …)"""
    crawl_log_backups: Annotated[int, Field(ge=0, le=10_000)] = 10
    """rotated crawl logs kept; the oldest is removed"""
