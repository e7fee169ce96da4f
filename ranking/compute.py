"""Old path of :mod:`ranking.pagerank.compute`, kept only for ``ranking/repository.py``.

That store glue moves to the jobs layer (issue 19), which imports :mod:`ranking.pagerank`;
delete this module with it.
"""

from ranking.pagerank.compute import importance_and_interest, pagerank

__all__ = ["importance_and_interest", "pagerank"]
