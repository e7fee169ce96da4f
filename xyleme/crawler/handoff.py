"""The hand-off to the XML loader: bodies go to its ``DocumentSink``, in order, in batches.

The loader's contract (loader/interfaces.py): ``load`` and ``dependency_failed`` are
synchronous and CPU-bound, so an asyncio caller runs them in a worker thread; the crawler has
already committed the fetch (type XML or DTD). The lane keeps them in order, off the event
loop, and tells the crawler what each load found so it can queue the document's links.

The bodies queued while the loader was busy go to it together, up to :data:`BATCH` at a time,
through the sink's ``load_many`` when it has one (``loader.Loader`` does: a batch makes its
writes in two transactions, where one load at a time makes two per document). A batch that
raises is loaded again one body at a time, so one bad body costs only its own load.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from loader import Body, DocumentSink
from xyleme.crawler.fetcher import discard_spooled

log = logging.getLogger(__name__)

BATCH = 100
"""Most bodies handed to the loader in one ``load_many`` call."""


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

    ``on_loaded(result, context)`` runs on the event loop after each ``load``, and for each
    document a failed dependency let load (context None); ``on_done()`` after each item, so
    the crawler can tell when all work is over.
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
        held: list[_Failure | None] = []  # what ended a batch, served right after it
        while True:
            item = held.pop() if held else await self._queue.get()
            if item is None:
                return
            if isinstance(item, _Failure):
                await self._fail(item)
                continue
            batch = [item]
            while len(batch) < BATCH and not self._queue.empty():
                following = self._queue.get_nowait()
                if not isinstance(following, _Load):
                    held.append(following)
                    break
                batch.append(following)
            await self._load(batch)

    async def _load(self, batch: list[_Load]) -> None:
        """Load a batch (one ``load_many`` call when the sink has it), in order."""
        done = 0
        try:
            results = await self._load_together(batch)
            for item in batch:
                try:
                    if results is None:
                        result = await asyncio.to_thread(
                            self.sink.load,
                            item.url_id,
                            item.url,
                            item.body,
                            item.headers,
                            item.fetched_at,
                        )
                    else:
                        result = results[done]
                    self._on_loaded(result, item.context)
                except Exception:
                    log.exception("the loader failed on %s", item.url)
                finally:
                    done += 1
                    self._finished(item)
        finally:  # cancelled: the bodies not loaded yet are dropped all the same
            for item in batch[done:]:
                self._finished(item)

    async def _load_together(self, batch: list[_Load]) -> list | None:
        """The results of ``load_many`` on the batch, or None: load them one by one."""
        load_many = getattr(self.sink, "load_many", None)
        if load_many is None or len(batch) == 1:
            return None
        rows = [(i.url_id, i.url, i.body, i.headers, i.fetched_at) for i in batch]
        try:
            return await asyncio.to_thread(load_many, rows)
        except Exception:
            log.exception("the loader failed on a batch of %d: one by one now", len(batch))
            return None

    def _finished(self, item: _Load) -> None:
        discard_spooled(item.body)  # the loader leaves it in place
        self._served_one()

    async def _fail(self, item: _Failure) -> None:
        try:
            retried = await asyncio.to_thread(
                self.sink.dependency_failed, item.url_id, item.url, item.reason
            )
            for result in retried or ():  # the waiting documents, loaded without it
                self._on_loaded(result, None)
        except Exception:
            log.exception("the loader failed on %s", item.url)
        finally:
            self._served_one()

    def _served_one(self) -> None:
        """One item done: the backlog shrinks, and a fetcher waiting for room may go on."""
        self.pending -= 1
        self._served.set()
        self._on_done()
