"""The coordinator's refresh pass writes the schedule into the store and the workers find
their pages due there: read pages due at their refresh point, a failed page at its retry,
nothing handed to a crawler's queue (both engines)."""

from __future__ import annotations

import math

from metadata import FetchResult, ManualClock, Metadata, PageType
from refresh import RefreshSettings
from xyleme.config import Config
from xyleme.coordinator import StoreQueue, WorkersParking
from xyleme.jobs import RefreshPass, restore_opic

DAY = 86_400.0


async def test_the_refresh_pass_makes_the_workers_pages_due_in_the_store(store_url):
    clock = ManualClock(DAY)
    with Metadata.create(store_url, clock=clock) as md:
        read, failed, unread = md.ids_for(
            ["http://a.test/read", "http://b.test/failed", "http://a.test/unread"]
        )
        md.record_fetches(
            [
                FetchResult(read, DAY, PageType.XML, 200, md5="1" * 32),
                FetchResult(failed, DAY, PageType.ERROR, 500, reason="server error"),
            ]
        )
        settings = RefreshSettings(bandwidth_per_unit=10.0, retry_backoff_units=1.0)
        queue = StoreQueue(md, clock)
        opic = restore_opic(md, Config().opic)
        refresh = RefreshPass(md, settings, clock, queue, opic, WorkersParking())

        await refresh.run()
        planned = md.page(read).next_refresh
        assert planned is not None and math.isfinite(planned) and planned > DAY
        assert md.page(failed).next_refresh is None  # its retry is not due yet
        due_now = md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0)
        assert due_now == [unread]  # the unread page is due by its discovery
        md.finish_claims(due_now, "w", not_before=10 * DAY)  # as a worker postpones a refusal
        assert md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0) == []

        clock.advance(2 * DAY)  # past the read page's refresh point and the retry's delay
        await refresh.run()
        assert md.page(failed).next_refresh == clock.now()  # the retry, made due
        due = md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0)
        # the refused page is looked at again after a pass: the pass plans every page anew
        assert due == sorted([read, failed, unread])


async def test_dead_and_redirected_pages_are_rechecked_every_dead_recheck_units(store_url):
    """As the daemon's background level (docs/refresh.md): a DEAD page and a redirect are
    not due until ``dead_recheck_units`` have passed since their last access; the pass then
    makes them due and the worker queues them at the background level."""
    clock = ManualClock(DAY)
    with Metadata.create(store_url, clock=clock) as md:
        dead, moved, target = md.ids_for(
            ["http://a.test/dead", "http://a.test/moved", "http://a.test/target"]
        )
        md.record_fetches(
            [
                FetchResult(dead, DAY, PageType.DEAD, 404, reason="not found"),
                FetchResult(moved, DAY, PageType.UNKNOWN, 301, redirect_to=target),
            ]
        )
        settings = RefreshSettings(bandwidth_per_unit=10.0, dead_recheck_units=3)
        queue = StoreQueue(md, clock)
        opic = restore_opic(md, Config().opic)
        refresh = RefreshPass(md, settings, clock, queue, opic, WorkersParking())
        await refresh.run()
        assert md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0) == [target]
        clock.advance(2 * DAY)
        await refresh.run()
        assert md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0) == []
        clock.advance(DAY)  # three units since their last access
        await refresh.run()
        due = md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0)
        assert due == sorted([dead, moved])
        pages = md.claimed_pages(due)
        assert {(url_id, background) for url_id, _, _, background in pages} == {
            (dead, True),
            (moved, True),
        }
        now = clock.now()  # the worker re-checks them: still dead, still moved
        md.record_fetches(
            [
                FetchResult(dead, now, PageType.DEAD, 404, reason="not found"),
                FetchResult(moved, now, PageType.UNKNOWN, 301, redirect_to=target),
            ]
        )
        md.finish_claims(due, "w")  # not due again before three more units
        await refresh.run()
        assert md.claim_due(0, 1, "w", limit=10, due_by=clock.now(), lease_s=60.0) == []
