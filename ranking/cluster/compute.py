"""One call to rank a sliced graph on a Dask cluster, with the single-machine stop rules.

:func:`cluster_rank` is :func:`ranking.pagerank.compute.importance_and_interest` on a cluster: the
same stop rules (a proven ℓ₁ bound ≤ ``tol`` for both vectors, a max-sweeps guard), the
same :class:`~ranking.errors.NotConverged` when the guard runs out, the same results.
:func:`dask_client` connects to a scheduler (``--cluster``) or starts a ``LocalCluster`` of
processes on this machine (``--workers``), bound to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import numpy as np
from distributed import Client, LocalCluster

from ranking.cluster.actors import SliceCluster
from ranking.cluster.interest import ClusterInterest
from ranking.cluster.rankings import ClusterPageRank, SweepMonitor
from ranking.errors import RankingError
from ranking.pagerank.compute import direct_stop, inverse_stop
from ranking.pagerank.inverse import importance_teleport, xml_teleport
from ranking.result import RankResult
from ranking.settings import VARIANTS
from ranking.stepping import checked

MODES = ("sync", "chaotic")
#: Seconds to reach a scheduler given by address before saying it cannot be reached.
CONNECT_TIMEOUT_S = 10


@contextlib.contextmanager
def dask_client(
    address: str | None = None,
    *,
    workers: int | None = None,
    memory_per_worker: str | int = "1GB",
    dashboard: bool = True,
) -> Iterator[Client]:
    """A client of the scheduler at ``address``, or of a new ``LocalCluster`` of ``workers``
    single-threaded processes (each with ``memory_per_worker``), closed on exit.

    The local cluster listens on 127.0.0.1 only; its HTTP server (with the dashboard when
    ``dashboard`` and bokeh is installed) on a free port of 127.0.0.1.
    """
    if (address is None) == (workers is None):
        raise ValueError("give either a scheduler address or a number of workers")
    try:
        if address is not None:
            client = Client(address, timeout=CONNECT_TIMEOUT_S, direct_to_workers=True)
            cluster = None
        else:
            if workers < 1:
                raise ValueError(f"a local cluster needs at least 1 worker, not {workers}")
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # its HTTP server, dashboard or not
                scheduler_kwargs={"dashboard": dashboard},
                memory_limit=memory_per_worker,
                silence_logs=logging.ERROR,
            )
            client = Client(cluster, direct_to_workers=True)
    except (OSError, TimeoutError, ValueError) as error:
        where = address or "a local cluster"
        raise RankingError(f"cannot reach the Dask scheduler at {where}: {error}") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def cluster_rank(
    client: Client,
    url: str,
    is_xml: np.ndarray | None,
    *,
    damping: float = 0.85,
    variant: str = "PR'",
    tol: float = 1e-8,
    max_sweeps: int = 1000,
    mode: str = "sync",
    memory_per_worker: int = 1 << 30,
    call_timeout: float = 600.0,
    monitor: SweepMonitor | None = None,
    strict: bool = True,
) -> tuple[RankResult, RankResult | None]:
    """Importance (and interest when ``is_xml`` is given) of the sliced graph at ``url``.

    Parameters
    ----------
    client : distributed.Client
        A client of the cluster; every worker must be able to read ``url``.
    url : str
        The folder of a :class:`~ranking.pagerank.slices.SlicedGraph` (path or fsspec URL).
    is_xml : ndarray or None
        The XML pages (the interest's E'); None ranks the importance only.
    mode : {"sync", "chaotic"}
        A barrier after every sweep, or §5.4's chaotic iterations (both rankings).
    memory_per_worker : int
        Bytes a worker may hold for its block and vectors; refused beforehand if short.
    call_timeout : float
        Seconds a sweep may take before its worker is taken for lost.

    Other parameters and the results are those of
    :func:`~ranking.pagerank.compute.importance_and_interest`.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    cluster = SliceCluster(
        client, url, budget=memory_per_worker, damping=damping, call_timeout=call_timeout
    )
    try:
        direct = ClusterPageRank(
            cluster, chaotic=mode == "chaotic", tol=tol, max_sweeps=max_sweeps, monitor=monitor
        )
        importance = checked(direct.run(direct_stop(tol, max_sweeps)), strict)
        if is_xml is None:
            return importance, None
        if variant == "PR''":
            teleport = importance_teleport(importance.values, is_xml)
        else:
            teleport = xml_teleport(is_xml)
        inverse = ClusterInterest(
            cluster,
            teleport,
            variant=variant,
            chaotic=mode == "chaotic",
            tol=tol,
            max_sweeps=max_sweeps,
            monitor=monitor,
        )
        return importance, checked(inverse.run(inverse_stop(tol, max_sweeps)), strict)
    finally:
        cluster.close()
