"""XPath queries, C14N diffs and the read-side CLI commands over a built warehouse."""

from __future__ import annotations

import json

import pytest

from loader import (
    Loader,
    QueryError,
    QueryTimeout,
    Warehouse,
    diff_versions,
    query_documents,
    run_query,
)
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


def test_a_query_stopped_at_its_limit_hands_back_what_it_found(tmp_path):
    md = FakeMetadata()
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    small = b"<r><e/><e/></r>"
    big = b"<r>" + b"<e/>" * 3000 + b"</r>"
    for url, body in (("http://a.test/small.xml", small), ("http://b.test/big.xml", big)):
        loader.load(md.id_for(url), url, body, {}, 0.0)
    slow = "count(//e[count(following::e[count(preceding::e) > 0]) > 0])"
    with pytest.raises(QueryTimeout) as stopped:
        run_query(tmp_path / "documents", slow, time_limit=3.0)
    assert [(match.url, match.value) for match in stopped.value.partial] == [
        ("http://a.test/small.xml", "1")
    ]
    done = xyleme(tmp_path, "query", slow, "--json", "--timeout", "3")
    assert done.returncode == 1
    assert [row["url"] for row in json.loads(done.stdout)] == ["http://a.test/small.xml"]
    assert "warning: query stopped after its time limit of 3 s" in done.stderr


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
    assert done.stdout.splitlines()[2].split() == ["http://news.test/feed.xml", "News"]
    csv_rows = xyleme(repo, "query", "string(//a:title)", "--ns", f"a={ATOM}", "--csv").stdout
    assert csv_rows.splitlines()[0] == "url_id,url,version,value"


def test_cli_doc_and_versions(repo):
    assert xyleme(repo, "doc", "http://shop.test/b.xml", "--version", "1").stdout == (
        DOCUMENTS["http://shop.test/b.xml"].decode()
    )
    listing = xyleme(repo, "doc", "http://shop.test/b.xml", "--versions").stdout.splitlines()
    assert [line.split()[0] for line in listing[2:]] == ["1", "2"]
    rows = json.loads(xyleme(repo, "doc", "http://shop.test/b.xml", "--versions", "--json").stdout)
    assert [row["version"] for row in rows] == [1, 2] and "validity" in rows[0]
    limited = xyleme(repo, "doc", "http://shop.test/b.xml", "--versions", "--limit", "1", "--csv")
    assert len(limited.stdout.splitlines()) == 2 and "1 of 2 versions shown" in limited.stderr
    assert xyleme(repo, "doc", "http://shop.test/b.xml", "--json").returncode == 2


def test_cli_diff_and_changes(repo):
    diff = xyleme(repo, "diff", "http://shop.test/b.xml", "--from", "1", "--to", "2")
    assert '+  <item price="1">clip</item>' in diff.stdout.splitlines()
    changes = xyleme(repo, "changes", "--since", "150").stdout.splitlines()
    assert changes[2].split() == ["1970-01-01", "00:03:20Z", "2", "http://shop.test/b.xml"]
    iso = xyleme(repo, "changes", "--since", "1970-01-01T00:00:00", "--json").stdout
    assert len(json.loads(iso)) == 4 and set(json.loads(iso)[0]) == {
        "url_id",
        "url",
        "version",
        "md5",
        "fetched_at",
    }


def test_cli_diff_of_a_single_version_says_so(repo):
    done = xyleme(repo, "diff", "http://shop.test/a.xml")
    assert done.returncode == 0
    assert "has one stored version (version 1" in done.stdout and "no change" not in done.stdout


def test_cli_errors_are_messages_not_tracebacks(repo):
    missing = xyleme(repo, "doc", "http://nowhere.test/x.xml")
    assert missing.returncode != 0
    assert "no stored document for http://nowhere.test/x.xml" in missing.stderr
    assert "Traceback" not in missing.stderr
    old = xyleme(repo, "doc", "http://shop.test/a.xml", "--version", "5")
    assert "has no version 5" in old.stderr
    bad = xyleme(repo, "query", "//item[", "--ns", "oops")
    assert "not of the form prefix=uri" in bad.stderr
