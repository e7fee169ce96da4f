"""The hand-off to the XML loader: bodies go to its ``DocumentSink``, one at a time.

The loader's contract (loader/interfaces.py): ``load`` and ``dependency_failed`` are
synchronous and CPU-bound, so an asyncio caller runs them in a worker thread; the crawler has
already committed the fetch (type XML or DTD). The lane keeps them in order, off the event
loop, and tells the crawler what each load found so it can queue the document's links.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loader import DocumentSink
from loader.interfaces import Body
from xyleme.crawler.fetcher import discard_spooled

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Load:
    url_id: int
    url: str
    body: Body
    headers: Mapping[str, str]
    fetched_at: float
    context: Any


@dataclass(slots=True)
class _Failure:
    url_id: int
    url: str
    reason: str


class LoaderLane:
    """A queue of bodies (and failed dependencies) for the loader, served by one task.

    ``on_loaded(result, context)`` runs on the event loop after each ``load``; ``on_done()``
    after each item, so the crawler can tell when all work is over.
    """

    def __init__(
        self,
        sink: DocumentSink,
        on_loaded: Callable[[Any, Any], None],
        on_done: Callable[[], None],
    ) -> None:
        self.sink = sink
        self._on_loaded = on_loaded
        self._on_done = on_done
        self._queue: asyncio.Queue[_Load | _Failure | None] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self._served = asyncio.Event()
        self.pending = 0

    def start(self) -> None:
        """Start serving the queue (on the running loop)."""
        self._task = asyncio.create_task(self._serve(), name="xyro-loader-lane")

    def load(self, url_id: int, url: str, body: Body, headers, fetched_at: float, context):
        """Queue a body for ``sink.load``; a spooled body's file is removed after the load."""
        self.pending += 1
        self._queue.put_nowait(_Load(url_id, url, body, headers, fetched_at, context))

    def fail(self, url_id: int, url: str, reason: str) -> None:
        """Queue ``sink.dependency_failed`` for a DTD or entity that could not be fetched."""
        self.pending += 1
        self._queue.put_nowait(_Failure(url_id, url, reason))

    async def room(self, limit: int) -> None:
        """Wait until fewer than ``limit`` items are queued (the writer's backpressure: the
        bodies held in memory are bounded by the loader's pace)."""
        while self.pending >= limit:
            self._served.clear()
            await self._served.wait()

    async def close(self) -> None:
        """Serve what is queued, then stop (the fetches behind it are already committed)."""
        if self._task is not None:
            self._queue.put_nowait(None)
            await asyncio.shield(self._task)
            self._task = None

    async def _serve(self) -> None:
        try:
            await self._serve_queue()
        finally:  # cancelled: the bodies still queued will never load
            while not self._queue.empty():
                item = self._queue.get_nowait()
                if isinstance(item, _Load):
                    discard_spooled(item.body)  # the loader leaves it in place

    async def _serve_queue(self) -> None:
        while (item := await self._queue.get()) is not None:
            try:
                if isinstance(item, _Load):
                    result = await asyncio.to_thread(
                        self.sink.load,
                        item.url_id,
                        item.url,
                        item.body,
                        item.headers,
                        item.fetched_at,
                    )
                    self._on_loaded(result, item.context)
                else:
                    await asyncio.to_thread(
                        self.sink.dependency_failed, item.url_id, item.url, item.reason
                    )
            except Exception:
                log.exception("the loader failed on %s", item.url)
            finally:
                if isinstance(item, _Load):
                    discard_spooled(item.body)  # the loader leaves it in place
                self.pending -= 1
                self._served.set()
                self._on_done()
