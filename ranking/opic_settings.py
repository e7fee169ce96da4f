"""OPIC's settings: documented defaults, built from plain values (the daemon composes them)."""

from __future__ import annotations

from dataclasses import dataclass

from ranking.opic import OPIC
from ranking.opic_select import STRATEGIES, PageSelector
from ranking.opic_windows import (
    FullHistory,
    HistoryWindow,
    Interpolation,
    fixed_window,
    variable_window,
)

WINDOW_POLICIES = ("interpolation", "variable", "fixed", "full")
"""Accepted values of :attr:`OPICSettings.window`."""


@dataclass(frozen=True)
class OPICSettings:
    """How the daemon runs OPIC. Spans are in G-time: 1 ≈ one read of every page (§3.2)."""

    damping: float = 0.85
    """``c``: share of a read page's cash for its children; the rest goes to the virtual page,
    so the fixpoint is PageRank(c), the ranking module's."""
    window: str = "interpolation"
    """History policy (§3.3): ``interpolation`` (Xyleme's, one measure per page), ``variable``
    (last ``measures`` reads), ``fixed`` (reads of the last ``span``) or ``full`` (static)."""
    span: float = 4.0
    """Window length T in G-time for ``interpolation`` and ``fixed``."""
    measures: int = 8
    """Measures kept per page by ``variable``; the memory cap of ``fixed``."""
    min_measures: int = 3
    """Minimum measures per page of ``fixed`` (the paper's Improved Fixed Window; 0: plain)."""
    selection: str = "greedy"
    """Page selection for discovery (§3.1): ``greedy``, ``random`` or ``cycle``."""
    discovery_cash: float = 1.0
    """Cash a new page takes from the virtual page, in units of the mean cash per page."""
    xml_weight: float = 1.0
    """Weight of pages suspected to be XML in the virtual page's payments (1: no bias; 2:
    twice the share). Above 1 the estimates become PageRank personalised towards XML."""
    checkpoint_key: str = "opic"
    """Key of the snapshot in the metadata's state blobs."""

    def __post_init__(self) -> None:
        if self.window not in WINDOW_POLICIES:
            raise ValueError(f"window must be one of {WINDOW_POLICIES}, got {self.window!r}")
        if self.selection not in STRATEGIES:
            raise ValueError(
                f"selection must be one of {tuple(STRATEGIES)}, got {self.selection!r}"
            )
        if not self.xml_weight > 0:
            raise ValueError(f"xml_weight must be positive, got {self.xml_weight!r}")

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
