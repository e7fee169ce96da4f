"""OPIC: on-line page importance computed while crawling (seed 000: Abiteboul, Preda, Cobena).

:class:`OPIC` holds the cash, the histories and the virtual page; a :class:`HistoryWindow`
(:class:`FullHistory`, :class:`Interpolation`, :func:`variable_window`, :func:`fixed_window`)
decides what of the history the estimate remembers; a :class:`PageSelector`
(:class:`Greedy`, :class:`RandomSelection`, :class:`Cycle`) says which page to read next;
:func:`suspect_xml` picks the pages a focused crawl weighs more. :class:`OPICSettings` holds
the documented defaults; :class:`OPICPart` is one part of a distributed OPIC (§4.1), whose
cash for other parts' pages goes out as transfers. See docs/opic.md.
"""

from __future__ import annotations

from ranking.opic.cash import OPIC, CashListener
from ranking.opic.errors import (
    BadTransfer,
    CorruptSnapshot,
    ForeignPage,
    NoPages,
    OPICError,
    UnknownPage,
)
from ranking.opic.focus import suspect_xml
from ranking.opic.parts import VIRTUAL, OPICPart, PartView
from ranking.opic.select import STRATEGIES, Cycle, Greedy, PageSelector, RandomSelection
from ranking.opic.settings import WINDOW_POLICIES, OPICSettings
from ranking.opic.snapshot import StateStore
from ranking.opic.windows import (
    FullHistory,
    HistoryWindow,
    Interpolation,
    MeasureWindow,
    fixed_window,
    variable_window,
)

__all__ = [
    "OPIC",
    "STRATEGIES",
    "VIRTUAL",
    "WINDOW_POLICIES",
    "BadTransfer",
    "CashListener",
    "CorruptSnapshot",
    "Cycle",
    "ForeignPage",
    "FullHistory",
    "Greedy",
    "HistoryWindow",
    "Interpolation",
    "MeasureWindow",
    "NoPages",
    "OPICError",
    "OPICPart",
    "OPICSettings",
    "PageSelector",
    "PartView",
    "RandomSelection",
    "StateStore",
    "UnknownPage",
    "fixed_window",
    "suspect_xml",
    "variable_window",
]
