"""The metadata manager's API: Map-, Refresh-, Link- and Status-Data round trips."""

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from metadata import (
    MAX_CHILDREN,
    PAGE_TYPE_CODE,
    SCORE_COLUMNS,
    FetchResult,
    LoadStatus,
    ManualClock,
    Metadata,
    MetadataSettings,
    NotARepository,
    Observation,
    PageType,
    RepositoryExists,
    UnknownPage,
)


@pytest.fixture
def clock():
    return ManualClock(1_000.0)


@pytest.fixture
def md(store_url, clock):
    with Metadata.create(store_url, clock=clock) as metadata:
        yield metadata


def ids(md, *urls):
    return md.ids_for([f"http://example.com/{url}" for url in urls])


# ---------------------------------------------------------------- Map-Data


def test_ids_are_assigned_in_order_and_stable(md):
    assert ids(md, "a", "b", "c") == [1, 2, 3]
    assert ids(md, "c", "d", "a") == [3, 4, 1]
    assert md.max_url_id() == 4


def test_spellings_of_one_url_share_one_id(md):
    assert md.ids_for(["HTTP://Example.com:80/x#top", "http://example.com/x"]) == [1, 1]


def test_duplicates_in_one_batch_get_one_id(md):
    assert ids(md, "a", "a", "b", "a") == [1, 1, 2, 1]


def test_reverse_lookup(md):
    ids(md, "a", "b")
    assert md.url_of(2) == "http://example.com/b"
    assert md.urls_of([2, 1, 2]) == [
        "http://example.com/b",
        "http://example.com/a",
        "http://example.com/b",
    ]
    with pytest.raises(UnknownPage):
        md.url_of(99)


def test_lookup_without_create(md):
    ids(md, "a")
    assert md.ids_for(["http://example.com/a", "http://example.com/new"], create=False) == [
        1,
        None,
    ]
    assert md.id_for("http://example.com/new", create=False) is None
    assert md.max_url_id() == 1


def test_canonical_flag_skips_canonicalisation(md):
    assert md.ids_for(["http://example.com/a"], canonical=True) == [1]
    assert md.id_for("HTTP://EXAMPLE.COM/a") == 1


def test_invalid_urls_get_no_id_and_are_kept_as_rejected(md, clock):
    (page,) = ids(md, "page")
    got = md.ids_for(["mailto:x@example.com", "http://example.com/ok", "/rel"], referrer=page)
    assert got == [None, 2, None]
    assert md.max_url_id() == 2
    rejected = md.rejected()
    assert [(r.url, r.referrer, r.at) for r in rejected] == [
        ("/rel", page, clock.now()),
        ("mailto:x@example.com", page, clock.now()),
    ]
    assert "scheme 'mailto'" in rejected[1].reason


def test_lookups_do_not_record_rejections(md):
    assert md.ids_for(["javascript:void(0)"], create=False) == [None]
    assert md.rejected() == []


def test_reject_keeps_caller_reasons(md):
    md.reject("http://elsewhere.org/", "out of scope", referrer=None)
    assert md.rejected()[0].reason == "out of scope"
    md.reject(["http://trap.org/1", "http://trap.org/2"], "spider trap", referrer=7)
    assert [(r.url, r.reason, r.referrer) for r in md.rejected(limit=2)] == [
        ("http://trap.org/2", "spider trap", 7),
        ("http://trap.org/1", "spider trap", 7),
    ]


def test_rejected_links_table_is_bounded(store_url):
    settings = MetadataSettings(rejected_limit=5)
    with Metadata.create(store_url, settings=settings) as md:
        md.ids_for([f"ftp://example.com/{n}" for n in range(12)])
        kept = md.rejected(limit=100)
    assert [r.url for r in kept] == [f"ftp://example.com/{n}" for n in range(11, 6, -1)]


def test_new_pages_are_unknown_and_dated(md, clock):
    (page,) = ids(md, "a")
    record = md.page(page)
    assert record.page_type is PageType.UNKNOWN
    assert record.discovered_at == clock.now()
    assert record.observations == []
    assert md.count_by_type()[PageType.UNKNOWN] == 1


def test_page_by_url(md):
    ids(md, "a")
    assert md.page_by_url("HTTP://EXAMPLE.COM/a#x").url_id == 1
    with pytest.raises(UnknownPage):
        md.page_by_url("http://example.com/never")


def test_create_refuses_an_existing_database(md):
    with pytest.raises(RepositoryExists):
        Metadata.create(md.path)


def test_create_needs_an_existing_folder(tmp_path):
    with pytest.raises(NotARepository, match="folder does not exist"):
        Metadata.create(tmp_path / "missing" / "metadata.db")


# ---------------------------------------------------------------- Refresh-Data


def full_fetch(url_id, at, **fields):
    defaults = dict(
        page_type=PageType.XML,
        status=200,
        md5="0" * 32,
        last_modified=at - 10.0,
        etag='"v1"',
        content_type="application/xml",
        size=1234,
        children=[],
    )
    return FetchResult(url_id, at, **{**defaults, **fields})


def test_every_field_round_trips(md):
    page, target = ids(md, "a", "b")
    md.record_fetch(full_fetch(page, 2_000.0, redirect_to=target))
    md.record_fetch(
        full_fetch(page, 3_000.0, md5="1" * 32, etag='"v2"', robots="noindex", canonical_to=target)
    )
    for column, value in zip(SCORE_COLUMNS, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5], strict=True):
        md.set_scores(column, [page], [value])
    md.set_scores("change_rate", [page], [0.25], method="eq10")
    record = md.page(page)
    assert dataclasses.asdict(record) == dict(
        url_id=page,
        url="http://example.com/a",
        page_type=PageType.XML,
        status=200,
        reason=None,
        first_access=2_000.0,
        last_access=3_000.0,
        last_change=3_000.0,
        last_modified=2_990.0,
        etag='"v2"',
        md5="1" * 32,
        content_type="application/xml",
        size=1234,
        refreshes=1,
        unchanged_accesses=0,
        failures=0,
        importance=0.5,
        interest=1.5,
        opic_cash=2.5,
        opic_importance=3.5,
        change_rate=0.25,
        change_rate_method="eq10",
        next_refresh=5.5,
        redirect_to=None,
        robots="noindex",
        canonical_to=target,
        discovered_at=1_000.0,
        observations=[
            dict(at=2_000.0, changed=None, last_modified=1_990.0),
            dict(at=3_000.0, changed=True, last_modified=2_990.0),
        ],
    )


def test_change_is_decided_from_the_md5(md):
    (page,) = ids(md, "a")
    verdicts = md.record_fetches(
        [
            full_fetch(page, 10.0, md5="a"),
            full_fetch(page, 20.0, md5="a"),
            full_fetch(page, 30.0, md5="b"),
            full_fetch(page, 40.0, md5=None, status=304, etag=None, last_modified=None),
        ]
    )
    assert verdicts == [None, False, True, False]

    record = md.page(page)
    assert (record.refreshes, record.unchanged_accesses) == (3, 2)
    assert record.last_change == 30.0
    assert record.md5 == "b"
    assert [o.changed for o in md.observations(page)] == [None, False, True, False]


def test_robots_and_canonical_are_stated_by_each_read_and_kept_by_a_304(md):
    page, target = ids(md, "a", "b")
    md.record_fetch(full_fetch(page, 10.0, robots="noarchive,noindex", canonical_to=target))
    md.record_fetch(full_fetch(page, 20.0, md5=None, status=304, etag=None, last_modified=None))
    record = md.page(page)
    assert (record.robots, record.canonical_to) == ("noarchive,noindex", target)
    md.record_fetch(full_fetch(page, 30.0, md5="2" * 32))  # the page dropped its directives
    record = md.page(page)
    assert (record.robots, record.canonical_to) == (None, None)


def test_a_304_keeps_the_validators_it_does_not_resend(md):
    (page,) = ids(md, "a")
    md.record_fetch(full_fetch(page, 10.0, etag='"e"', last_modified=5.0))
    md.record_fetch(full_fetch(page, 20.0, status=304, md5=None, etag=None, last_modified=None))
    record = md.page(page)
    assert (record.status, record.etag, record.last_modified) == (304, '"e"', 5.0)


def test_a_200_states_its_validators_afresh(md):
    (page,) = ids(md, "a")
    md.record_fetch(full_fetch(page, 10.0, etag='"e"'))
    md.record_fetch(full_fetch(page, 20.0, etag=None, md5="other"))
    assert md.page(page).etag is None


def test_an_explicit_change_verdict_is_respected(md):
    (page,) = ids(md, "a")
    md.record_fetch(full_fetch(page, 10.0))
    assert md.record_fetch(full_fetch(page, 20.0, changed=True)) is True


def test_failures_are_recorded_as_data_not_observations(md):
    (page,) = ids(md, "a")
    md.record_fetch(full_fetch(page, 10.0, md5="a", children=[page]))
    md.record_fetch(FetchResult(page, 20.0, PageType.ERROR, reason="timeout"))
    md.record_fetch(FetchResult(page, 30.0, PageType.DEAD, status=404, reason="not found"))
    record = md.page(page)
    assert (record.page_type, record.status, record.reason) == (PageType.DEAD, 404, "not found")
    assert record.failures == 2
    assert record.last_access == 30.0
    assert record.md5 == "a"
    assert len(record.observations) == 1
    assert md.children(page).tolist() == [page]
    md.record_fetch(full_fetch(page, 40.0, md5="a"))
    record = md.page(page)
    assert (record.failures, record.reason, record.page_type) == (0, None, PageType.XML)


def test_a_page_fetched_twice_in_one_batch_ends_as_its_last_fetch_left_it(md):
    a, b = ids(md, "a", "b")
    md.record_fetches(
        [
            full_fetch(a, 1.0),
            FetchResult(a, 2.0, PageType.ERROR, reason="reset"),
            FetchResult(b, 1.0, PageType.ERROR, reason="reset"),
            full_fetch(b, 2.0),
        ]
    )
    assert (md.page(a).page_type, md.page(a).failures) == (PageType.ERROR, 1)
    assert (md.page(b).page_type, md.page(b).failures) == (PageType.XML, 0)


def test_observation_history_is_bounded_oldest_dropped(store_url):
    with Metadata.create(store_url, settings=MetadataSettings(observation_limit=3)) as md:
        (page,) = md.ids_for(["http://example.com/"])
        md.record_fetches([full_fetch(page, float(t), md5=str(t % 2)) for t in range(1, 8)])
        assert md.observations(page) == [
            Observation(5.0, True, -5.0),
            Observation(6.0, True, -4.0),
            Observation(7.0, True, -3.0),
        ]
        assert md.page(page).refreshes == 6


def test_unknown_page_in_a_batch_writes_nothing(md):
    (page,) = ids(md, "a")
    with pytest.raises(UnknownPage):
        md.record_fetches([full_fetch(page, 10.0), full_fetch(999, 10.0)])
    assert md.page(page).first_access is None
    assert md.observations(page) == []


def test_set_type(md):
    (page,) = ids(md, "a")
    md.set_type(page, PageType.ERROR, reason="not well-formed")
    record = md.page(page)
    assert (record.page_type, record.reason) == (PageType.ERROR, "not well-formed")
    with pytest.raises(UnknownPage):
        md.set_type(42, PageType.XML)


def test_observation_history_arrays(md):
    a, b, _never = ids(md, "a", "b", "c")
    md.record_fetches([full_fetch(a, 1.0, md5="x"), full_fetch(a, 2.0, md5="y")])
    md.record_fetch(full_fetch(b, 5.0, last_modified=None))
    history = md.observation_history()
    assert history["id"].tolist() == [a, b]
    assert history["offsets"].tolist() == [0, 2, 3]
    assert history["at"].tolist() == [1.0, 2.0, 5.0]
    np.testing.assert_array_equal(history["changed"], [np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(history["last_modified"], [-9.0, -8.0, np.nan])


# ---------------------------------------------------------------- scores and the refresh view


def test_scores_in_bulk_from_numpy(md):
    ids(md, *"abcde")
    md.set_scores("importance", np.array([2, 4]), np.array([0.2, 0.4]))
    got_ids, values = md.scores("importance")
    assert got_ids.dtype == np.int64 and values.dtype == np.float64
    assert got_ids.tolist() == [2, 4] and values.tolist() == [0.2, 0.4]
    md.set_scores("importance", [2], [np.nan])
    assert md.scores("importance")[0].tolist() == [4]


def test_scores_for_an_unknown_page_write_nothing(md):
    ids(md, "a", "b")
    with pytest.raises(UnknownPage):
        md.set_scores("importance", [1, 9, 2], [0.1, 0.9, 0.2])
    assert md.scores("importance")[0].size == 0


def test_bad_score_calls_are_refused(md):
    with pytest.raises(ValueError, match="unknown score column"):
        md.set_scores("url", [1], [1.0])
    with pytest.raises(ValueError, match="ids but"):
        md.set_scores("importance", [1, 2], [1.0])
    with pytest.raises(ValueError, match="method"):
        md.set_scores("importance", [1], [1.0], method="eq9")


def test_refresh_view_has_one_array_per_column(md):
    a, b = ids(md, "a", "b")
    md.record_fetch(full_fetch(a, 50.0))
    md.set_scores("interest", [b], [3.0])
    view = md.refresh_view()
    assert view["id"].tolist() == [a, b]
    assert view["type"].tolist() == [PAGE_TYPE_CODE[PageType.XML], PAGE_TYPE_CODE[PageType.UNKNOWN]]
    np.testing.assert_array_equal(view["last_access"], [50.0, np.nan])
    np.testing.assert_array_equal(view["interest"], [np.nan, 3.0])
    assert view["failures"].dtype == np.int64
    assert {len(column) for column in view.values()} == {2}


def test_empty_repository_views(md):
    view = md.refresh_view()
    assert all(len(column) == 0 for column in view.values())
    assert md.max_url_id() == 0
    assert list(md.export_links()) == []
    assert md.scores("importance")[0].size == 0
    history = md.observation_history()
    assert history["offsets"].tolist() == [0] and history["at"].size == 0


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
