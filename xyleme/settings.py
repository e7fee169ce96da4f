"""The daemon's own settings: simulated time, crawl bandwidth, paths and the periodic jobs.

Each component keeps its settings in its own package (``metadata.MetadataSettings``, …);
these are the ones that belong to nobody else. :mod:`xyleme.config` composes them all into
``xyleme.toml``. They follow every package's settings convention (``conventions``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS
from refresh import Bandwidth, DiscoveryShare, TimeUnitSeconds
from xyleme.crawler import ScopeRules

Folder = Annotated[str, Field(min_length=1, max_length=4096)]


@dataclass(frozen=True, slots=True, config=SETTINGS)
class ClockSettings:
    """Simulated time (ARCHITECTURE "Time"): the unit the policies count in and its pace."""

    time_unit: TimeUnitSeconds = 86_400.0
    """simulated seconds in one time unit (refresh scan period; G is per unit)"""
    speed: Annotated[float, Field(gt=0.0, le=1e8)] = 1.0
    """simulated seconds per real second (1 = real time; the demo uses 86400)"""


@dataclass(frozen=True, slots=True, config=SETTINGS)
class BandwidthSettings:
    """The crawl bandwidth of the refresh policy (paper §6): G pages per unit, θ for discovery."""

    G: Bandwidth = 10_000.0
    """pages read per time unit, refreshes and discovery together"""
    theta: DiscoveryShare = 0.1
    """share of G given to discovery of unread pages (θ, §6.4)"""


@dataclass(frozen=True, slots=True, config=SETTINGS)
class PathSettings:
    """Where the repository keeps its parts, relative to the repository folder."""

    documents: Folder = "documents"
    """the XML warehouse (loader)"""
    ranking: Folder = "ranking"
    """matrix slices and rank vectors (ranking)"""
    spool: Folder = "spool"
    """large bodies on their way to the loader (crawler); emptied at start"""


@dataclass(frozen=True, slots=True, config=SETTINGS)
class DaemonSettings:
    """How ``xyleme run`` schedules its periodic jobs and answers the operator."""

    rank_every: Annotated[float, Field(gt=0.0, le=10_000.0)] = 7.0
    """time units between two ranking recomputations"""
    checkpoint_seconds: Annotated[float, Field(ge=0.1, le=86_400.0)] = 30.0
    """real seconds between two checkpoints of in-memory state (clock, queues, OPIC)"""
    command_poll: Annotated[float, Field(ge=0.01, le=3600.0)] = 0.05
    """real seconds between two looks at the command table (status, pause, stop answer
    within it; ~1.4 % of a core on an idle daemon, 0.2 % at 0.5)"""
    scope: ScopeRules = ()
    """deprecated: read as [crawler] scope rules (a bare name: a domain and subdomains)"""
