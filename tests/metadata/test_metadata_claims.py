"""Claims by part (issue 20): worker I of N takes the due pages of its hosts for a lease, on
either engine; two claimers never hold one page; a dead worker's claims expire."""

import pytest

from conventions import host_hash, part_of
from metadata import FetchResult, ManualClock, Metadata, PageType
from tests.paths import ROOT
from tests.stores import in_threads

PARTS = 3
URLS = [f"http://host{h}.test/page/{n}" for h in range(12) for n in range(5)]
NEW = [f"http://host{h}.test/new/{n}" for h in range(12) for n in range(5)]


@pytest.fixture
def md(store_url):
    with Metadata.create(store_url, clock=ManualClock(10.0)) as manager:
        manager.ids_for(URLS)
        yield manager


def test_the_host_hash_is_stable_and_every_page_carries_it(md):
    assert host_hash("http://a.test/x") == host_hash("http://a.test/other?q=1")
    assert host_hash("http://a.test/") != host_hash("https://a.test/")  # another host key
    assert host_hash("http://a.test/") == 31761485300886205  # the same on every machine
    stored = dict(md._all("SELECT url, host_hash FROM pages"))
    assert stored == {url: host_hash(url) for url in URLS}
    assert {part_of(url, PARTS) for url in URLS} == set(range(PARTS))


def test_each_part_claims_only_its_hosts_and_each_page_once(md):
    claimed = {}
    for part in range(PARTS):
        claimed[part] = md.claim_due(
            part, PARTS, f"w{part}", limit=1000, due_by=10.0, lease_s=60, now=0.0
        )
        urls = md.urls_of(claimed[part])
        assert all(part_of(url, PARTS) == part for url in urls)
    every = [url_id for ids in claimed.values() for url_id in ids]
    assert sorted(every) == list(range(1, len(URLS) + 1))
    # while the leases live nothing is claimed again
    assert md.claim_due(0, PARTS, "w0-again", limit=1000, due_by=10.0, lease_s=60, now=59.0) == []
    assert md.claimed_by("w1") == claimed[1]


def test_a_dead_workers_claims_expire_and_are_claimed_again(md):
    first = md.claim_due(0, 1, "dead", limit=7, due_by=10.0, lease_s=30, now=100.0)
    assert len(first) == 7
    assert md.claim_due(0, 1, "heir", limit=7, due_by=10.0, lease_s=30, now=129.0) != first
    again = md.claim_due(0, 1, "heir", limit=100, due_by=10.0, lease_s=30, now=130.0)
    assert set(first) <= set(again)  # the lease ended at 130: the dead worker's pages return


def test_released_pages_and_what_is_not_due(md):
    ids = md.claim_due(0, 1, "w", limit=5, due_by=10.0, lease_s=60, now=0.0)
    assert md.release_claims(ids[:2], "w") == 2
    assert md.release_claims(ids[:2], "w") == 0
    assert md.release_claims(ids[2:], "someone else") == 0
    md.set_scores("next_refresh", ids[:2], [50.0, 5.0])
    # ids[0] is due at 50 only; ids[1] at 5; the unread pages were discovered at 10
    due = md.claim_due(0, 1, "w2", limit=1000, due_by=10.0, lease_s=60, now=1.0)
    assert ids[1] in due and ids[0] not in due and due[0] == min(due)
    assert md.claim_due(0, 1, "w3", limit=5, due_by=9.0, lease_s=60, now=1.0) == []
    with pytest.raises(ValueError, match="part 3"):
        md.claim_due(3, 3, "w", limit=1, due_by=0.0, lease_s=1)


def test_found_links_are_claimed_only_if_of_the_part_due_and_free(md):
    """What a worker claims of the links it just found (``claim_due(among=…)``): the same
    conditions among the given ids, up to ``limit``; a kill -9 leaves them leased."""
    ids = md.ids_for(URLS)
    ours = [i for i, url in zip(ids, URLS, strict=True) if part_of(url, PARTS) == 1]
    theirs = [i for i, url in zip(ids, URLS, strict=True) if part_of(url, PARTS) != 1]
    held = md.claim_due(1, PARTS, "other", limit=10, due_by=10.0, lease_s=60, now=0, among=ours[:2])
    assert held == sorted(ours[:2])
    md.set_scores("next_refresh", [ours[2]], [50.0])  # planned later: not due
    md.record_fetches([FetchResult(ours[3], 10.0, PageType.DEAD, 404)])
    got = md.claim_due(1, PARTS, "w", limit=1000, due_by=10.0, lease_s=60, now=1.0, among=ids)
    assert got == sorted(ours[4:])  # not another part's, held, not due, nor dead
    assert not set(got) & set(theirs)
    assert md.claimed_by("w") == got
    more = [i for i, url in zip(md.ids_for(NEW), NEW, strict=True) if part_of(url, PARTS) == 1]
    two = md.claim_due(1, PARTS, "w", limit=2, due_by=10.0, lease_s=60, now=1.0, among=more)
    assert len(two) == 2 and set(two) <= set(more)
    # the leases run out like a poll's: after a kill -9 a poll takes them again
    again = md.claim_due(1, PARTS, "heir", limit=1000, due_by=10.0, lease_s=60, now=61.0)
    assert set(got) | set(two) <= set(again)


def test_concurrent_claimers_never_share_a_page(store_url):
    Metadata.create(store_url, clock=ManualClock(10.0)).close()
    with Metadata.open(store_url) as md:
        md.ids_for([f"http://one.test/{n}" for n in range(400)])
    stores = [Metadata.open(store_url) for _ in range(2)]
    got: list[list[int]] = [[], []]

    def claim(k: int) -> None:
        while batch := stores[k].claim_due(0, 1, f"w{k}", limit=7, due_by=1e12, lease_s=600):
            got[k] += batch

    in_threads(claim, 2)
    for store in stores:
        store.close()
    assert not set(got[0]) & set(got[1])
    assert sorted(got[0] + got[1]) == list(range(1, 401))


def test_a_migrated_repository_gets_the_host_hash_of_its_pages(tmp_path):
    import shutil

    from tests.stores import raw

    made_by_main = ROOT / "tests" / "fixtures" / "main_repository" / "metadata.db"
    path = tmp_path / "metadata.db"
    shutil.copy(made_by_main, path)
    with raw(str(path)) as conn:
        assert "host_hash" not in {row[1] for row in conn.execute("PRAGMA table_info(pages)")}
    with Metadata.open(path) as md:
        stored = md._all("SELECT url, host_hash FROM pages")
        assert stored and all(value == host_hash(url) for url, value in stored)
        assert md.claim_due(0, 1, "w", limit=10, due_by=1e12, lease_s=1, now=0.0)
