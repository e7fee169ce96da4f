"""Composable stop rules for iterative rankings (after LAW's ``StoppingCriterion``).

A rule looks at a running :class:`~ranking.iterative.IterativeRanking` and says whether it
should stop; rules compose with ``|`` (stop when either fires) and ``&`` (when both do).
:meth:`StopRule.check` returns the elementary rule that fired, so a result can tell whether
it stopped because it converged or because a guard ran out.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from ranking.errors import NoErrorBound

if TYPE_CHECKING:
    from ranking.iterative import IterativeRanking


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

    For the interest: its bound needs weights that converge (:mod:`ranking.inverse_bound`),
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
