"""The metadata manager's settings: a typed dataclass of documented defaults.

Each field's ``doc`` metadata is its one-line documentation; ``xyleme init`` writes it next to
the default in the repository's ``xyleme.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


def _setting(default: Any, doc: str) -> Any:
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True, slots=True)
class MetadataSettings:
    """How the metadata manager stores its data; every field has a documented default."""

    observation_limit: int = _setting(
        64, "accesses kept per page for the change-rate estimators (§6.1); oldest dropped"
    )
    rejected_limit: int = _setting(10_000, "rows kept in the rejected-links table; oldest dropped")
    busy_timeout: float = _setting(10.0, "seconds a writer waits for another process's write lock")
    synchronous: str = _setting(
        "NORMAL",
        "SQLite synchronous: NORMAL survives a killed process, FULL also a power cut",
    )
    cache_mb: int = _setting(64, "SQLite page cache per connection, in MiB")

    def __post_init__(self) -> None:
        if self.observation_limit < 2:
            raise ValueError("observation_limit must be at least 2 (one interval)")
        if self.rejected_limit < 1:
            raise ValueError("rejected_limit must be at least 1")
        if self.busy_timeout < 0:
            raise ValueError("busy_timeout must not be negative")
        if self.synchronous.upper() not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS_MODES)}")
        if self.cache_mb < 1:
            raise ValueError("cache_mb must be at least 1")
