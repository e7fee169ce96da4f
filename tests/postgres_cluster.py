"""The tests' throwaway PostgreSQL cluster (:mod:`benchmarks.pgcluster` starts it).

Nothing here needs a server someone started by hand: the session's first test that asks for
:func:`postgres_cluster` starts one on 127.0.0.1 and a free port, stopped and removed at the
end of the session. Each test that asks for :func:`postgres_url` gets a database of its own,
dropped afterwards. Without PostgreSQL's binaries the tests that need the cluster fail with
the instruction to install them rather than skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count

import pytest

from benchmarks.pgcluster import ClusterError, PostgresCluster, free_port, start_cluster

__all__ = ["PostgresCluster", "free_port", "fresh_database", "postgres_cluster", "postgres_url"]


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """Start a cluster for the session, and stop and remove it at the end."""
    try:
        cluster = start_cluster()
    except ClusterError as error:
        pytest.fail(str(error))
    try:
        yield cluster
    finally:
        cluster.stop()


_database_numbers = count(1)


@contextmanager
def fresh_database(cluster: PostgresCluster) -> Iterator[str]:
    """A new, empty database of ``cluster`` (its URL), dropped on exit."""
    name = f"xyleme_test_{os.getpid()}_{next(_database_numbers)}"
    cluster.admin(f'CREATE DATABASE "{name}"')
    try:
        yield cluster.url(name)
    finally:
        cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database of the session's cluster for one test, dropped afterwards."""
    with fresh_database(postgres_cluster) as url:
        yield url
