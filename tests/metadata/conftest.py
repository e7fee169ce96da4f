"""The metadata tests' store: a fresh one per engine (SQLite, then PostgreSQL) on a manual clock."""

import pytest

from metadata import ManualClock, Metadata


@pytest.fixture
def clock():
    """The store's clock, at 1,000 s."""
    return ManualClock(1_000.0)


@pytest.fixture
def md(store_url, clock):
    """A new store on each engine; a test module may define its own ``md``."""
    with Metadata.create(store_url, clock=clock) as metadata:
        yield metadata
