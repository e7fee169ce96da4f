"""The daemon crawls a folder served by ``python -m http.server`` as the files say it should.

The folder (xyleme.sitegen.realfolder) has the shapes the trial on real documentation trees
met (docs/realsite.md, "Real folders"): mdBook, rustdoc, DocBook HTML, listings, odd file
names, ``.gz`` files, an untyped body, malformed and empty XML, a symlink, robots.txt. The
truth is computed from the files (xyleme.sitegen.folder), the crawl is the daemon's.
"""

from __future__ import annotations

import asyncio

import pytest

from xyleme.sitegen import truth_overlaps
from xyleme.sitegen.crawl import crawl_seeds
from xyleme.sitegen.folder import StaticServer, folder_truth, normal
from xyleme.sitegen.realfolder import write_folder
from xyleme.sitegen.static import StaticProcess


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """Two copies of every section, crawled once from the folder's index."""
    root = tmp_path_factory.mktemp("folder")
    write_folder(root, copies=2)
    with StaticProcess(root) as served:
        server = StaticServer(root, served.origin)
        seed, scope = f"{served.origin}/index.html", f"{served.origin}/"
        truth = folder_truth(server, [seed], [scope])
        repository = tmp_path_factory.mktemp("repo") / "repo"
        outcome = asyncio.run(crawl_seeds([seed], [scope], repository))
    read = {normal(url): is_xml for url, is_xml in outcome.read.items()}
    return served.origin, truth, outcome, read


def test_every_reachable_document_is_read_and_nothing_else(crawled):
    _, truth, _, read = crawled
    missing = [url for url in truth.documents if url not in read]
    assert not missing, f"{len(missing)} of {len(truth.documents)} never read: {missing[:5]}"
    assert set(read) == set(truth.documents)
    assert [read[url] for url in truth.documents] == truth.is_xml  # typed as the files are


def test_odd_file_names_are_one_page_each(crawled):
    """A listing's ``c%2B%2B.html`` and a hand's ``c++.html``, ``a b.html`` and
    ``a%20b.html``, a raw ``ü`` in an ISO-8859-1 page and ``%C3%BC``: one URL each."""
    _, _, outcome, _ = crawled
    listed = [url for url in outcome.read if "/part0/listing/" in url and url.endswith(".html")]
    assert len(listed) == len({normal(url) for url in listed}) == 6


def test_the_links_are_the_true_links(crawled):
    _, truth, outcome, _ = crawled
    true = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}
    recorded = {(normal(s), normal(d)) for s, d in outcome.matrix_edges}
    assert recorded == true


def test_what_is_no_document_is_not_one(crawled):
    origin, _, outcome, read = crawled
    types = {normal(url): kind for url, kind in outcome.types.items()}
    listing = f"{origin}/part0/listing/"
    assert types[f"{listing}bad.xml"] == types[f"{listing}empty.xml"] == "ERROR"
    assert f"{listing}changelog.gz" not in read and f"{listing}notes.txt" not in read
    assert read[f"{listing}index.db"] is False  # untyped, sniffed as HTML
    assert f"{origin}/part0/api/hidden.html" not in types  # named only by JavaScript
    assert f"{origin}/private/secret.html" not in read  # robots.txt


def test_the_rankings_agree_with_the_independent_computation(crawled):
    _, truth, outcome, _ = crawled
    overlaps = truth_overlaps(outcome, truth.documents, truth.edges, truth.is_xml, normal)
    assert overlaps == {"importance": 20, "interest": 20}
