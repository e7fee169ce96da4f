"""What the crawl workers keep in the store, on both engines: heartbeats (the ``workers``
table, schema version 6), the follow-ups of their claims (URLs, renewed leases, ended
claims, retries made due), and the coordinator's advisory lock (PostgreSQL only)."""

from __future__ import annotations

import time

import pytest

from metadata import (
    CoordinatorLock,
    FetchResult,
    Glance,
    Heartbeat,
    LeadLost,
    ManualClock,
    Metadata,
    MetadataError,
    PageType,
    schema,
)
from xyleme.worker_status import worker_lines

URLS = [f"http://h{n}.test/page" for n in range(6)]


def beat(name: str, part: int | None = 0, *, state: str = "running") -> Heartbeat:
    role = "worker" if part is not None else "coordinator"
    parts = None if part is None else 2
    return Heartbeat(name, role, part, parts, 41, "box", 3, 120, 9.5, 1.0, state)


def test_the_workers_table_is_schema_version_6():
    assert schema.latest_version() >= 6
    assert schema.MIGRATIONS[4] is schema.add_workers


def test_heartbeats_are_written_read_and_stale_when_old(store_url):
    with Metadata.create(store_url) as md:
        md.heartbeat(beat("w0"), now=100.0)
        md.heartbeat(beat("w1", 1), now=100.0)
        md.heartbeat(beat("c", None), now=100.0)
        md.heartbeat(beat("w1", 1, state="stopped"), now=101.0)  # the same row, replaced
        rows = md.workers(now=130.0)
    assert [(row["role"], row["name"]) for row in rows] == [
        ("coordinator", "c"),
        ("worker", "w0"),
        ("worker", "w1"),
    ]
    by_name = {row["name"]: row for row in rows}
    assert by_name["w0"]["stale"] and by_name["w0"]["age"] == pytest.approx(30.0)
    assert not by_name["w1"]["stale"]  # stopped cleanly: old, not stale
    assert by_name["w0"]["pages_per_s"] == 9.5 and by_name["w0"]["hosts_owned"] == 3
    text = "\n".join(worker_lines(rows))
    assert "STALE: no heartbeat for 30 s" in text and "part 1/2" in text


def test_status_reads_the_workers_without_the_manager(store_url, tmp_path):
    with Metadata.create(store_url) as md:
        md.heartbeat(beat("w0"), now=100.0)
    where = store_url if store_url.startswith("postgres") else store_url.removeprefix("sqlite://")
    if where.startswith("postgres"):
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "xyleme.toml").write_text(f'[store]\nurl = "{store_url}"\n')
        where = repo / "metadata.db"
    with Glance.open(where) as glance:
        assert [row["name"] for row in glance.workers(now=101.0)] == ["w0"]


def test_a_restart_replaces_its_parts_dead_rows_but_never_a_live_worker(store_url, tmp_path):
    import os
    import socket
    import time

    from xyleme.worker import replace_earlier_workers

    here = socket.gethostname()
    with Metadata.create(store_url) as md:
        stale = Heartbeat("stale", "worker", 0, 2, 1, "elsewhere", 0, 0, 0.0, 1.0)
        gone = Heartbeat("gone", "worker", 0, 2, 2**22 + 7, here, 0, 0, 0.0, 1.0)  # no such pid
        other = Heartbeat("other-part", "worker", 1, 2, os.getpid(), here, 0, 0, 0.0, 1.0)
        md.heartbeat(stale, now=time.time() - 3600)  # a kill -9 on another machine, long ago
        md.heartbeat(gone, now=time.time())  # a kill -9 here, a moment ago
        md.heartbeat(other, now=time.time())
        replace_earlier_workers(md, 0, 2)
        assert {row["name"] for row in md.workers()} == {"other-part"}
        live = Heartbeat("live", "worker", 0, 2, os.getpid(), here, 0, 0, 0.0, 1.0)
        md.heartbeat(live, now=time.time())
        with pytest.raises(MetadataError, match="part 0/2 is already crawled by live"):
            replace_earlier_workers(md, 0, 2)
        assert md.forget_worker("live") and not md.forget_worker("live")


def test_claims_are_read_renewed_and_ended_so_a_read_page_is_not_due_again(store_url):
    with Metadata.create(store_url, clock=ManualClock(1.0)) as md:
        ids = md.ids_for(URLS)
        md.record_fetches([FetchResult(ids[0], 5.0, PageType.HTML, 200, md5="0" * 32)])
        md.set_scores("next_refresh", [ids[0]], [8.0])  # read, due at 8
        claimed = md.claim_due(0, 1, "w", limit=10, due_by=10.0, lease_s=60.0, now=1000.0)
        assert claimed == sorted(ids)
        pages = md.claimed_pages([ids[1], ids[0], 999_999])
        assert pages == [(ids[1], URLS[1], False, False), (ids[0], URLS[0], True, False)]
        assert md.renew_claims(ids, "w", 5000.0) == len(ids)
        assert md.renew_claims(ids, "someone else", 9000.0) == 0
        # leases renewed: still held at 2000 (the first lease ended at 1060)
        assert md.claim_due(0, 1, "x", limit=10, due_by=10.0, lease_s=60.0, now=2000.0) == []
        assert md.finish_claims([ids[0]], "w") == 1
        assert md.page(ids[0]).next_refresh is None  # planned again by the refresh pass
        assert md.finish_claims(ids[1:3], "w", not_before=50.0) == 2  # postponed
        assert md.release_claims(ids[3:], "w") == 3
        due = md.claim_due(0, 1, "x", limit=10, due_by=10.0, lease_s=60.0, now=2000.0)
        assert due == ids[3:]  # read page not due, postponed ones not yet, released ones are
        later = md.claim_due(0, 1, "x", limit=10, due_by=60.0, lease_s=60.0, now=2000.0)
        assert later == ids[1:3]


def test_make_due_gives_a_date_only_to_pages_without_one(store_url):
    with Metadata.create(store_url) as md:
        a, b = md.ids_for(URLS[:2])
        md.set_scores("next_refresh", [a], [3.0])
        assert md.make_due([a, b], 7.0) == 1
        assert md.page(a).next_refresh == 3.0 and md.page(b).next_refresh == 7.0


def test_one_coordinator_leads_and_the_next_takes_over_when_it_goes(postgres_url):
    with Metadata.create(postgres_url):
        pass
    first, second = CoordinatorLock(postgres_url), CoordinatorLock(postgres_url)
    try:
        assert first.try_acquire()
        assert not second.try_acquire()
        first.still_held()  # no error: its connection is alive
        first.close()  # as a dead leader's session ends
        for _ in range(200):  # the server lets go once the session's backend has exited
            if second.try_acquire():
                break
            time.sleep(0.05)
        else:
            pytest.fail("the lock was not free 10 s after its holder's session ended")
        with pytest.raises(LeadLost):
            first.still_held()
    finally:
        first.close()
        second.close()


def test_a_coordinator_lock_on_sqlite_is_refused(tmp_path):
    with pytest.raises(MetadataError, match="needs a PostgreSQL store"):
        CoordinatorLock(tmp_path / "metadata.db")
