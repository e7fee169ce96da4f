"""The metadata store: Link-Data (children, parents, the exported matrix), Status-Data and named
state, on both engines."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from metadata import (
    MAX_CHILDREN,
    FetchResult,
    LoadStatus,
    PageType,
    UnknownPage,
)
from tests.metadata_fixtures import full_fetch, ids

# ---------------------------------------------------------------- Link-Data


def test_children_replace_atomically_and_are_distinct(md):
    a, b, c = ids(md, "a", "b", "c")
    md.record_fetch(full_fetch(a, 1.0, children=[b, c, b]))
    assert md.children(a).tolist() == [b, c]
    assert md.children(a).dtype == np.int32
    md.record_fetch(full_fetch(a, 2.0, children=[c]))
    assert md.children(a).tolist() == [c]
    md.record_fetch(full_fetch(a, 3.0, status=304, md5=None, children=None))
    assert md.children(a).tolist() == [c]
    assert md.children(b).tolist() == []


def test_children_are_capped_and_the_rest_counted(md):
    (page,) = ids(md, "a")
    md.set_children(page, np.arange(1, MAX_CHILDREN + 11))
    assert md.children(page).size == MAX_CHILDREN
    assert md.extra_children(page) == 10


def test_set_children_with_dependencies(md):
    a, b, dtd = ids(md, "a", "b", "doc.dtd")
    md.set_children(a, [b], dependencies=[dtd])
    assert md.children(a).tolist() == [b]
    assert md.dependencies(a).tolist() == [dtd]
    md.record_fetch(full_fetch(a, 1.0, children=[a]))
    assert md.dependencies(a).tolist() == [dtd]
    with pytest.raises(UnknownPage):
        md.set_children(77, [a])
    with pytest.raises(ValueError, match="URL-Ids"):
        md.set_children(a, [0])


def test_parents(md):
    a, b, c = ids(md, "a", "b", "c")
    md.set_children(a, [c])
    md.set_children(b, [c, a])
    assert md.parents(c).tolist() == [a, b]
    assert md.parents(a).tolist() == [b]
    assert md.parents(b).tolist() == []


def test_export_streams_the_whole_matrix_in_exact_chunks(md):
    pages = md.ids_for([f"http://example.com/{n}" for n in range(50)])
    rng = np.random.default_rng(7)
    expected = []
    for page in pages:
        children = rng.choice(pages, size=rng.integers(0, 9), replace=False)
        md.set_children(page, children)
        expected += [(page, int(child)) for child in children]
    chunks = list(md.export_links(chunk_edges=16))
    assert all(src.dtype == np.int32 and dst.dtype == np.int32 for src, dst in chunks)
    assert [len(src) for src, _ in chunks[:-1]] == [16] * (len(chunks) - 1)
    edges = [(int(s), int(d)) for src, dst in chunks for s, d in zip(src, dst, strict=True)]
    assert edges == expected


def test_count_by_type(md):
    a, b, _c = ids(md, "a", "b", "c")
    md.record_fetch(full_fetch(a, 1.0, page_type=PageType.HTML))
    md.record_fetch(FetchResult(b, 1.0, PageType.DEAD, status=410, reason="gone"))
    counts = md.count_by_type()
    assert counts[PageType.HTML] == 1 and counts[PageType.DEAD] == 1
    assert counts[PageType.UNKNOWN] == 1 and counts[PageType.XML] == 0


def test_content_md5s_of_a_type(md):
    a, b, c, _d = ids(md, "a.xml", "b.xml", "c.html", "d.xml")
    md.record_fetch(full_fetch(a, 1.0, page_type=PageType.XML, md5="a" * 32))
    md.record_fetch(full_fetch(b, 1.0, page_type=PageType.XML, md5="b" * 32))
    md.record_fetch(full_fetch(c, 1.0, page_type=PageType.HTML, md5="c" * 32))
    md.record_fetch(FetchResult(b, 2.0, PageType.XML, status=304))  # keeps the MD5 read
    assert md.content_md5s(PageType.XML) == {a: "a" * 32, b: "b" * 32}
    assert md.content_md5s(PageType.HTML) == {c: "c" * 32}


# ---------------------------------------------------------------- Status-Data and state


def test_load_status_and_waiting(md):
    doc, other, dtd, entity = ids(md, "doc.xml", "other.xml", "a.dtd", "e.ent")
    assert md.status(doc) is None
    md.set_status(doc, LoadStatus.WAITING_DTD, "needs a.dtd", waiting_for=[dtd, entity])
    md.set_status(other, LoadStatus.WAITING_DTD, waiting_for=[dtd])
    assert md.status(doc) == (LoadStatus.WAITING_DTD, "needs a.dtd")
    assert md.waiting_on(dtd) == [doc, other]
    assert md.waiting_for(doc) == [dtd, entity]
    md.set_status(doc, LoadStatus.LOADED)
    assert md.status(doc) == (LoadStatus.LOADED, None)
    assert md.waiting_on(dtd) == [other]
    assert md.waiting_on(entity) == []


def test_named_state(md):
    assert md.get_state("clock") is None
    md.put_state("clock", b"\x00\x01")
    md.put_state("clock", b"epoch=5")
    assert md.get_state("clock") == b"epoch=5"


def test_one_object_shared_by_threads_assigns_consistent_ids(md):
    urls = [f"http://example.com/{n}" for n in range(400)]

    def assign(offset):
        return md.ids_for(urls[offset:] + urls[:offset])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(assign, [0, 100, 200, 300]))
    by_url = {}
    for offset, got in zip([0, 100, 200, 300], results, strict=True):
        for url, url_id in zip(urls[offset:] + urls[:offset], got, strict=True):
            assert by_url.setdefault(url, url_id) == url_id
    assert sorted(by_url.values()) == list(range(1, 401))


def test_a_scan_of_every_page_does_not_wait_for_a_writer(md):
    """refresh_view reads the committed snapshot on a connection of its own: a long write
    transaction in another thread (the loader's batch) does not hold it, nor it the writer."""
    md.id_for("http://a.test/")
    inside, release = threading.Event(), threading.Event()

    def write_slowly() -> None:
        with md.transaction():
            md.id_for("http://b.test/")
            inside.set()
            release.wait(10)

    writer = threading.Thread(target=write_slowly)
    writer.start()
    try:
        assert inside.wait(10)
        assert md.refresh_view()["id"].tolist() == [1]  # would wait 10 s on the shared lock
    finally:
        release.set()
        writer.join()
    assert md.refresh_view()["id"].tolist() == [1, 2]
