"""metadata.glance: the sqlite3-only reader of `xyleme status` refuses what the manager
refuses, in the same words, and reads the same figures."""

from __future__ import annotations

import sqlite3

import pytest

from metadata import FetchResult, Glance, Metadata, MetadataError, PageType, schema


def _refusal(opener, path) -> str:
    with pytest.raises(MetadataError) as error:
        opener(path).close()
    return f"{type(error.value).__name__}: {error.value}"


def _garbage(path):
    path.write_bytes(b"this is not an SQLite database at all, " * 100)


def _foreign(path):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE other(x)")
    conn.commit()
    conn.close()


def _empty(path):
    path.touch()


def _newer(path):
    Metadata.create(path).close()
    conn = sqlite3.connect(path)
    newer = str(schema.latest_version() + 1)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (newer,))
    conn.commit()
    conn.close()


def _missing(path):
    pass


@pytest.mark.parametrize("make", [_garbage, _foreign, _empty, _newer, _missing])
def test_it_refuses_what_the_manager_refuses_in_the_same_words(tmp_path, make):
    path = tmp_path / "metadata.db"
    make(path)
    manager = _refusal(lambda p: Metadata.open(p, readonly=True), path)
    assert _refusal(Glance.open, path) == manager


def test_it_reads_the_figures_the_manager_reads(tmp_path):
    path = tmp_path / "metadata.db"
    with Metadata.create(path) as md:
        home, _ = md.ids_for(["http://a.test/", "http://a.test/d.xml"])
        md.record_fetches([FetchResult(home, 100.0, PageType.HTML, status=200, md5="1" * 32)])
        md.reject("http://b.test/", "out of scope", None)
        md.put_state("seeds", b"[]")
    with Metadata.open(path, readonly=True) as md, Glance.open(path) as glance:
        assert glance.count_by_type() == md.count_by_type()
        assert glance.count_by_type()[PageType.HTML] == 1
        assert glance.latest_time() == md.latest_time()
        assert glance.get_state("seeds") == b"[]" and glance.get_state("nothing") is None
