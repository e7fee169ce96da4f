"""The coordinator's side of the slice workers: placing them, calling them, replacing the lost.

:class:`SliceCluster` puts one :class:`~ranking.cluster.worker.SliceWorker` actor on each
Dask worker (one group of consecutive slices each), tells every actor its peers and what to
send them, and calls a method on all of them at once. A worker lost mid-call (its process
killed, its machine gone) is detected by the failed call and by the scheduler no longer
listing it; :meth:`SliceCluster.replace` starts the lost actor again on a live worker, which
reads the same block from shared storage, and the ranking restores its part of the vector.
"""

from __future__ import annotations

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
#: Replacements allowed per worker slot in one run: a slot that keeps dying is not a fault
#: to ride out but a broken cluster.
MAX_REPLACEMENTS = 3


class WorkersLost(RankingError):
    """Some slice workers were lost during a call; ``indices`` says which."""

    def __init__(self, indices: list[int]) -> None:
        super().__init__(f"slice workers {indices} were lost")
        self.indices = indices


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
        peers = dict(enumerate(self.actors))
        self.call(
            "connect",
            per=[
                ({p: a for p, a in peers.items() if p != k}, self.give[k]) for k in range(self.size)
            ],
        )

    def call(self, method: str, *args: object, per: list[tuple] | None = None) -> list[Any]:
        """``method`` on every actor at once (``per[k]`` are actor k's arguments); raises
        :class:`WorkersLost` naming the actors whose worker died."""
        calls = [
            getattr(actor, method)(*(per[k] if per is not None else args))
            for k, actor in enumerate(self.actors)
        ]
        return self.wait(calls)

    def wait(self, calls: list[Any], timeout: float | None = None) -> list[Any]:
        """The results of one pending call per actor, or :class:`WorkersLost`."""
        results, lost, failure = [], [], None
        for index, pending in enumerate(calls):
            try:
                results.append(pending.result(timeout=timeout or self.call_timeout))
            except (OSError, CommClosedError, RuntimeError, TimeoutError) as error:
                lost.append(index)
                failure = error
                results.append(None)
        if lost:
            if not self._gone(lost):
                raise RankingError(f"a slice worker failed: {failure}") from failure
            raise WorkersLost(lost)
        return results

    def _gone(self, indices: list[int]) -> bool:
        """Whether the workers of those actors left the cluster (waiting a little for the
        scheduler to notice)."""
        addresses = {self.actors[k]._address for k in indices}
        deadline = time.monotonic() + LOSS_GRACE_S
        while time.monotonic() < deadline:
            if addresses - set(self._live()):
                return True
            time.sleep(0.2)
        return False

    def replace(self, lost: list[int], restore: Callable[[int], None]) -> None:
        """Start the lost actors again on live workers (the fewest actors first), reconnect
        everyone, and let ``restore(index)`` give each new actor its state."""
        self.replacements += len(lost)
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
            restore(index)

    def counters(self) -> dict[str, int]:
        """Bytes sent between workers, local sweeps and lost sends, summed over actors."""
        totals: dict[str, int] = {}
        for counters in self.call("counters"):
            for key, value in counters.items():
                totals[key] = totals.get(key, 0) + value
        return totals

    def close(self) -> None:
        """Release the actors (their workers free the blocks)."""
        for future in self.futures:
            if future is not None:
                future.release()
