"""The sliced ranking on a Dask cluster (paper §5.4): one block of slices per worker.

Imported only when a distributed run is asked for (it needs the ``[cluster]`` extra,
``dask[distributed]``). :func:`cluster_rank` ranks a :class:`~ranking.pagerank.slices.SlicedGraph`
folder on the cluster of a :func:`dask_client`; see docs/ranking.md, "On a Dask cluster".
"""

from ranking.cluster.compute import MODES, cluster_rank, dask_client
from ranking.cluster.rankings import SweepMonitor

__all__ = ["MODES", "SweepMonitor", "cluster_rank", "dask_client"]
