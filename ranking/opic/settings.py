"""OPIC's settings: documented defaults, built from plain values (the daemon composes them)."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS
from ranking.opic.cash import OPIC
from ranking.opic.select import STRATEGIES, PageSelector
from ranking.opic.windows import (
    FullHistory,
    HistoryWindow,
    Interpolation,
    fixed_window,
    variable_window,
)

WindowPolicy = Literal["interpolation", "variable", "fixed", "full"]
WINDOW_POLICIES = get_args(WindowPolicy)
"""Accepted values of :attr:`OPICSettings.window`."""
Selection = Literal[tuple(STRATEGIES)]
"""Accepted values of :attr:`OPICSettings.selection`: the names of the strategies."""

MAX_MEASURES = 10_000
"""Measures kept per page, at most: the history's memory grows with measures × pages."""


@dataclass(frozen=True, config=SETTINGS)
class OPICSettings:
    """How the daemon runs OPIC. Spans are in G-time: 1 ≈ one read of every page (§3.2)."""

    damping: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.85
    """``c``: share of a read page's cash for its children; the rest goes to the virtual page,
    so the fixpoint is PageRank(c), the ranking module's."""
    window: WindowPolicy = "interpolation"
    """History policy (§3.3): ``interpolation`` (Xyleme's, one measure per page), ``variable``
    (last ``measures`` reads), ``fixed`` (reads of the last ``span``) or ``full`` (static)."""
    span: Annotated[float, Field(gt=0.0, le=1e6)] = 4.0
    """Window length T in G-time for ``interpolation`` and ``fixed``."""
    measures: Annotated[int, Field(ge=1, le=MAX_MEASURES)] = 8
    """Measures kept per page by ``variable``; the memory cap of ``fixed``."""
    min_measures: Annotated[int, Field(ge=0, le=MAX_MEASURES)] = 3
    """Minimum measures per page of ``fixed`` (the paper's Improved Fixed Window; 0: plain)."""
    selection: Selection = "greedy"
    """Page selection for discovery (§3.1): ``greedy``, ``random`` or ``cycle``."""
    discovery_cash: Annotated[float, Field(ge=0.0, le=1e6)] = 1.0
    """Cash a new page takes from the virtual page, in units of the mean cash per page."""
    xml_weight: Annotated[float, Field(gt=0.0, le=1e6)] = 1.0
    """Weight of pages suspected to be XML in the virtual page's payments (1: no bias; 2:
    twice the share). Above 1 the estimates become PageRank personalised towards XML."""
    checkpoint_key: Annotated[str, Field(min_length=1, max_length=128)] = "opic"
    """Key of the snapshot in the metadata's state blobs."""

    def build_window(self) -> HistoryWindow:
        """The window policy these settings name."""
        if self.window == "interpolation":
            return Interpolation(self.span)
        if self.window == "variable":
            return variable_window(self.measures)
        if self.window == "fixed":
            return fixed_window(self.span, self.min_measures, max(self.measures, self.min_measures))
        return FullHistory()

    def build(self, pages: int = 0) -> OPIC:
        """A fresh OPIC with these settings and ``pages`` known pages."""
        return OPIC(
            pages=pages,
            damping=self.damping,
            window=self.build_window(),
            discovery_cash=self.discovery_cash,
        )

    def build_selector(self, opic: OPIC, seed: int | None = None) -> PageSelector:
        """The page selection strategy these settings name, bound to ``opic``."""
        if self.selection == "random":
            return STRATEGIES["random"](opic, seed)
        return STRATEGIES[self.selection](opic)
