"""The coordinator's side of the slice workers: placing them, calling them, replacing the lost.

:class:`SliceCluster` puts one :class:`~ranking.cluster.worker.SliceWorker` actor on each
Dask worker (one group of consecutive slices each), tells every actor its peers and what to
send them, and calls a method on all of them at once. A worker lost mid-call (its process
killed, its machine gone) is detected by the failed call and by the scheduler no longer
listing it; :meth:`SliceCluster.replace` starts the lost actor again on a live worker, which
reads the same block from shared storage, and the ranking restores its part of the vector.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from distributed import Client
from distributed.comm.core import CommClosedError

from ranking.cluster.blocks import assign, check_budget, read_info
from ranking.cluster.worker import SliceWorker
from ranking.errors import RankingError

#: Seconds to wait for the scheduler to drop a worker whose call failed, before deciding the
#: failure was the method's own (and raising it).
LOSS_GRACE_S = 15.0
#: Seconds between two looks at the scheduler's list of workers while a call runs.
POLL_S = 0.5
#: Replacements allowed per worker slot in one run: a slot that keeps dying is not a fault
#: to ride out but a broken cluster.
MAX_REPLACEMENTS = 3


class WorkersLost(RankingError):
    """Some slice workers were lost during a call; ``indices`` says which."""

    def __init__(self, indices: list[int]) -> None:
        super().__init__(f"slice workers {indices} were lost")
        self.indices = indices


class _Lost:
    """A call that could not be made: its actor's handle already knows the worker is gone."""

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> None:
        raise RuntimeError("Worker holding Actor was lost")


class SliceCluster:
    """The actors of one distributed ranking: one block of slices per Dask worker.

    Parameters
    ----------
    client : distributed.Client
        A client of the cluster (``LocalCluster`` or a remote scheduler).
    url : str
        The sliced graph's folder, a path or fsspec URL every worker can read.
    budget : int
        Bytes a worker may use for its block and vectors (refused before starting).
    damping : float
        c of both rankings.
    call_timeout : float
        Seconds one call to all actors may take (a sweep, or a chaotic run's poll).
    """

    def __init__(
        self, client: Client, url: str, *, budget: int, damping: float, call_timeout: float
    ) -> None:
        self.client = client
        self.info = read_info(url)
        self.damping = damping
        self.call_timeout = call_timeout
        addresses = self._live()
        if not addresses:
            raise RankingError("the Dask cluster has no worker")
        self.groups = assign(self.info.n_slices, len(addresses))
        check_budget(self.info, self.groups, budget)
        bounds = self.info.bounds
        self.ranges = [(int(bounds[g[0]]), int(bounds[g[-1] + 1])) for g in self.groups]
        self.actors: list[Any] = [None] * len(self.groups)
        self.futures: list[Any] = [None] * len(self.groups)
        self.replacements = 0
        self._retired: dict[str, float] = {}
        self._last: list[dict[str, float]] = [{} for _ in self.groups]
        self._epoch = 0
        for index, address in enumerate(addresses[: len(self.groups)]):
            self._start(index, address)
        wanted = self.call("needs")
        self.give = [
            {peer: wanted[peer][index] for peer in range(self.size) if peer != index}
            for index in range(self.size)
        ]
        self._connect()

    @property
    def size(self) -> int:
        return len(self.groups)

    def next_epoch(self) -> int:
        """A new number for a chaotic run, which ``halt(epoch)`` ends (one sequence for both
        rankings: an actor's halt mark outlives a run)."""
        self._epoch += 1
        return self._epoch

    def _live(self) -> list[str]:
        return sorted(self.client.scheduler_info(n_workers=-1)["workers"])

    def _start(self, index: int, address: str) -> None:
        future = self.client.submit(
            SliceWorker,
            self.info.url,
            self.groups[index],
            index,
            self.ranges,
            self.damping,
            actor=True,
            workers=[address],
            allow_other_workers=False,
            pure=False,
        )
        self.actors[index] = future.result(timeout=self.call_timeout)
        self.futures[index] = future

    def _connect(self) -> None:
        peers = {k: f"{actor._address} {actor.key}" for k, actor in enumerate(self.actors)}
        self.call(
            "connect",
            per=[
                ({p: a for p, a in peers.items() if p != k}, self.give[k]) for k in range(self.size)
            ],
        )

    def call(self, method: str, *args: object, per: list[tuple] | None = None) -> list[Any]:
        """``method`` on every actor at once (``per[k]`` are actor k's arguments); raises
        :class:`WorkersLost` naming the actors whose worker died."""
        calls = []
        for k, actor in enumerate(self.actors):
            try:
                calls.append(getattr(actor, method)(*(per[k] if per is not None else args)))
            except RuntimeError:  # the handle knows its worker was lost
                calls.append(_Lost())
        return self.wait(calls)

    def wait(
        self, calls: list[Any], indices: list[int] | None = None, timeout: float | None = None
    ) -> list[Any]:
        """The results of pending calls to the actors ``indices`` (all, in order, by
        default), or :class:`WorkersLost`.

        Watches the scheduler while waiting: a call to a dead worker's actor may never
        answer (its handle waits for the actor to be recomputed), so a worker that left the
        cluster is noticed there, within a poll; the survivors' calls are then waited for.
        """
        deadline = time.monotonic() + (timeout or self.call_timeout)
        indices = list(range(len(calls))) if indices is None else indices
        hosts = {k: self.actors[k]._address for k in indices}
        lost: list[int] = []
        while time.monotonic() < deadline:
            waiting = [call for call in calls if not call.done()]
            if not waiting:
                break
            try:
                waiting[0].result(timeout=POLL_S)
            except TimeoutError:
                live = set(self._live())
                lost = [k for k, host in hosts.items() if host not in live]
                if lost:
                    self._forget(lost)
                    break
            except Exception:  # its error is read again below
                continue
        results, failure = [], None
        for index, pending in zip(indices, calls, strict=True):
            if index in lost:
                results.append(None)
                continue
            try:
                results.append(pending.result(timeout=max(deadline - time.monotonic(), 1.0)))
            except (OSError, CommClosedError, RuntimeError, TimeoutError) as error:
                lost.append(index)
                failure = error
                results.append(None)
        if lost:
            if failure is not None:
                if not self._gone(lost):
                    raise RankingError(f"a slice worker failed: {failure}") from failure
                self._forget(lost)
            raise WorkersLost(sorted(set(lost)))
        return results

    @staticmethod
    def wait_any(calls: list[Any], seconds: float) -> None:
        """Return once one of the pending ``calls`` is done (the first one, of runs that end
        together) or after ``seconds``; their errors are :meth:`wait`'s to read."""
        pending = [call for call in calls if not call.done()]
        if pending:
            with contextlib.suppress(Exception):
                pending[0].result(timeout=seconds)

    def _forget(self, lost: list[int]) -> None:
        """Tell the other actors to stop sending to the lost ones (best effort: a survivor
        that does not answer is found lost by the next call)."""
        for index, actor in enumerate(self.actors):
            if index not in lost:
                with contextlib.suppress(OSError, CommClosedError, RuntimeError, TimeoutError):
                    actor.forget(lost).result(timeout=self.call_timeout)

    def _gone(self, indices: list[int]) -> bool:
        """Whether the worker of one of those actors left the cluster (waiting a little for
        the scheduler to notice)."""
        addresses = {self.actors[k]._address for k in indices}
        deadline = time.monotonic() + LOSS_GRACE_S
        while time.monotonic() < deadline:
            if addresses - set(self._live()):
                return True
            time.sleep(0.2)
        return False

    def replace(self, lost: list[int], restore: Callable[[int, list[int]], None]) -> None:
        """Start the lost actors again on live workers (the fewest actors first), reconnect
        everyone, and let ``restore(index, lost)`` give each new actor its state."""
        self.replacements += len(lost)
        for index in lost:
            for key, value in self._last[index].items():
                self._retired[key] = self._retired.get(key, 0) + value
        if self.replacements > MAX_REPLACEMENTS * self.size:
            raise RankingError(f"{self.replacements} slice workers lost: giving up")
        for index in lost:
            self.futures[index].release()
            hosting = {a._address for k, a in enumerate(self.actors) if k not in lost}
            live = self._live()
            if not live:
                raise RankingError("every Dask worker was lost")
            address = min(live, key=lambda a: (a in hosting, a))
            self._start(index, address)
        self._connect()
        for index in lost:
            restore(index, lost)

    def counters(self) -> dict[str, float]:
        """Bytes sent between workers, local sweeps, lost sends and the workers' seconds
        (:mod:`ranking.cluster.exchange`), summed over the actors, those replaced included as
        last read (a lost actor's later sends are not counted)."""
        self._last = self.call("counters")
        totals = dict(self._retired)
        for counters in self._last:
            for key, value in counters.items():
                totals[key] = totals.get(key, 0) + value
        return totals

    def close(self) -> None:
        """Release the actors (their workers free the blocks)."""
        for future in self.futures:
            if future is not None:
                future.release()
