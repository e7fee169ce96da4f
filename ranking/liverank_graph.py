"""Old path of :class:`ranking.liverank.LinkGraph`, kept only for
``ranking/liverank_repository.py``.

That store glue moves to the jobs layer (issue 19), which imports :mod:`ranking.liverank`;
delete this module with it.
"""

from ranking.liverank.graph import LinkGraph

__all__ = ["LinkGraph"]
