"""The iteration loop shared by every ranking algorithm (after LAW's ``SpectralRanking``).

A subclass writes :meth:`~IterativeRanking.init`, :meth:`~IterativeRanking.step` (one sweep)
and the error figures it can honestly provide; :meth:`~IterativeRanking.run` owns the loop
``init(); while not stop: step()`` and packs the vector with its provenance.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ranking.errors import NoErrorBound
from ranking.result import RankResult
from ranking.stopping import StopRule


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

    def run(self, stop: StopRule) -> RankResult:
        """Iterate from the start vector until ``stop`` fires; return the result."""
        self.init()
        while (fired := stop.check(self)) is None:
            self.step()
        return self.result(fired)
