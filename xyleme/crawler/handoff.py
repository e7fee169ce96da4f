"""The hand-off to the XML loader: bodies go to its ``DocumentSink``, in order, in batches.

The loader's contract (loader/interfaces.py): ``load`` and ``dependency_failed`` are
synchronous and CPU-bound, so an asyncio caller runs them in a worker thread; the crawler has
already committed the fetch (type XML or DTD). The lane keeps them in order, off the event
loop, and tells the crawler what each load found so it can queue the document's links.

The bodies queued while the loader was busy go to it together, up to :data:`BATCH` at a time,
through the sink's ``load_many`` (a batch makes its writes in two transactions, where one
load at a time makes two per document), each with the MD5 the fetch computed. A batch that
raises is loaded again one body at a time, so one bad body costs only its own load. A DTD,
entity or schema the loader asked for goes straight back to it (``dependency_arrived``), and
each load reports the scouting depth of its document's request, nothing more.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from loader import DocumentSink, LoadResult
from loader.interfaces import Body, FetchedBody
from xyleme.crawler.fetcher import discard_spooled

log = logging.getLogger(__name__)

BATCH = 100
"""Most bodies handed to the loader in one ``load_many`` call."""


@dataclass(slots=True)
class _Load:
    fetched: FetchedBody
    depth: int  # the scouting depth of the document's request

    @property
    def body(self) -> Body:
        return self.fetched.body


@dataclass(slots=True)
class _Dependency:
    url_id: int
    url: str
    body: Body
    fetched_at: float
    depth: int


@dataclass(slots=True)
class _Failure:
    url_id: int
    url: str
    reason: str


class LoaderLane:
    """A queue of bodies (and dependencies, fetched or failed) for the loader, served by one
    task.

    ``on_loaded(result, depth)`` runs on the event loop after each load, with the depth of
    the request that brought the body (0 for the documents a failed dependency let load);
    ``on_done()`` after each item, so the crawler can tell when all work is over.
    """

    def __init__(
        self,
        sink: DocumentSink,
        on_loaded: Callable[[LoadResult, int], None],
        on_done: Callable[[], None],
    ) -> None:
        self.sink = sink
        self._on_loaded = on_loaded
        self._on_done = on_done
        self._queue: asyncio.Queue[_Load | _Dependency | _Failure | None] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self._served = asyncio.Event()
        self.pending = 0

    def start(self) -> None:
        """Start serving the queue (on the running loop)."""
        self._task = asyncio.create_task(self._serve(), name="xyro-loader-lane")

    def load(self, fetched: FetchedBody, depth: int) -> None:
        """Queue a body for ``sink.load_many``; a spooled body's file is removed after the
        load."""
        self.pending += 1
        self._queue.put_nowait(_Load(fetched, depth))

    def dependency(self, url_id: int, url: str, body: Body, fetched_at: float, depth: int) -> None:
        """Queue a DTD, entity or schema the loader asked for (``sink.dependency_arrived``)."""
        self.pending += 1
        self._queue.put_nowait(_Dependency(url_id, url, body, fetched_at, depth))

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
                if isinstance(item, _Load | _Dependency):
                    discard_spooled(item.body)  # the loader leaves it in place

    async def _serve_queue(self) -> None:
        held: list[_Dependency | _Failure | None] = []  # what ended a batch, served after it
        while True:
            item = held.pop() if held else await self._queue.get()
            if item is None:
                return
            if isinstance(item, _Failure):
                await self._fail(item)
                continue
            if isinstance(item, _Dependency):
                await self._arrived(item)
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
        """Load a batch in one ``load_many`` call, in order (one body per call if it raises)."""
        done = 0
        try:
            results = await self._load_together(batch)
            for item in batch:
                try:
                    if results is None:
                        [result] = await asyncio.to_thread(self.sink.load_many, [item.fetched])
                    else:
                        result = results[done]
                    self._on_loaded(result, item.depth)
                except Exception:
                    log.exception("the loader failed on %s", item.fetched.url)
                finally:
                    done += 1
                    self._finished(item)
        finally:  # cancelled: the bodies not loaded yet are dropped all the same
            for item in batch[done:]:
                self._finished(item)

    async def _load_together(self, batch: list[_Load]) -> list[LoadResult] | None:
        """The results of ``load_many`` on the batch, or None: load them one by one."""
        if len(batch) == 1:
            return None
        try:
            return await asyncio.to_thread(self.sink.load_many, [item.fetched for item in batch])
        except Exception:
            log.exception("the loader failed on a batch of %d: one by one now", len(batch))
            return None

    def _finished(self, item: _Load | _Dependency) -> None:
        discard_spooled(item.body)  # the loader leaves it in place
        self._served_one()

    async def _arrived(self, item: _Dependency) -> None:
        try:
            result = await asyncio.to_thread(
                self.sink.dependency_arrived, item.url_id, item.url, item.body, item.fetched_at
            )
            self._on_loaded(result, item.depth)  # the documents that waited on it, loaded
        except Exception:
            log.exception("the loader failed on %s", item.url)
        finally:
            self._finished(item)

    async def _fail(self, item: _Failure) -> None:
        try:
            retried = await asyncio.to_thread(
                self.sink.dependency_failed, item.url_id, item.url, item.reason
            )
            for result in retried or ():  # the waiting documents, loaded without it
                self._on_loaded(result, 0)
        except Exception:
            log.exception("the loader failed on %s", item.url)
        finally:
            self._served_one()

    def _served_one(self) -> None:
        """One item done: the backlog shrinks, and a fetcher waiting for room may go on."""
        self.pending -= 1
        self._served.set()
        self._on_done()
