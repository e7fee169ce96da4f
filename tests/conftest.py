"""Fixtures every test module may ask for by name, without importing them.

``md`` is a fresh metadata store on a manual clock; ``site`` a virtual-host web on
127.0.0.1 (tests/crawler_site.py); ``repo`` a repository made by ``xyleme init``
(tests/daemon_fixtures.py); ``postgres_cluster``/``postgres_url`` a throwaway PostgreSQL
(tests/postgres_cluster.py); ``store_url`` where a test's store lives, once per engine. A
module that needs another shape defines its own fixture of the same name, which pytest
prefers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from metadata import ManualClock, Metadata
from tests.crawler_site import Site
from tests.daemon_fixtures import make_repository
from tests.postgres_cluster import postgres_cluster, postgres_url

__all__ = ["md", "postgres_cluster", "postgres_url", "repo", "site", "store_url"]


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    web = Site()
    await web.start()
    yield web
    await web.stop()


@pytest.fixture
def md(tmp_path: Path) -> Iterator[Metadata]:
    with Metadata.create(tmp_path / "metadata.db", clock=ManualClock(1_000_000.0)) as metadata:
        yield metadata


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repository(tmp_path / "repo")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's metadata store lives, once per engine: an SQLite file in the test's
    folder, then a fresh database of the session's throwaway PostgreSQL cluster."""
    if request.param == "sqlite":
        return str(tmp_path / "metadata.db")
    return request.getfixturevalue("postgres_url")
