"""The writing side of the archive: WARC records, crawl-log lines and the revisit index.

Used by the archive's writer process only (:mod:`xyleme.archive.child`), one item at a
time; :meth:`ArchiveFiles.flush` makes what was written durable in the right order.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

from metadata.revisits import RevisitIndex, Stored
from xyleme.archive.crawllog import RotatingLog, format_line
from xyleme.archive.exchange import Exchange, Fetch
from xyleme.archive.records import (
    payload_of,
    request_record,
    response_record,
    revisit_record,
    warc_date,
)
from xyleme.archive.settings import ArchiveSettings
from xyleme.archive.warcfiles import WarcFiles

log = logging.getLogger(__name__)


def record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


class ArchiveFiles:
    """The open WARC file, crawl log and revisit index of an archive folder."""

    def __init__(self, folder: Path, settings: ArchiveSettings, info: dict[str, str]) -> None:
        self.warcs = WarcFiles(folder, settings.max_file_bytes, settings.gzip_level, info)
        self.crawl_log = (
            RotatingLog(folder, settings.crawl_log_max_bytes, settings.crawl_log_backups)
            if settings.crawl_log
            else None
        )
        self.index = RevisitIndex(folder) if settings.enabled else None
        self.failures = 0

    def write(self, item: Exchange | Fetch) -> None:
        """Write one item; a failure is logged and counted (the item is lost, not the rest).
        An exchange's body file is removed either way."""
        try:
            if isinstance(item, Fetch):
                if self.crawl_log is not None:
                    self.crawl_log.write(format_line(item))
            elif self.index is not None:
                self._archive(item)
        except Exception:
            self.failures += 1
            log.exception("archive: could not write %s", getattr(item, "url", item))
        finally:
            if isinstance(item, Exchange):
                discard(item)

    def flush(self, *, closing: bool = False) -> None:
        """Files flushed, then the index committed (it never names a record not on disk)."""
        self.warcs.flush()
        if self.crawl_log is not None:
            self.crawl_log.flush()
        if self.index is not None:
            self.index.commit()
        if closing:
            self.warcs.close()
            if self.crawl_log is not None:
                self.crawl_log.close()
            if self.index is not None:
                self.index.close()

    def _archive(self, exchange: Exchange) -> None:
        """Write a response (or a revisit) record, then the request record that led to it."""
        builder, index = self.warcs.builder, self.index
        main_id = record_id()
        stored = index.get(exchange.url)
        original = None if stored is None else (stored.record_id, stored.date, stored.digest)
        unchanged = (
            exchange.status != 304
            and stored is not None
            and exchange.md5 is not None
            and exchange.md5 == stored.md5
        )
        if exchange.status == 304 or unchanged:
            self.warcs.write(revisit_record(builder, exchange, main_id, original))
        else:
            with payload_of(exchange) as stream:
                record = response_record(builder, exchange, stream, main_id)
                self.warcs.write(record)
            digest = record.rec_headers.get_header("WARC-Payload-Digest")
            if (
                exchange.md5 is not None
                and exchange.body is not None
                and 200 <= exchange.status < 300
            ):
                index.put(
                    exchange.url, Stored(exchange.md5, main_id, warc_date(exchange.at), digest)
                )
        self.warcs.write(request_record(builder, exchange, main_id))


def discard(item: Exchange | Fetch | None) -> None:
    """Remove an exchange's body file (the archive owns it)."""
    if isinstance(item, Exchange) and isinstance(item.body, Path):
        item.body.unlink(missing_ok=True)
