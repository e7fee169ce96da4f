"""Batched writes: a loader's batch of documents in one transaction."""

from __future__ import annotations

import pytest

from metadata import LoadStatus, ManualClock, Metadata, PageType, UnknownPage


@pytest.fixture
def md(store_url):
    with Metadata.create(store_url, clock=ManualClock(0.0)) as manager:
        yield manager


def test_set_children_many_replaces_each_page_and_keeps_the_last_row(md):
    a, b, c, d = md.ids_for([f"http://x.test/{n}" for n in "abcd"])
    md.set_children(a, [d])
    md.set_children_many([(a, [b, c, b], [d]), (b, [a], []), (b, [c], [])])
    assert md.children(a).tolist() == [b, c]
    assert md.dependencies(a).tolist() == [d]
    assert md.children(b).tolist() == [c]


def test_set_status_many_clears_waits(md):
    a, b, dtd = md.ids_for([f"http://x.test/{n}" for n in ("a", "b", "d.dtd")])
    md.set_status(a, LoadStatus.WAITING_DTD, "waiting", waiting_for=[dtd])
    md.set_status_many([(a, LoadStatus.LOADED, "version 1"), (b, LoadStatus.FAILED, "bad")])
    assert md.status(a) == (LoadStatus.LOADED, "version 1")
    assert md.status(b) == (LoadStatus.FAILED, "bad")
    assert md.waiting_on(dtd) == []


def test_set_type_many(md):
    a, b = md.ids_for(["http://x.test/a", "http://x.test/b"])
    md.set_type_many([(a, PageType.XML, None), (b, PageType.ERROR, "not well formed")])
    assert md.page(a).page_type is PageType.XML
    assert (md.page(b).page_type, md.page(b).reason) == (PageType.ERROR, "not well formed")


@pytest.mark.parametrize(
    "write",
    [
        lambda md, a: md.set_children_many([(a, [a], []), (999, [a], [])]),
        lambda md, a: md.set_status_many(
            [(a, LoadStatus.LOADED, None), (999, LoadStatus.LOADED, None)]
        ),
        lambda md, a: md.set_type_many([(a, PageType.XML, None), (999, PageType.XML, None)]),
    ],
)
def test_an_unknown_page_in_a_batch_writes_nothing(md, write):
    (a,) = md.ids_for(["http://x.test/a"])
    with pytest.raises(UnknownPage):
        write(md, a)
    assert md.children(a).tolist() == []
    assert md.status(a) is None
    assert md.page(a).page_type is not PageType.XML


def test_a_transaction_commits_every_write_or_none(md):
    a, b = md.ids_for(["http://x.test/a", "http://x.test/b"])
    with md.transaction():
        md.set_children(a, [b])
        (c,) = md.ids_for(["http://x.test/c"])
        md.set_status(a, LoadStatus.LOADED, "version 1")
    assert md.children(a).tolist() == [b] and c == 3
    with pytest.raises(UnknownPage), md.transaction():
        md.set_children(b, [a])
        md.ids_for(["http://x.test/d"])
        md.set_status(999, LoadStatus.LOADED)
    assert md.children(b).tolist() == []
    assert md.id_for("http://x.test/d", create=False) is None
    md.set_children(b, [a])  # the manager is usable again
    assert md.children(b).tolist() == [a]


def test_statuses_and_awaited_read_a_batch_at_once(md):
    a, b, c, dtd = md.ids_for([f"http://x.test/{n}" for n in ("a", "b", "c", "d.dtd")])
    md.set_status(a, LoadStatus.WAITING_DTD, "waiting", waiting_for=[dtd])
    md.set_status(b, LoadStatus.LOADED, "version 1")
    assert md.statuses([a, b, c, a]) == {
        a: (LoadStatus.WAITING_DTD, "waiting"),
        b: (LoadStatus.LOADED, "version 1"),
    }
    assert md.awaited([a, dtd, c]) == {dtd}
    assert md.statuses([]) == {} and md.awaited([]) == set()


@pytest.mark.parametrize("size", [3, 40])
def test_batches_below_and_above_the_small_batch_write_alike(md, size):
    """PostgreSQL sends a few rows by executemany and more by COPY: the same rows stored."""
    pages = md.ids_for([f"http://x.test/{n}" for n in range(size)])
    assert pages == list(range(1, size + 1))
    md.set_children_many([(page, [page], []) for page in pages])
    md.set_children_many([(pages[-1], [pages[0]], [])])
    assert [md.children(page).tolist() for page in pages[:-1]] == [[page] for page in pages[:-1]]
    assert md.children(pages[-1]).tolist() == [pages[0]]


def test_children_many_reads_the_pages_that_have_links(md):
    a, b, c = md.ids_for(["http://x.test/a", "http://x.test/b", "http://x.test/c"])
    md.set_children_many([(a, [b, c], []), (b, [], [])])
    found = md.children_many([a, b, c, a])
    assert {url_id: children.tolist() for url_id, children in found.items()} == {
        a: [b, c],
        b: [],
    }
    assert md.children_many([]) == {}
