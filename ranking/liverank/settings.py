"""The documented defaults of the LiveRank orderings (strategy, sample, damping, seed)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

STATIC_STRATEGIES = ("r", "i", "p")
"""§2.3: random permutation, decreasing in-degree, PageRank."""
SAMPLE_BASED_STRATEGIES = ("pa", "pa_pm", "asf")
"""§2.4: simple adaptive P_a, double adaptive P_a^{+/-}, active-site first."""
DYNAMIC_STRATEGIES = ("bfs", "ai")
"""§2.5: breadth-first search, active in-degree."""
STRATEGIES = STATIC_STRATEGIES + SAMPLE_BASED_STRATEGIES + DYNAMIC_STRATEGIES
"""Every strategy name, the same in the library, the CLI and the benchmark."""
SAMPLE_KINDS = ("random", "pagerank", "indegree")
"""How the sample Z is drawn (§4.1.2): uniformly, or the top pages by P or by I."""


@dataclass(frozen=True, config=SETTINGS)
class LiveRankSettings:
    """How to order a re-check; every field has the default the paper found best for the web."""

    strategy: Literal[STRATEGIES] = "pa_pm"
    """One of :data:`STRATEGIES`; P_a^{+/-} with a random sample is within a factor 2 of the
    ideal up to half the live pages on web graphs (§4.1.2)."""
    sample: Annotated[float, Field(ge=0.0, le=1e10)] = 0.01
    """The size z of the training set: a fraction of the pages when below 1, a whole page
    count otherwise (the paper tests 100,000 of 18.5 million pages, about 0.5 %)."""
    sample_kind: Literal[SAMPLE_KINDS] = "random"
    """One of :data:`SAMPLE_KINDS`."""
    damping: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.85
    """d of eq. (1) for every PageRank computed (§2.3: 0.85)."""
    seed: Annotated[int, Field(ge=0, le=2**64 - 1)] = 0
    """Seeds the random permutation R, the random sample and ASF's tie-breaks, so an
    ordering is reproducible."""

    def __post_init__(self) -> None:
        if self.sample >= 1 and self.sample != int(self.sample):
            raise ValueError(
                f"sample must be a fraction in [0, 1) or a whole page count, not {self.sample}"
            )

    def sample_size(self, n_pages: int) -> int:
        """z for a snapshot of ``n_pages`` pages (never more than the snapshot)."""
        if self.sample < 1:
            return min(n_pages, round(self.sample * n_pages))
        return min(n_pages, int(self.sample))
