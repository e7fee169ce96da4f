"""Fixtures every test module may ask for by name, without importing them."""

from tests.postgres_cluster import postgres_cluster, postgres_url

__all__ = ["postgres_cluster", "postgres_url"]
