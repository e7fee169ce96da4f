"""The metadata manager's API: Map-, Refresh-, Link- and Status-Data round trips."""

import dataclasses

import numpy as np
import pytest

from metadata import (
    PAGE_TYPE_CODE,
    SCORE_COLUMNS,
    FetchResult,
    Metadata,
    MetadataSettings,
    NotARepository,
    Observation,
    PageType,
    RepositoryExists,
    UnknownPage,
)
from tests.metadata_fixtures import full_fetch, ids

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


def test_a_large_batch_of_scores_is_written_whole(md):
    """Past 32 rows PostgreSQL writes a batch with one statement (arrays): the same
    result as row by row, NaN as unknown, an id given twice taking its last value."""
    pages = ids(md, *(f"p{n}" for n in range(120)))
    values = np.linspace(0.0, 1.0, 120)
    values[7] = np.nan
    md.set_scores("opic_cash", np.array([*pages, pages[3]]), np.array([*values, 5.0]))
    got_ids, got = md.scores("opic_cash")
    expected = dict(zip(pages, values.tolist(), strict=True)) | {pages[3]: 5.0}
    del expected[pages[7]]
    assert dict(zip(got_ids.tolist(), got.tolist(), strict=True)) == expected
    md.set_scores("change_rate", pages, np.full(120, 0.25), method="eq9")
    assert {md.page(page).change_rate_method for page in pages} == {"eq9"}
    assert md.scores("change_rate")[1].tolist() == [0.25] * 120
    with pytest.raises(UnknownPage):
        md.set_scores("opic_cash", [*pages, 10_000], np.zeros(121))
    assert dict(zip(*(a.tolist() for a in md.scores("opic_cash")), strict=True)) == expected


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
