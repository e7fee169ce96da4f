"""The metadata manager's settings: a typed dataclass of documented defaults."""

from __future__ import annotations

from dataclasses import dataclass

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")


@dataclass(frozen=True, slots=True)
class MetadataSettings:
    """How the metadata manager stores its data; every field has a documented default."""

    observation_limit: int = 64
    """Accesses kept per page for the change-rate estimators (§6.1); older ones are dropped."""

    rejected_limit: int = 10_000
    """Rows kept in the rejected-links table; the oldest go first."""

    busy_timeout: float = 10.0
    """Seconds a writer waits for another process's write lock before failing."""

    synchronous: str = "NORMAL"
    """SQLite ``synchronous`` in WAL mode: NORMAL survives a killed process (committed
    transactions are in the WAL); FULL also survives a power cut, at a cost per commit."""

    cache_mb: int = 64
    """SQLite page cache per connection, in MiB."""

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
