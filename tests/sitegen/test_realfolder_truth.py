"""The truth of a folder served by ``http.server`` (xyleme.sitegen.folder), from the files.

The truth is what bench_folder.py and tests/sitegen/test_realfolder_crawl.py measure the daemon
against, so its rules are checked here against the real server's answers and by hand.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from xyleme.sitegen.folder import StaticServer, folder_truth, normal, page_links
from xyleme.sitegen.realfolder import ODD_NAMES, write_folder
from xyleme.sitegen.static import StaticProcess

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("folder")
    write_folder(root)
    return root


@pytest.fixture(scope="module")
def truth(folder):
    server = StaticServer(folder, ORIGIN)
    return folder_truth(server, [f"{ORIGIN}/index.html"], [f"{ORIGIN}/"])


def test_normal_urls_are_one_spelling_of_one_file():
    assert normal("HTTP://H.test/a/./b/../c%2b+ d.html#x") == "http://h.test/a/c++%20d.html"
    assert normal("http://h.test/%C3%BC.html") == normal("http://h.test/ü.html")
    assert normal("http://h.test") == "http://h.test/"
    # rustdoc's search links: the query's spellings are one, its delimiters' escapes kept
    assert normal("http://h/v.html?search=option<T>%2C+a->b&c") == normal(
        "http://h/v.html?search=option%3CT%3E,+a-%3Eb&c"
    )
    assert normal("http://h/?a=%26&b=%2b") != normal("http://h/?a=&&b=+")


def test_the_model_answers_as_http_server_does(folder):
    """Every answer the model gives (status, type, redirect) is the real server's."""
    paths = ["", "part0/listing", "part0/listing/", "part0/book/", "part0/api/old.html",
             "part0/listing/notes.txt", "part0/listing/page.html.gz", "part0/listing/index.db",
             "part0/book/img/figure.svg", "part0/listing/mime/alias.xml", "nowhere.html",
             "part0/book/ch00.html/", *(f"part0/listing/{n}" for n in ODD_NAMES)]  # fmt: skip
    with StaticProcess(folder) as served:
        model = StaticServer(folder, served.origin)
        opener = urllib.request.build_opener(_NoRedirect)
        for path in paths:
            url = model.url_of(path)
            expected = model.answer(url)
            try:
                with opener.open(url, timeout=30) as response:
                    status, headers = response.status, response.headers
            except urllib.error.HTTPError as error:
                status, headers = error.code, error.headers
            assert status == expected.status, path
            if status == 200:
                assert headers["Content-Type"] == expected.content_type, path
            if status == 301:
                assert normal(expected.location) == normal(
                    urllib.parse.urljoin(url, headers["Location"])
                )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_the_walk_reads_documents_only(truth):
    documents = {url.removeprefix(ORIGIN) for url in truth.documents}
    assert "/part0/listing/" in documents  # a folder without an index: its listing
    assert "/part0/listing" not in documents  # the 301 counts for its target
    model = StaticServer(Path("."), ORIGIN)
    odd = {model.url_of(f"part0/listing/{name}").removeprefix(ORIGIN) for name in ODD_NAMES}
    assert "/part0/listing/q%3Fx.html" in odd
    assert odd <= documents
    assert "/part0/listing/index.db" in documents  # untyped, sniffed as HTML (<div)
    assert "/part0/book/img/figure.svg" in documents
    assert "/part0/api/hidden.html" not in documents  # named only by JavaScript
    assert "/private/secret.html" not in documents  # robots.txt
    assert truth.scripted > 0
    for path, why in {
        "/part0/listing/bad.xml": "not well-formed",
        "/part0/listing/empty.xml": "not well-formed",
        "/part0/listing/changelog.gz": "resource application/gzip",
        "/part0/listing/notes.txt": "resource text/plain",
    }.items():
        assert path not in documents
        assert truth.not_documents[ORIGIN + path].startswith(why), path


def test_the_links_follow_the_rules(truth):
    at = truth.position()
    edges = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}

    def edge(source: str, target: str) -> bool:
        return (normal(ORIGIN + source), normal(ORIGIN + target)) in edges

    assert edge("/part0/book/ch01.html", "/part0/book/toc.html")  # iframe
    assert edge("/part0/book/ch01.html", "/part0/book/ch02.html")  # rel=next anchor
    assert edge("/part0/book/ch01.html", "/part0/book/img/figure.svg")  # img of SVG
    assert edge("/part0/book/img/figure.svg", "/part0/book/ch00.html")  # xlink:href
    assert edge("/part0/manual/s1.html", "/part0/manual/s2.html")  # <link rel=next>
    assert edge("/part0/manual/s1.html", "/part0/listing/")  # a folder without its slash
    assert edge("/part0/manual/s1.html", "/part0/listing/%C3%BC.html")  # ü in ISO-8859-1
    assert edge("/part0/api/old.html", "/part0/api/struct.Item0.html")  # meta refresh
    assert not edge("/part0/book/ch01.html", "/part0/book/ch01.html#top")
    # XHTML served as XML (.xhtml) is read by the HTML rules: link rel, a link to itself
    assert edge("/part0/xhtml/s1.xhtml", "/part0/xhtml/s2.xhtml")  # <link rel=next />
    assert edge("/part0/xhtml/s1.xhtml", "/part0/xhtml/s1.xhtml")  # counts, once
    assert truth.is_xml[at[normal(ORIGIN + "/part0/xhtml/s1.xhtml")]]
    assert len(at) == len(truth.documents)


def test_a_truth_within_a_set_keeps_the_links_between_its_pages(truth):
    half = set(truth.documents[: len(truth.documents) // 2])
    part = truth.within(half)
    assert set(part.documents) == half
    kept = {(part.documents[s], part.documents[d]) for s, d in part.edges}
    full = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}
    assert kept == {(s, d) for s, d in full if s in half and d in half}


def test_a_backslash_before_the_query_is_a_slash(tmp_path):
    """SQLite's pages link ``href="\\"``: the site's root, as browsers (and the crawler) read
    it by the URL Standard, not ``/sqlite3/%5C`` as RFC 3986's resolution would have it."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "p.html").write_text('<a href="\\">home</a><a href="a\\b.html?q=\\">x</a>')
    server = StaticServer(tmp_path, ORIGIN)
    answer = server.answer(f"{ORIGIN}/s/p.html")
    found, _, _ = page_links(answer, f"{ORIGIN}/s/p.html")
    assert found == [f"{ORIGIN}/", f"{ORIGIN}/s/a/b.html?q=%5C"]
