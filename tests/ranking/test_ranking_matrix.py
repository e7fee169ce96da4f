"""The rankings' link matrix (§5) follows its rule on a store holding every kind of page."""

from __future__ import annotations

import numpy as np
import pytest

from metadata import FetchResult, LoadStatus, Metadata, PageType
from metadata.link_matrix import MAX_REDIRECT_HOPS
from tests.ranking_graphs import dense_inverse, dense_pagerank
from xyleme.jobs import rank_repository

BASE = "http://site.test/"
AT = 1_700_000_000.0
# name -> (type, children, redirect target); dependencies are set apart below
PAGES = {
    "home.html": (
        PageType.HTML,
        [
            "home.html",
            "a.html",
            "a.html",
            "moved",
            "doc.xml",
            "gone.html",
            "dead.html",
            "img.png",
            "logo.gif",
            "site.dtd",
            "schema.xsd",
            "chain1",
            "loop1",
            "unread.html",
            "style.xsl",
            "to-self",
        ],
        None,
    ),
    "a.html": (PageType.HTML, ["home.html", "moved", "a.html"], None),
    "doc.xml": (PageType.XML, ["a.html", "gone.html", "unread.html"], None),
    "moved": (PageType.UNKNOWN, ["a.html"], "a.html"),  # 301 to a.html
    "chain1": (PageType.UNKNOWN, ["chain2"], "chain2"),  # 301 → 301 → doc.xml
    "chain2": (PageType.UNKNOWN, ["doc.xml"], "doc.xml"),
    "loop1": (PageType.UNKNOWN, ["loop2"], "loop2"),  # a redirect loop: leads nowhere
    "loop2": (PageType.UNKNOWN, ["loop1"], "loop1"),
    "to-self": (PageType.UNKNOWN, ["home.html"], "home.html"),  # a self-link by redirect
    "gone.html": (PageType.ERROR, [], None),
    "dead.html": (PageType.DEAD, [], None),
    "img.png": (PageType.RESOURCE, [], None),  # read, not a document: a resource
    "logo.gif": (PageType.ERROR, [], None),  # refused by its Content-Type
    "site.dtd": (PageType.DTD, [], None),
    "schema.xsd": (PageType.XML, ["doc.xml"], None),  # read as XML, but a dependency
    "style.xsl": (PageType.UNKNOWN, [], None),  # not read yet, but awaited as a dependency
    "unread.html": (PageType.UNKNOWN, [], None),
}
# The intended graph: pages that are or may be documents, and their distinct links.
INTENDED_PAGES = ["home.html", "a.html", "doc.xml", "unread.html"]
INTENDED_LINKS = {
    ("home.html", "home.html"),
    ("home.html", "a.html"),
    ("home.html", "doc.xml"),
    ("home.html", "unread.html"),
    ("a.html", "home.html"),
    ("a.html", "a.html"),
    ("doc.xml", "a.html"),
    ("doc.xml", "unread.html"),
}


@pytest.fixture
def store(tmp_path):
    md = Metadata.create(tmp_path / "metadata.db")
    ids = dict(zip(PAGES, md.ids_for([BASE + name for name in PAGES]), strict=True))
    for name, (page_type, children, target) in PAGES.items():
        failed = page_type in (PageType.ERROR, PageType.DEAD)
        md.record_fetch(
            FetchResult(
                ids[name],
                AT,
                page_type,
                404 if failed else 301 if target else 200,
                reason="HTTP 404" if failed else None,
                md5=None if failed or target else "0" * 32,
                children=None if failed else [ids[child] for child in children],
                redirect_to=ids[target] if target else None,
            )
        )
    doc = ids["doc.xml"]
    md.set_children(
        doc,
        [ids[child] for child in PAGES["doc.xml"][1]],
        dependencies=[ids["site.dtd"], ids["schema.xsd"]],
    )
    md.set_status(ids["home.html"], LoadStatus.WAITING_DTD, waiting_for=[ids["style.xsl"]])
    yield md, ids
    md.close()


def names_of(matrix, ids):
    name = {url_id: page for page, url_id in ids.items()}
    return [name[int(url_id)] for url_id in matrix.ids]


def matrix_links(md, ids):
    with md.link_matrix(chunk_edges=3) as matrix:
        pages = names_of(matrix, ids)
        chunks = list(matrix.edges())
        assert all(len(src) <= 3 for src, _ in chunks)
        links = [(pages[s], pages[d]) for src, dst in chunks for s, d in zip(src, dst, strict=True)]
    return pages, links


def test_the_matrix_holds_read_documents_and_unread_urls_only(store):
    md, ids = store
    pages, _ = matrix_links(md, ids)
    assert sorted(pages) == sorted(INTENDED_PAGES)
    with md.link_matrix() as matrix:
        assert list(matrix.ids) == sorted(ids[name] for name in INTENDED_PAGES)
        assert matrix.in_matrix.sum() == len(INTENDED_PAGES) and matrix.all_ids.size == len(PAGES)


def test_links_follow_redirects_drop_left_out_pages_and_count_once(store):
    md, ids = store
    _, links = matrix_links(md, ids)
    assert len(links) == len(set(links))  # a → a.html twice (once by redirect): one link
    assert set(links) == INTENDED_LINKS


def test_out_degree_is_counted_in_the_matrix(store):
    md, ids = store
    _, links = matrix_links(md, ids)
    out = {page: sum(src == page for src, _ in links) for page in INTENDED_PAGES}
    assert out == {"home.html": 4, "a.html": 2, "doc.xml": 2, "unread.html": 0}
    assert md.children(ids["home.html"]).size == 15  # stored: every distinct child


def test_a_page_leaves_the_matrix_when_it_becomes_an_error_and_returns_when_read(store):
    md, ids = store
    md.record_fetch(FetchResult(ids["a.html"], AT + 1, PageType.ERROR, 500, reason="HTTP 500"))
    pages, links = matrix_links(md, ids)
    assert "a.html" not in pages and all("a.html" not in link for link in links)
    md.record_fetch(FetchResult(ids["a.html"], AT + 2, PageType.HTML, 200, md5="1" * 32))
    pages, links = matrix_links(md, ids)
    assert "a.html" in pages and ("a.html", "home.html") in links


def test_a_redirect_chain_too_long_leads_nowhere(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as md:
        hops = MAX_REDIRECT_HOPS + 2
        names = ["start", *(f"r{k}" for k in range(hops)), "end"]
        ids = md.ids_for([BASE + name for name in names])
        records = [FetchResult(ids[0], AT, PageType.HTML, 200, md5="0" * 32, children=[ids[1]])]
        records += [
            FetchResult(
                ids[k], AT, PageType.UNKNOWN, 301, children=[ids[k + 1]], redirect_to=ids[k + 1]
            )
            for k in range(1, hops + 1)
        ]
        records.append(FetchResult(ids[-1], AT, PageType.HTML, 200, md5="0" * 32, children=[]))
        md.record_fetches(records)
        with md.link_matrix() as matrix:
            assert list(matrix.ids) == [ids[0], ids[-1]]
            assert [len(src) for src, _ in matrix.edges()] == []


def test_the_rankings_equal_dense_solves_on_the_intended_graph(store, tmp_path):
    md, ids = store
    result = rank_repository(md, tmp_path / "ranking")
    order = sorted(ids[name] for name in INTENDED_PAGES)
    position = {url_id: k for k, url_id in enumerate(order)}
    src = np.array([position[ids[a]] for a, _ in sorted(INTENDED_LINKS)])
    dst = np.array([position[ids[b]] for _, b in sorted(INTENDED_LINKS)])
    n = len(order)
    is_xml = np.array(
        [PAGES[name][0] is PageType.XML for name in sorted(INTENDED_PAGES, key=ids.get)]
    )
    assert (result.pages, result.xml_pages, result.links) == (n, 1, len(INTENDED_LINKS))
    for column, exact in (
        ("importance", dense_pagerank(src, dst, n)),
        ("interest", dense_inverse(src, dst, n, is_xml / is_xml.sum())[0]),
    ):
        scored, values = md.scores(column)
        assert list(scored) == order  # the pages left out have no score
        assert np.abs(values - exact).sum() <= 1e-8


def test_a_page_that_leaves_the_matrix_loses_its_score(store, tmp_path):
    md, ids = store
    rank_repository(md, tmp_path / "ranking")
    assert md.page(ids["unread.html"]).importance is not None
    md.record_fetch(FetchResult(ids["unread.html"], AT + 1, PageType.DEAD, 404, reason="gone"))
    rank_repository(md, tmp_path / "ranking")
    record = md.page(ids["unread.html"])
    assert record.importance is None and record.interest is None


def test_unread_urls_outside_the_crawl_scope_stay_out(store, tmp_path):
    md, ids = store
    home = ids["home.html"]
    [outside] = md.ids_for(["http://elsewhere.test/page.html"])
    md.set_children(home, [*md.children(home).tolist(), outside])
    with md.link_matrix() as matrix:
        assert outside in matrix.ids  # without a scope: a URL that may be a document
    with md.link_matrix(in_scope=lambda url: url.startswith(BASE)) as matrix:
        assert list(matrix.ids) == sorted(ids[name] for name in INTENDED_PAGES)
    result = rank_repository(md, tmp_path / "ranking", in_scope=lambda url: url.startswith(BASE))
    assert result.pages == len(INTENDED_PAGES) and md.page(outside).importance is None
