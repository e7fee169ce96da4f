"""Fixtures every test module may ask for by name, without importing them."""

from pathlib import Path

import pytest

from tests.postgres_cluster import postgres_cluster, postgres_url

__all__ = ["postgres_cluster", "postgres_url", "store_url"]


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's metadata store lives, once per engine: an SQLite file in the test's
    folder, then a fresh database of the session's throwaway PostgreSQL cluster."""
    if request.param == "sqlite":
        return str(tmp_path / "metadata.db")
    return request.getfixturevalue("postgres_url")
