"""The archive: WARC records and crawl-log lines written by one thread, off the event loop.

:class:`Archive` is the crawler's :class:`~xyleme.archive.exchange.ExchangeSink`. Its two
coroutines put an item on a queue and return; a bounded number of items may wait
(``queue_records``): past it they wait for the writer thread to take one (back-pressure, so
a slow disk slows the crawl instead of filling the memory). The thread writes each item,
and after each batch flushes the WARC file and the crawl log and commits the revisit index,
so a killed daemon leaves whole records and lines. :meth:`Archive.close` drains the queue
and closes the files under their final names.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from xyleme.archive.crawllog import RotatingLog, format_line
from xyleme.archive.exchange import Exchange, Fetch
from xyleme.archive.index import RevisitIndex, Stored
from xyleme.archive.records import (
    payload_of,
    request_record,
    response_record,
    revisit_record,
    warc_date,
)
from xyleme.archive.settings import ArchiveSettings
from xyleme.archive.warcfiles import WarcFiles, recover

if TYPE_CHECKING:
    from metadata.clock import Clock

log = logging.getLogger(__name__)

_BATCH = 64  # items written between two flushes (and index commits)
_STOP = object()


def record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


class Archive:
    """WARC files and the crawl log of a repository (see the module docstring).

    >>> archive = Archive(folder, ArchiveSettings(), clock)  # doctest: +SKIP
    >>> archive.open(); crawler = Crawler(md, exchanges=archive); …; await archive.close()
    """

    def __init__(
        self,
        folder: Path,
        settings: ArchiveSettings,
        clock: Clock,
        info: dict[str, str] | None = None,
    ) -> None:
        self.folder = folder
        self.settings = settings
        self.clock = clock
        self.info = {"software": "xyleme", "format": "WARC File Format 1.1"} | (info or {})
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._room: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.failures = 0
        """items the writer could not write (each logged)"""

    @property
    def records_exchanges(self) -> bool:
        """Whether the WARC files are written (the fetcher builds no exchange otherwise)."""
        return self.settings.enabled

    @property
    def active(self) -> bool:
        """Whether anything is written (WARC files or the crawl log)."""
        return self.settings.enabled or self.settings.crawl_log

    def open(self) -> None:
        """Recover files a crash left open and start the writer thread."""
        if self._thread is not None or not self.active:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        recover(self.folder)
        self._thread = threading.Thread(target=self._run, name="xyleme-archive", daemon=True)
        self._thread.start()

    async def exchange(self, exchange: Exchange) -> None:
        """Queue one HTTP exchange for the WARC files (its body file is ours to remove)."""
        if not self.settings.enabled or self._thread is None:
            _discard(exchange)
            return
        exchange.at = self.clock.now()
        await self._put(exchange)

    async def fetched(self, fetch: Fetch) -> None:
        """Queue one crawl-log line."""
        if self.settings.crawl_log and self._thread is not None:
            await self._put(fetch)

    async def _put(self, item: Exchange | Fetch) -> None:
        loop = asyncio.get_running_loop()
        if self._room is None or self._loop is not loop:
            self._loop = loop
            self._room = asyncio.Semaphore(self.settings.queue_records)
        await self._room.acquire()
        self._queue.put((item, self._room, loop))

    async def close(self) -> None:
        """Write what is queued, close the files (without blocking the event loop)."""
        await asyncio.to_thread(self.close_now)

    def close_now(self) -> None:
        """:meth:`close` from synchronous code (the daemon's last step)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            thread.join()

    # ------------------------------------------------------------------ the writer thread

    def _run(self) -> None:
        """The writer thread: batches of items written, then flushed and committed. A failure
        is logged and counted, never fatal: the fetchers must never wait on a dead thread."""
        settings = self.settings
        try:
            warcs = WarcFiles(self.folder, settings.max_file_bytes, settings.gzip_level, self.info)
            crawl_log = (
                RotatingLog(self.folder, settings.crawl_log_max_bytes, settings.crawl_log_backups)
                if settings.crawl_log
                else None
            )
            index = RevisitIndex(self.folder) if settings.enabled else None
        except Exception:
            log.exception("archive: cannot open %s: nothing will be archived", self.folder)
            warcs = crawl_log = index = None
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            items = [item for item in batch if item is not _STOP]
            stopping = len(items) < len(batch)
            try:
                if warcs is not None:
                    for item, *_ in items:
                        self._write(item, warcs, crawl_log, index)
                    self._flush(warcs, crawl_log, index, closing=stopping)
            except Exception:
                self.failures += 1
                log.exception("archive: could not flush %s", self.folder)
            finally:
                for item, room, loop in items:
                    if isinstance(item, Exchange):
                        _discard(item)
                    _release(room, loop)

    @staticmethod
    def _flush(
        warcs: WarcFiles,
        crawl_log: RotatingLog | None,
        index: RevisitIndex | None,
        *,
        closing: bool,
    ) -> None:
        """Files flushed, then the index committed (it never names a record not on disk)."""
        warcs.flush()
        if crawl_log is not None:
            crawl_log.flush()
        if index is not None:
            index.commit()
        if closing:
            warcs.close()
            if crawl_log is not None:
                crawl_log.close()
            if index is not None:
                index.close()

    def _write(
        self,
        item: Exchange | Fetch,
        warcs: WarcFiles,
        crawl_log: RotatingLog | None,
        index: RevisitIndex | None,
    ) -> None:
        try:
            if isinstance(item, Fetch):
                crawl_log.write(format_line(item))
            else:
                self._archive(item, warcs, index)
        except Exception:
            self.failures += 1
            log.exception("archive: could not write %s", getattr(item, "url", item))

    def _archive(self, exchange: Exchange, warcs: WarcFiles, index: RevisitIndex) -> None:
        """Write a response (or a revisit) record, then the request record that led to it."""
        builder = warcs.builder
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
            warcs.write(revisit_record(builder, exchange, main_id, original))
        else:
            with payload_of(exchange) as stream:
                record = response_record(builder, exchange, stream, main_id)
                warcs.write(record)
            digest = record.rec_headers.get_header("WARC-Payload-Digest")
            if (
                exchange.md5 is not None
                and exchange.body is not None
                and 200 <= exchange.status < 300
            ):
                index.put(
                    exchange.url, Stored(exchange.md5, main_id, warc_date(exchange.at), digest)
                )
        warcs.write(request_record(builder, exchange, main_id))


def _release(room: asyncio.Semaphore, loop: asyncio.AbstractEventLoop) -> None:
    """Give a queue place back, on the loop's thread (a closed loop needs none)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(room.release)


def _discard(exchange: Exchange) -> None:
    if isinstance(exchange.body, Path):
        exchange.body.unlink(missing_ok=True)
