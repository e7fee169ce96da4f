"""The dashboard's XPath queries: a bounded pool of worker processes with a small queue.

Ten users asking for expensive queries at once must not take the dashboard's other pages, nor
the daemon sharing its event loop, down with them. So a query never runs in the server's
process: each runs in a process of its own (:mod:`xyleme.query_worker`, limited in CPU time, memory
and priority), at most ``workers`` at a time; ``queue`` more may wait for a turn, and a query
beyond those is refused at once with :class:`QueryBusy` (HTTP 429 with ``Retry-After``). The
event loop only waits on the processes' pipes: no thread is held, so the views that read the
repository in threads keep theirs. A query whose client went away (a closed tab, a client's
timeout) is stopped (:func:`unless_gone`): its worker and its turn go to the queries someone
still waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from loader import LoaderError, compile_query
from metadata import MetadataError
from xyleme.children import child_environment, python_command

WORKER = "xyleme.query_worker"
KILL_GRACE_S = 1.0
"""Real seconds past the time limit before the parent kills a worker the kernel has not."""
CLIENT_CHECK_S = 0.25
"""Real seconds between two looks at whether a query's client is still there."""
T = TypeVar("T")


class QueryFailed(ValueError):
    """The expression is not XPath 1.0, could not be evaluated, or ran out of time or memory."""


class QueryBusy(RuntimeError):
    """Every worker is busy and the queue is full; ``retry_after`` is a fair wait, in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many queries at once: try again in {retry_after} s")
        self.retry_after = retry_after


class QueryAbandoned(RuntimeError):
    """The client that asked for the query went away; the query was stopped."""


async def unless_gone(gone: Callable[[], bool], work: Awaitable[T]) -> T:
    """The result of ``work``, unless ``gone()`` becomes true first (checked every
    :data:`CLIENT_CHECK_S`): then ``work`` is cancelled (a query's worker is killed, a
    queued query leaves the queue) and :class:`QueryAbandoned` raised.

    Why not aiohttp's ``handler_cancellation``: it would cancel every view, the admin
    actions halfway included; only a query is worth stopping.
    """
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=CLIENT_CHECK_S)
            if done:
                return task.result()
            if gone():
                raise QueryAbandoned("query stopped: its client went away")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class QueryPool:
    """At most ``workers`` queries running and ``queue`` waiting; see the module docstring.

    >>> pool = QueryPool(workers=2, queue=4, time_limit=10.0, memory_mb=512)
    >>> pool.admitted
    0
    """

    def __init__(
        self,
        workers: int,
        queue: int,
        time_limit: float,
        memory_mb: int,
        *,
        idle: Callable[[], bool] = lambda: False,
    ) -> None:
        if workers < 1 or queue < 0:
            raise ValueError("a query pool needs at least one worker and a queue of 0 or more")
        self.workers, self.queue = workers, queue
        self.time_limit, self.memory_mb = time_limit, memory_mb
        self.idle = idle
        """Whether a crawl runs now (then the workers take only idle CPU: query_worker)."""
        self.admitted = 0
        self._turns = asyncio.Semaphore(workers)
        self._mean_seconds = 1.0  # of recent queries, for Retry-After

    async def run(
        self,
        folder: Path,
        xpath: str,
        offset: int,
        limit: int,
        after: tuple[int, int] | None = None,
    ) -> tuple[list[dict[str, Any]], bool, tuple[int, int] | None]:
        """``limit`` results of ``xpath`` over the latest version of every document in
        ``folder`` after the key ``after`` (else from ``offset``), whether more follow, and
        the key of the last (``xyleme.query_worker``). Raises :class:`QueryBusy` when the
        pool is full, :class:`QueryFailed` for a query that fails."""
        try:
            compile_query(xpath, {})  # a syntax error costs no process (and no turn)
        except (LoaderError, MetadataError) as error:
            raise QueryFailed(str(error)) from None
        if self.admitted >= self.workers + self.queue:
            waits = math.ceil((self.admitted - self.workers + 1) / self.workers)
            raise QueryBusy(max(1, min(math.ceil(self.time_limit), waits * self._mean())))
        self.admitted += 1
        try:
            async with self._turns:
                started = time.monotonic()
                try:
                    return await self._in_worker(folder, xpath, offset, limit, after)
                finally:
                    elapsed = time.monotonic() - started
                    self._mean_seconds = 0.8 * self._mean_seconds + 0.2 * elapsed
        finally:
            self.admitted -= 1

    def _mean(self) -> int:
        return math.ceil(self._mean_seconds)

    async def _in_worker(
        self, folder: Path, xpath: str, offset: int, limit: int, after: tuple[int, int] | None
    ) -> tuple[list[dict[str, Any]], bool, tuple[int, int] | None]:
        request = {
            "folder": str(folder),
            "xpath": xpath,
            "offset": offset,
            "limit": limit,
            "after": after,
            "cpu_seconds": self.time_limit,
            "memory_mb": self.memory_mb,
            "idle": self.idle(),
        }
        worker = await asyncio.create_subprocess_exec(
            *python_command(WORKER),
            env=child_environment(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,  # a scheduling group of its own (xyleme.query_worker)
        )
        try:
            output, _ = await asyncio.wait_for(
                worker.communicate(json.dumps(request).encode()), self.time_limit + KILL_GRACE_S
            )
        except TimeoutError:
            raise QueryFailed(self._stopped()) from None
        finally:
            if worker.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.kill()
                await worker.wait()
        if worker.returncode != 0 or not output:
            raise QueryFailed(self._died(worker.returncode))
        answer = json.loads(output)
        if "error" in answer:
            raise QueryFailed(answer["error"])
        last = answer["last"]
        return answer["results"], answer["more"], None if last is None else tuple(last)

    def _stopped(self) -> str:
        return f"query stopped after its time limit of {self.time_limit:g} s"

    def _died(self, code: int | None) -> str:
        """Why a worker ended without an answer: its CPU limit (SIGXCPU/SIGKILL), else its
        memory limit is the likely cause."""
        if code is not None and -code in (signal.SIGXCPU, signal.SIGKILL):
            return self._stopped()
        return f"the query process failed (memory limit {self.memory_mb} MiB?)"
