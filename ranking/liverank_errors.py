"""The named errors of the LiveRank orderings: each says what was wrong with the input."""

from __future__ import annotations


class LiveRankError(ValueError):
    """Base class of every LiveRank error."""


class InvalidGraph(LiveRankError):
    """The link graph (edges, hosts, zap vector) cannot be used as given."""


class UnknownStrategy(LiveRankError):
    """A strategy or sample kind that LiveRank does not know."""

    def __init__(self, what: str, name: str, known: tuple[str, ...]) -> None:
        super().__init__(f"unknown {what} {name!r}; choose one of {', '.join(known)}")
        self.name = name


class InvalidAnswer(LiveRankError):
    """A liveness answer for a page that was never handed out, or answered twice."""


class NoLivePages(LiveRankError):
    """The cost function is undefined when no page is alive (n_a = 0)."""


class PageRankDidNotConverge(LiveRankError):
    """The power method did not reach its error bound in the allowed iterations."""

    def __init__(self, iterations: int, bound: float, tolerance: float) -> None:
        super().__init__(
            f"PageRank did not converge in {iterations} iterations: "
            f"error bound {bound:.3g} > tolerance {tolerance:.3g}"
        )
        self.iterations = iterations
        self.bound = bound
