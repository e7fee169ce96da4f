"""The archive: WARC records and crawl-log lines written by a process of their own.

:class:`Archive` is the crawler's :class:`~xyleme.archive.exchange.ExchangeSink`. Its two
coroutines put an item on a queue and return; a bounded number of items may wait
(``queue_records``): past it they wait for the writer to take one (back-pressure, so a slow
disk slows the crawl instead of filling the memory); the items of one turn of the event loop
reach the queue together, in one list. A feeder thread pickles the items to the writer
process (:mod:`xyleme.archive.child`: building WARC records holds the GIL, so it must not
share the event loop's interpreter), which flushes after each batch and says how many items
it wrote; a reader thread frees that many places. :meth:`Archive.close` drains
the queue and waits for the writer to close its files under their final names. A writer
that dies costs the records, never the crawl: its places are freed, later items dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import pickle
import queue
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from xyleme.archive.child import FRAME
from xyleme.archive.exchange import Exchange, Fetch
from xyleme.archive.settings import ArchiveSettings
from xyleme.archive.warcfiles import recover
from xyleme.children import child_environment, python_command

if TYPE_CHECKING:
    from metadata import Clock

log = logging.getLogger(__name__)
_STOP = None
FEED_BATCH = 64
"""Items past which the feeder writes what it took (it takes every list waiting)."""


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
        self.folder = folder.absolute()  # the writer runs in it: a relative path would nest
        self.settings = settings
        self.clock = clock
        self.info = {"software": "xyleme", "format": "WARC File Format 1.1"} | (info or {})
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._room: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._child: subprocess.Popen | None = None
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._outstanding = 0  # items given to the writer and not yet acknowledged
        self._handing: list[Exchange | Fetch] = []  # put on the loop, not yet handed over
        self._unreleased = 0  # places acknowledged, not yet given back (> 0: a release is due)
        self._dead = False

    @property
    def records_exchanges(self) -> bool:
        """Whether the WARC files are written (the fetcher builds no exchange otherwise)."""
        return self.settings.enabled

    @property
    def active(self) -> bool:
        """Whether anything is written (WARC files or the crawl log)."""
        return self.settings.enabled or self.settings.crawl_log

    def open(self) -> None:
        """Recover files a crash left open and start the writer process and its threads."""
        if self._child is not None or not self.active:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        recover(self.folder)
        settings = json.dumps(dataclasses.asdict(self.settings))
        self._child = subprocess.Popen(
            python_command(
                "xyleme.archive.child", str(self.folder), settings, json.dumps(self.info)
            ),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=self.folder,  # never the caller's folder: its modules must not shadow ours
            env=child_environment(),
        )
        self._dead = False
        self._threads = [
            threading.Thread(target=self._feed, name="xyleme-archive-feed", daemon=True),
            threading.Thread(target=self._acknowledged, name="xyleme-archive-acks", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    async def exchange(self, exchange: Exchange) -> None:
        """Queue one HTTP exchange for the WARC files (its body file is ours to remove)."""
        if not self.settings.enabled or self._child is None or self._dead:
            _discard(exchange)
            return
        exchange.at = self.clock.now()
        await self._put(exchange)

    async def fetched(self, fetch: Fetch) -> None:
        """Queue one crawl-log line."""
        if self.settings.crawl_log and self._child is not None and not self._dead:
            await self._put(fetch)

    async def _put(self, item: Exchange | Fetch) -> None:
        loop = asyncio.get_running_loop()
        if self._room is None or self._loop is not loop:
            with self._lock:  # a release left pending on an earlier loop never runs
                self._loop, self._unreleased = loop, 0
                self._room = asyncio.Semaphore(self.settings.queue_records)
        await self._room.acquire()
        with self._lock:
            self._outstanding += 1
            self._handing.append(item)
            first = len(self._handing) == 1
        if first:  # the items of one turn of the loop wake the feeder once
            loop.call_soon(self._hand_over)

    def _hand_over(self) -> None:
        """Give the feeder the items put since the last hand-over, in one list."""
        with self._lock:
            items, self._handing = self._handing, []
        if items:
            self._queue.put(items)

    async def close(self) -> None:
        """Write what is queued, close the files (without blocking the event loop)."""
        await asyncio.to_thread(self.close_now)

    def close_now(self) -> None:
        """:meth:`close` from synchronous code (the daemon's last step)."""
        child, self._child = self._child, None
        if child is None:
            return
        self._hand_over()  # what the loop had no turn to hand over
        self._queue.put(_STOP)
        for thread in self._threads:
            thread.join()
        child.wait()

    # ------------------------------------------------------------------ the threads

    def _feed(self) -> None:
        """Pickle queued items to the writer, all those waiting in one write; a stop (or a
        dead writer) closes its input."""
        child = self._child
        pipe = child.stdin
        stopping = False
        while not stopping:
            items, stopping = self._take()
            if self._dead:
                for item in items:
                    _discard(item)
                continue
            frames = []
            for item in items:
                data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
                frames += (FRAME.pack(len(data)), data)
            try:
                pipe.write(b"".join(frames))
                pipe.flush()
            except (BrokenPipeError, ValueError, OSError):
                for item in items:
                    _discard(item)
                self._writer_died(child)
        with contextlib.suppress(OSError, ValueError):
            pipe.write(FRAME.pack(0))
            pipe.close()

    def _take(self) -> tuple[list[Exchange | Fetch], bool]:
        """The lists waiting on the queue, joined (one at least, waited for; more while fewer
        than ``FEED_BATCH`` items), and whether the stop came among them."""
        items: list[Exchange | Fetch] = []
        given = self._queue.get()
        while given is not _STOP:
            items += given
            if len(items) >= FEED_BATCH:
                return items, False
            try:
                given = self._queue.get_nowait()
            except queue.Empty:
                return items, False
        return items, True

    def _acknowledged(self) -> None:
        """Free the queue places of the items the writer says it wrote."""
        child = self._child
        for line in child.stdout:
            count = int(line)
            with self._lock:
                self._outstanding -= count
            self._release(count)
        if child.wait() != 0 or self._outstanding:
            self._writer_died(child)

    def _writer_died(self, child: subprocess.Popen) -> None:
        """Free every place the dead writer held; later items are dropped."""
        if self._dead:
            return
        self._dead = True
        log.error(
            "archive: the writer process stopped (exit %s): nothing more is archived", child.poll()
        )
        with self._lock:
            count, self._outstanding = self._outstanding, 0
        self._release(count)

    def _release(self, count: int) -> None:
        """Give ``count`` queue places back, on the loop's thread (a closed loop needs none);
        places freed while an earlier release waits for the loop go with it (one wake-up)."""
        with self._lock:
            room, loop = self._room, self._loop
            if room is None or loop is None or count <= 0:
                return
            due = self._unreleased > 0  # an earlier release waits for the loop: it takes these
            self._unreleased += count
            if due:
                return
        try:
            loop.call_soon_threadsafe(self._release_now, room)
        except RuntimeError:  # the loop is closed: its places need no release
            with self._lock:
                self._unreleased = 0

    def _release_now(self, room: asyncio.Semaphore) -> None:
        with self._lock:
            count, self._unreleased = self._unreleased, 0
        for _ in range(count):
            room.release()


def _discard(item: Exchange | Fetch) -> None:
    if isinstance(item, Exchange) and isinstance(item.body, Path):
        item.body.unlink(missing_ok=True)
