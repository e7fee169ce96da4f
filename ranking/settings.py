"""The ranking module's settings: a typed dataclass of documented defaults and ranges.

Written in the convention of every package's settings (``conventions``): each field
declares its range and is followed by its one-line documentation, for the repository's
``xyleme.toml`` and the CLI's help.
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS
from ranking.pagerank.memory import parse_size

Variant = Literal["PR'", "PR''"]
VARIANTS = get_args(Variant)

MIN_MEMORY = 1 << 20
MAX_MEMORY = 1 << 40


def memory_budget(text: str) -> str:
    """a size from 1MB to 1TB, such as "256MB" or "2G" (binary units)"""
    size = parse_size(text)
    if not MIN_MEMORY <= size <= MAX_MEMORY:
        raise ValueError(f"{text!r} is not between 1MB and 1TB")
    return text


@dataclass(frozen=True, slots=True, config=SETTINGS)
class RankingSettings:
    """How importance and interest are computed; every field has a documented default."""

    damping: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.85
    """damping factor c of PageRank (§5.1 eq. 5), in ]0, 1["""
    tol: Annotated[float, Field(ge=1e-15, le=0.1)] = 1e-8
    """stop the importance and the interest at a proven ℓ₁ error bound ≤ tol"""
    max_sweeps: Annotated[int, Field(ge=1, le=1_000_000)] = 1000
    """guard: fail after this many sweeps without converging"""
    memory: Annotated[str, Field(max_length=32), AfterValidator(memory_budget)] = "256MB"
    """memory budget of a ranking run: fixes the number of matrix slices (§5.3)"""
    variant: Variant = "PR'"
    """interest teleport E': PR' uniform on XML pages, PR'' their importance (§5.2)"""
