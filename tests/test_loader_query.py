"""XPath queries, C14N diffs and the read-side CLI commands over a built warehouse."""

from __future__ import annotations

import json

import pytest

from loader import Loader, Warehouse, diff_versions, query_documents, run_query
from loader.errors import QueryError, QueryTimeout
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata, xyleme

ATOM = "http://www.w3.org/2005/Atom"
DOCUMENTS = {
    "http://shop.test/a.xml": b'<shop><item price="3">pen</item><item price="9">ink</item></shop>',
    "http://shop.test/b.xml": b'<shop><item price="5">pad</item></shop>',
    "http://news.test/feed.xml": (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>News</title></feed>'
    ),
}


@pytest.fixture
def repo(tmp_path):
    """A repository folder with three documents, one of them in two versions."""
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    for url, body in DOCUMENTS.items():
        loader.load(md.id_for(url), url, body, {}, 100.0)
    second = b'<shop>\n  <item price="5" >pad</item>\n  <item price="1">clip</item>\n</shop>'
    loader.load(md.id_for("http://shop.test/b.xml"), "http://shop.test/b.xml", second, {}, 200.0)
    return tmp_path


def test_query_over_latest_versions(repo):
    warehouse = Warehouse(repo / "documents")
    matches = list(query_documents(warehouse, "//item/text()"))
    assert [(m.url, m.value) for m in matches] == [
        ("http://shop.test/a.xml", "pen"),
        ("http://shop.test/a.xml", "ink"),
        ("http://shop.test/b.xml", "pad"),
        ("http://shop.test/b.xml", "clip"),
    ]


def test_query_with_prefix_limit_and_namespaces(repo):
    warehouse = Warehouse(repo / "documents")
    assert [
        m.value
        for m in query_documents(warehouse, "//item/@price", url_prefix="http://shop.test/b")
    ] == ["5", "1"]
    assert len(list(query_documents(warehouse, "//item", limit=2))) == 2
    [title] = query_documents(warehouse, "//a:title", {"a": ATOM})
    assert title.value == f'<title xmlns="{ATOM}">News</title>'


def test_query_numbers_per_document(repo):
    warehouse = Warehouse(repo / "documents")
    values = [m.value for m in query_documents(warehouse, "count(//item)")]
    assert values == ["2", "2", "0"]


def test_bad_xpath_is_a_query_error(repo):
    with pytest.raises(QueryError, match="invalid XPath"):
        run_query(repo / "documents", "//item[")
    with pytest.raises(QueryError, match="cannot evaluate"):
        run_query(repo / "documents", "//x:item")


def test_runaway_query_is_stopped_at_its_time_limit(tmp_path):
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    body = b"<r>" + b"<e/>" * 3000 + b"</r>"
    loader.load(md.id_for("http://big.test/r.xml"), "http://big.test/r.xml", body, {}, 0.0)
    cubic = "count(//e[count(following::e[count(preceding::e) > 0]) > 0])"
    with pytest.raises(QueryTimeout):
        run_query(tmp_path / "documents", cubic, time_limit=0.5)


def test_c14n_diff_ignores_attribute_order_and_whitespace(repo):
    warehouse = Warehouse(repo / "documents")
    url_id = warehouse.document_id("http://shop.test/b.xml")
    lines = diff_versions(warehouse, url_id, None, None)
    assert lines[0].startswith("--- version 1")
    assert [line for line in lines if line[:1] in "+-" and line[:3] not in ("---", "+++")] == [
        '+  <item price="1">clip</item>'
    ]
    assert diff_versions(warehouse, url_id, 2, 2) == []


def test_cli_query_json(repo):
    done = xyleme(repo, "query", "//item[@price > 4]/text()", "--json")
    assert done.returncode == 0, done.stderr
    assert [m["value"] for m in json.loads(done.stdout)] == ["ink", "pad"]


def test_cli_query_with_namespace(repo):
    done = xyleme(
        repo, "query", "string(//a:title)", "--ns", f"a={ATOM}", "--url-prefix", "http://news"
    )
    assert done.stdout == "http://news.test/feed.xml\tNews\n"


def test_cli_doc_and_versions(repo):
    assert xyleme(repo, "doc", "http://shop.test/b.xml", "--version", "1").stdout == (
        DOCUMENTS["http://shop.test/b.xml"].decode()
    )
    listing = xyleme(repo, "doc", "http://shop.test/b.xml", "--versions").stdout.splitlines()
    assert [line.split("\t")[0] for line in listing] == ["1", "2"]


def test_cli_diff_and_changes(repo):
    diff = xyleme(repo, "diff", "http://shop.test/b.xml", "--from", "1", "--to", "2")
    assert '+  <item price="1">clip</item>' in diff.stdout.splitlines()
    changes = xyleme(repo, "changes", "--since", "150").stdout.splitlines()
    assert changes == ["1970-01-01T00:03:20+00:00\t2\thttp://shop.test/b.xml"]
    iso = xyleme(repo, "changes", "--since", "1970-01-01T00:00:00", "--json").stdout.splitlines()
    assert len(iso) == 4


def test_cli_errors_are_messages_not_tracebacks(repo):
    missing = xyleme(repo, "doc", "http://nowhere.test/x.xml")
    assert missing.returncode != 0
    assert "no stored document for http://nowhere.test/x.xml" in missing.stderr
    assert "Traceback" not in missing.stderr
    old = xyleme(repo, "doc", "http://shop.test/a.xml", "--version", "5")
    assert "has no version 5" in old.stderr
    bad = xyleme(repo, "query", "//item[", "--ns", "oops")
    assert "not of the form prefix=uri" in bad.stderr
