"""The ranking module's settings: a typed dataclass of documented defaults.

Each field's ``doc`` metadata is its one-line documentation, for the repository's
``xyleme.toml`` and the CLI's help.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ranking.memory import parse_size

VARIANTS = ("PR'", "PR''")


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class RankingSettings:
    """How importance and interest are computed; every field has a documented default."""

    damping: float = _setting(0.85, "damping factor c of PageRank (§5.1 eq. 5), in ]0, 1[")
    tol: float = _setting(
        1e-8,
        "stop the importance and the interest at a proven ℓ₁ error bound ≤ tol",
    )
    max_sweeps: int = _setting(1000, "guard: fail after this many sweeps without converging")
    memory: str = _setting(
        "256MB", "memory budget of a ranking run: fixes the number of matrix slices (§5.3)"
    )
    variant: str = _setting(
        "PR'", "interest teleport E': PR' uniform on XML pages, PR'' their importance (§5.2)"
    )

    def __post_init__(self) -> None:
        if not 0 < self.damping < 1:
            raise ValueError("damping must lie in ]0, 1[")
        if not self.tol > 0:
            raise ValueError("tol must be positive")
        if self.max_sweeps < 1:
            raise ValueError("max_sweeps must be at least 1")
        parse_size(self.memory)
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}")
