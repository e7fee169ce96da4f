"""The stepping core shared by every ranking (after LAW WebGraph's ``SpectralRanking``).

One place holds the loop, the stop rules and the error bounds they may stop on:

* :class:`IterativeRanking` owns the loop ``init(); while not stop: step()`` (:meth:`run`)
  and packs the vector with its provenance (:class:`~ranking.result.RankResult`). A
  subclass writes ``init``, ``step`` (one sweep), ``vector`` and the figures it can honestly
  give: :meth:`~IterativeRanking.norm_delta` (a proven bound on ‖x⁽ᵗ⁾ − x*‖₁) and
  :meth:`~IterativeRanking.relative_change`; both raise :class:`NoErrorBound` by default, so
  nothing ever stops on a bound an algorithm lacks (LAW's ``normDelta`` makes that choice).
* :class:`ContractingRanking` is the common case of an iteration whose sweep contracts the
  ℓ₁ error by the damping c: its bound is :func:`contraction_bound`.
* :class:`StopRule` decides after each sweep; rules compose with ``|`` (either) and ``&``
  (both), and :meth:`StopRule.check` returns the elementary rule that fired, so a result
  says whether it converged or a guard ran out (:class:`~ranking.errors.NotConverged`).

The algorithms are small subclasses: the sliced Gauss-Seidel sweeps and the in-RAM power
iteration of :mod:`ranking.pagerank`, the personalised PageRank of :mod:`ranking.liverank`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ranking.errors import NoErrorBound, NotConverged
from ranking.result import RankResult


def contraction_bound(damping: float, delta: float) -> float:
    """c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁: a bound on ‖x⁽ᵗ⁾ − x*‖₁ when a sweep contracts the ℓ₁
    error by c.

    If ‖x⁽ᵗ⁾ − x*‖₁ ≤ c·‖x⁽ᵗ⁻¹⁾ − x*‖₁, the triangle inequality gives
    ‖x⁽ᵗ⁻¹⁾ − x*‖₁ ≤ ‖x⁽ᵗ⁻¹⁾ − x⁽ᵗ⁾‖₁ + ‖x⁽ᵗ⁾ − x*‖₁, hence
    (1 − c)·‖x⁽ᵗ⁾ − x*‖₁ ≤ c·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ (LAW's ``PageRankGaussSeidel`` uses it).

    Examples
    --------
    >>> round(contraction_bound(0.85, 1e-9), 12)
    5.667e-09
    """
    return damping / (1.0 - damping) * delta


class IterativeRanking(ABC):
    """A ranking vector computed by repeated sweeps until a :class:`StopRule` fires.

    Subclasses set ``kind`` and ``damping``, and override :meth:`norm_delta` only when they
    have a proven bound on the distance to the fixed point, :meth:`relative_change` when they
    can measure a sweep's progress. The defaults raise :class:`NoErrorBound`.
    """

    kind: str = "ranking"
    damping: float
    snapshot: str = ""

    def __init__(self) -> None:
        self.sweeps = 0

    def init(self) -> None:
        """Set the start vector; called by :meth:`run` before the first sweep."""
        self.sweeps = 0

    @abstractmethod
    def step(self) -> None:
        """Do one sweep and increment ``sweeps``."""

    @abstractmethod
    def vector(self) -> np.ndarray:
        """The current ranking vector."""

    def norm_delta(self) -> float:
        """A proven upper bound on ‖x⁽ᵗ⁾ − x*‖₁; raises when the algorithm has none."""
        raise NoErrorBound(f"{type(self).__name__} has no proven bound on its ℓ₁ error")

    def relative_change(self) -> float:
        """‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ / ‖x⁽ᵗ⁾‖₁ of the last sweep; raises when not measured."""
        raise NoErrorBound(f"{type(self).__name__} does not measure its relative change")

    def figure(self) -> tuple[str, float]:
        """The best progress figure available: the error bound, else the relative change."""
        try:
            return "l1_error_bound", self.norm_delta()
        except NoErrorBound:
            return "relative_l1_change", self.relative_change()

    def details(self) -> dict[str, object]:
        """Algorithm-specific facts stored with the result (variant, normalisation...)."""
        return {}

    def result(self, fired: StopRule | None) -> RankResult:
        """Pack the current vector with its provenance; ``fired`` is the rule that stopped."""
        name, value = self.figure() if self.sweeps else ("l1_error_bound", float("inf"))
        return RankResult(
            kind=self.kind,
            values=self.vector(),
            damping=self.damping,
            sweeps=self.sweeps,
            figure_name=name,
            figure=float(value),
            converged=bool(fired is not None and fired.converges),
            stopped_by=repr(fired),
            snapshot=self.snapshot,
            details=self.details(),
        )

    def run(self, stop: StopRule, *, strict: bool = False) -> RankResult:
        """Iterate from the start vector until ``stop`` fires; return the result.

        With ``strict``, a guard that fired before convergence raises :class:`NotConverged`
        (the partial result attached).
        """
        self.init()
        while (fired := stop.check(self)) is None:
            self.step()
        return checked(self.result(fired), strict)


class ContractingRanking(IterativeRanking):
    """An iteration whose sweep contracts the ℓ₁ error by its damping c: it keeps the last
    sweep's ‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ in ``last_delta`` and bounds its error by
    :func:`contraction_bound`. A subclass proves the contraction in its docstring."""

    last_delta: float = float("inf")

    def norm_delta(self) -> float:
        """c/(1 − c)·‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ (:func:`contraction_bound`)."""
        return contraction_bound(self.damping, self.last_delta)


def checked(result: RankResult, strict: bool) -> RankResult:
    """``result``, or :class:`NotConverged` when ``strict`` and a guard stopped it."""
    if strict and not result.converged:
        raise NotConverged(result)
    return result


class StopRule(ABC):
    """Decides, after each sweep, whether an iterative ranking is done."""

    #: True when firing means the vector is within the rule's tolerance.
    converges: bool = True

    @abstractmethod
    def check(self, ranking: IterativeRanking) -> StopRule | None:
        """The elementary rule that fires for ``ranking`` now, or None to keep going."""

    def __or__(self, other: StopRule) -> StopRule:
        return AnyOf(self, other)

    def __and__(self, other: StopRule) -> StopRule:
        return AllOf(self, other)


class MaxSweeps(StopRule):
    """Stop after ``limit`` sweeps: a guard, so firing does not mean convergence."""

    converges = False

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max sweeps must be at least 1, not {limit}")
        self.limit = limit

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        return self if ranking.sweeps >= self.limit else None

    def __repr__(self) -> str:
        return f"MaxSweeps({self.limit})"


class L1Bound(StopRule):
    """Stop when the algorithm's proven ℓ₁ error bound (``norm_delta``) is at most ``tol``.

    The bound is asked of the ranking, which raises
    :class:`~ranking.errors.NoErrorBound` when it has none: a rule never stops on a figure
    that does not bound the error.
    """

    def __init__(self, tol: float) -> None:
        if not tol > 0:
            raise ValueError(f"the ℓ₁ bound must be positive, not {tol}")
        self.tol = tol

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        if ranking.sweeps == 0:
            return None
        return self if ranking.norm_delta() <= self.tol else None

    def __repr__(self) -> str:
        return f"L1Bound({self.tol:g})"


class BoundElseChange(L1Bound):
    """Stop when the proven ℓ₁ bound is at most ``tol``; where the ranking shows that no bound
    exists for its input (it raises :class:`~ranking.errors.NoErrorBound`), when the
    relative change is. The result's ``figure_name`` says which figure stopped it.

    For the interest: its bound needs weights that converge (:mod:`ranking.pagerank.inverse_bound`),
    which a graph whose XML pages have no parents can prevent.
    """

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        if ranking.sweeps == 0:
            return None
        try:
            figure = ranking.norm_delta()
        except NoErrorBound:
            figure = ranking.relative_change()
        return self if figure <= self.tol else None

    def __repr__(self) -> str:
        return f"BoundElseChange({self.tol:g})"


class RelativeChange(StopRule):
    """Stop when the relative ℓ₁ change of the last sweep, ‖x⁽ᵗ⁾ − x⁽ᵗ⁻¹⁾‖₁ / ‖x⁽ᵗ⁾‖₁, is ≤ ``tol``.

    For iterations without a contraction bound (the inverse ranking, the renormalised
    direct ranking); it measures progress, not the distance to the fixed point.
    """

    def __init__(self, tol: float) -> None:
        if not tol > 0:
            raise ValueError(f"the relative change must be positive, not {tol}")
        self.tol = tol

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        if ranking.sweeps == 0:
            return None
        return self if ranking.relative_change() <= self.tol else None

    def __repr__(self) -> str:
        return f"RelativeChange({self.tol:g})"


class AnyOf(StopRule):
    """Fires when any of its rules fires (the first one, in order, is reported)."""

    def __init__(self, *rules: StopRule) -> None:
        self.rules = rules

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        for rule in self.rules:
            fired = rule.check(ranking)
            if fired is not None:
                return fired
        return None

    def __repr__(self) -> str:
        return " | ".join(map(repr, self.rules))


class AllOf(StopRule):
    """Fires when all of its rules fire; reports the last one."""

    def __init__(self, *rules: StopRule) -> None:
        self.rules = rules

    def check(self, ranking: IterativeRanking) -> StopRule | None:
        fired = None
        for rule in self.rules:
            fired = rule.check(ranking)
            if fired is None:
                return None
        return fired

    def __repr__(self) -> str:
        return " & ".join(map(repr, self.rules))
