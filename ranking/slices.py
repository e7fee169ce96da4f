"""Old path of :mod:`ranking.pagerank.slices`, kept only for ``ranking/repository.py``.

That store glue moves to the jobs layer (issue 19), which imports :mod:`ranking.pagerank`;
delete this module with it.
"""

from ranking.pagerank.slices import SlicedGraph

__all__ = ["SlicedGraph"]
