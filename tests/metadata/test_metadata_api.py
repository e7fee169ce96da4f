"""The store's contract (metadata/api.py): the SQLite backend implements every subject's
Protocol with its exact signatures, and its errors are the store's own, disk full included."""

from __future__ import annotations

import inspect
import sqlite3

import pytest

import metadata
from metadata import (
    Metadata,
    RepositoryCorrupt,
    RevisitIndex,
    Stored,
    StoreError,
    StoreFull,
    Validity,
    VersionStore,
    api,
)

SUBJECTS = [
    api.CoreAPI,
    api.PageIdsAPI,
    api.FetchesAPI,
    api.LinksAPI,
    api.StatusAPI,
    api.StateAPI,
    api.RanksAPI,
    api.ClaimsAPI,
]


def protocol_methods(protocol: type) -> dict[str, inspect.Signature]:
    """The methods a Protocol declares (its own and its bases'), by name."""
    methods = {}
    for klass in reversed(protocol.__mro__):
        if klass is object or not getattr(klass, "_is_protocol", False):
            continue
        for name, value in vars(klass).items():
            if callable(value) and (not name.startswith("_") or name in ("__enter__", "__exit__")):
                methods[name] = inspect.signature(value)
    return methods


def assert_implements(implementation: type, protocol: type) -> None:
    for name, wanted in protocol_methods(protocol).items():
        found = inspect.signature(getattr(implementation, name))
        assert [(p.name, p.kind, p.default) for p in found.parameters.values()] == [
            (p.name, p.kind, p.default) for p in wanted.parameters.values()
        ], name


@pytest.mark.parametrize("protocol", SUBJECTS, ids=lambda p: p.__name__)
def test_metadata_implements_each_subject_with_its_signatures(protocol):
    assert_implements(Metadata, protocol)


def test_the_version_store_and_the_revisit_index_implement_theirs():
    assert_implements(VersionStore, api.VersionsAPI)
    assert_implements(RevisitIndex, api.RevisitsAPI)


def test_metadata_is_the_whole_api(tmp_path, store_url):
    with Metadata.create(store_url) as md:
        assert isinstance(md, api.MetadataAPI)
    assert isinstance(VersionStore(tmp_path / "documents"), api.VersionsAPI)
    assert isinstance(RevisitIndex(tmp_path / "archive"), api.RevisitsAPI)


def test_the_package_exports_its_clock_and_its_contract():
    for name in ("Clock", "SystemClock", "ManualClock", "MetadataAPI", "VersionsAPI"):
        assert name in metadata.__all__


def test_a_full_disk_is_store_full(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        md.ids_for(["http://a.test/"])
        pages = md._one("PRAGMA page_count")[0]
        md._one(f"PRAGMA max_page_count = {pages}")  # no room left: SQLITE_FULL
        with pytest.raises(StoreFull, match="disk full"):
            md.put_state("big", b"x" * 1_000_000)
        assert md.url_of(1) == "http://a.test/"  # nothing lost, still readable


def test_a_damaged_database_is_a_store_error_not_the_engines(store_url):
    import psycopg

    with Metadata.create(store_url) as md:
        md._conn.execute("DROP TABLE state")  # what a damaged database would look like
        with pytest.raises(StoreError) as caught:
            md.get_state("clock")
        assert not isinstance(caught.value, sqlite3.Error | psycopg.Error)
        assert isinstance(caught.value.__cause__, sqlite3.Error | psycopg.Error)


def test_a_full_disk_under_the_version_store_is_store_full(tmp_path):
    versions = VersionStore(tmp_path / "documents", compress=False)
    versions.store(1, "http://a.test/", b"<a/>", "m1", 1.0, Validity())
    with versions._database() as conn:
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(StoreFull):
        versions.store(
            1, "http://a.test/", b"<a>" + b"x" * 200_000 + b"</a>", "m2", 2.0, Validity()
        )
    assert versions.read(1) == b"<a/>"
    assert isinstance(StoreFull("p", "w"), StoreError)
    assert not issubclass(RepositoryCorrupt, StoreFull)


def test_the_revisit_index_keeps_what_it_committed(tmp_path):
    index = RevisitIndex(tmp_path / "archive")
    stored = Stored("md5", "<urn:uuid:1>", "2026-01-01T00:00:00Z", "sha1:X")
    index.put("http://a.test/", stored)
    assert index.get("http://a.test/") == stored  # pending, seen at once
    index.close()  # commits
    assert RevisitIndex(tmp_path / "archive").get("http://a.test/") == stored


@pytest.mark.parametrize(
    "module",
    [
        *("metadata.api", "metadata.errors", "metadata.store", "conventions.hosts"),
        *("metadata.dialect", "metadata.engines"),
    ],
)
def test_the_docstring_examples_run(module):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried > 0 and failures == 0


def test_the_light_glance_implements_the_named_state_the_command_table_needs():
    from metadata import Glance

    assert_implements(Glance, api.NamedStateAPI)
