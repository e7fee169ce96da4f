"""The named errors of the LiveRank orderings: each says what was wrong with the input.

They derive from :class:`~ranking.errors.RankingError` (and ``ValueError``: they are bad
input); a bad graph is the package's :class:`~ranking.errors.InvalidGraph`, a PageRank that
does not converge its :class:`~ranking.errors.NotConverged`.
"""

from __future__ import annotations

from ranking.errors import RankingError


class LiveRankError(RankingError, ValueError):
    """Base class of every LiveRank error."""


class UnknownStrategy(LiveRankError):
    """A strategy or sample kind that LiveRank does not know."""

    def __init__(self, what: str, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown {what} {name!r}; choose one of {', '.join(known)}")
        self.name = name


class InvalidAnswer(LiveRankError):
    """A liveness answer for a page that was never handed out, or answered twice."""


class NoLivePages(LiveRankError):
    """The cost function is undefined when no page is alive (n_a = 0)."""
