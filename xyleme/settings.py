"""The daemon's own settings: simulated time, crawl bandwidth, paths and the periodic jobs.

Each component keeps its settings in its own package (``metadata.MetadataSettings``, …);
these are the ones that belong to nobody else. :mod:`xyleme.config` composes them all into
``xyleme.toml``. Every field's ``doc`` metadata is its one-line documentation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xyleme.crawler.scoperules import parse_rule


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class ClockSettings:
    """Simulated time (ARCHITECTURE "Time"): the unit the policies count in and its pace."""

    time_unit: float = _setting(
        86_400.0, "simulated seconds in one time unit (refresh scan period; G is per unit)"
    )
    speed: float = _setting(
        1.0, "simulated seconds per real second (1 = real time; the demo uses 86400)"
    )

    def __post_init__(self) -> None:
        if not self.time_unit > 0:
            raise ValueError("time_unit must be positive")
        if not self.speed > 0:
            raise ValueError("speed must be positive")


@dataclass(frozen=True, slots=True)
class BandwidthSettings:
    """The crawl bandwidth of the refresh policy (paper §6): G pages per unit, θ for discovery."""

    G: float = _setting(10_000.0, "pages read per time unit, refreshes and discovery together")
    theta: float = _setting(0.1, "share of G given to discovery of unread pages (θ, §6.4)")

    def __post_init__(self) -> None:
        if not self.G > 0:
            raise ValueError("G must be positive")
        if not 0.0 <= self.theta < 1.0:
            raise ValueError("theta must lie in [0, 1): refreshes get (1 − θ)·G")


@dataclass(frozen=True, slots=True)
class PathSettings:
    """Where the repository keeps its parts, relative to the repository folder."""

    documents: str = _setting("documents", "the XML warehouse (loader)")
    ranking: str = _setting("ranking", "matrix slices and rank vectors (ranking)")
    spool: str = _setting(
        "spool", "large bodies on their way to the loader (crawler); emptied at start"
    )

    def __post_init__(self) -> None:
        for name in ("documents", "ranking", "spool"):
            if not getattr(self, name):
                raise ValueError(f"{name} must name a folder")


@dataclass(frozen=True, slots=True)
class DaemonSettings:
    """How ``xyleme run`` schedules its periodic jobs and answers the operator."""

    rank_every: float = _setting(7.0, "time units between two ranking recomputations")
    checkpoint_seconds: float = _setting(
        30.0, "real seconds between two checkpoints of in-memory state (clock, queues, OPIC)"
    )
    command_poll: float = _setting(0.5, "real seconds between two looks at the command table")
    scope: tuple[str, ...] = _setting(
        (), "deprecated: read as [crawler] scope rules (a bare name: a domain and subdomains)"
    )

    def __post_init__(self) -> None:
        for name in ("rank_every", "checkpoint_seconds", "command_poll"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        for rule in self.scope:
            parse_rule(rule)  # read as [crawler] scope rules: refused at load if unreadable
