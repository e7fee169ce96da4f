"""Scheduling a time unit (§6.5–6.6): scan, folders, levels, back-off, DEAD, discovery."""

import numpy as np
import pytest

from refresh.policy import refresh_intervals
from refresh.scheduler import (
    BACKGROUND_LEVEL,
    DISCOVERY_LEVEL,
    REFRESH_LEVEL,
    FolderSchedule,
    plan_time_unit,
    refreshes_per_unit,
    retry_delay_units,
    scan_due,
    submit_plan,
)
from refresh.settings import RefreshSettings

DAY = 86_400.0


class RecordingQueue:
    """A CrawlQueue that remembers what it was given."""

    def __init__(self):
        self.calls = []

    def submit(self, url_ids, level, scores):
        self.calls.append((list(url_ids), level, list(scores)))


def test_the_scan_picks_exactly_the_due_pages():
    rng = np.random.default_rng(1)
    next_refresh = rng.uniform(0, 100, 5000)
    next_refresh[rng.random(5000) < 0.1] = np.nan
    for now in (0.0, 17.5, 50.0, 100.0):
        expected = [i for i, t in enumerate(next_refresh) if t <= now]
        assert scan_due(next_refresh, now).tolist() == expected


def test_folders_give_the_scan_pages_at_unit_boundaries():
    rng = np.random.default_rng(2)
    n, unit = 20_000, 10.0
    next_refresh = rng.uniform(0, 200, n)
    folders = FolderSchedule(unit_s=unit, n_pages=n)
    folders.insert(np.arange(n), next_refresh)
    previous = -np.inf
    for now in np.arange(0, 210, unit):
        window = (next_refresh > previous) & (next_refresh <= now)
        assert sorted(folders.pop_due(now).tolist()) == np.flatnonzero(window).tolist()
        previous = now
    assert len(folders) == 0


def test_a_rescheduled_page_leaves_its_old_folder():
    folders = FolderSchedule(unit_s=1.0, n_pages=3)
    folders.insert(np.array([0, 1, 2]), np.array([1.0, 1.0, 5.0]))
    folders.insert(np.array([1]), np.array([3.0]))
    assert folders.pop_due(1.0).tolist() == [0]
    assert folders.pop_due(3.0).tolist() == [1]
    assert folders.pop_due(2.0).tolist() == []
    assert len(folders) == 1


def test_retry_back_off_grows_and_is_capped():
    settings = RefreshSettings(
        retry_backoff_units=1, retry_backoff_factor=2, max_retry_backoff_units=5
    )
    assert retry_delay_units(np.array([1, 2, 3, 4, 10]), settings).tolist() == [1, 2, 4, 5, 5]


def view(**columns):
    n = len(columns["id"])
    base = {
        "type": np.array(["XML"] * n),
        "last_access": np.zeros(n),
        "change_rate": np.full(n, 1 / DAY),
        "importance": np.ones(n),
        "interest": np.ones(n),
        "failures": np.zeros(n),
    }
    base.update(columns)
    return base


def test_plan_refreshes_due_pages_most_obsolete_first():
    settings = RefreshSettings(bandwidth_per_unit=2.0, discovery_share=0.0)
    # four XML pages, λ = 1/day, r = 1: S = 4, K = 2 days; last read 3, 2, 1, 0 days ago
    columns = view(id=np.array([10, 11, 12, 13]), last_access=np.array([0, 1, 2, 3]) * DAY)
    plan = plan_time_unit(columns, now=3 * DAY, settings=settings)
    assert plan.policy.k == pytest.approx(2.0)
    assert plan.next_refresh.tolist() == pytest.approx([2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY])
    assert plan.refresh.tolist() == [10, 11]
    assert plan.refresh_scores.tolist() == pytest.approx([3.0, 2.0])
    later = plan_time_unit(columns, now=4 * DAY, settings=settings)
    assert later.refresh.tolist() == [10, 11, 12]


def test_plan_spends_theta_on_unread_pages_by_opic_cash():
    settings = RefreshSettings(bandwidth_per_unit=10.0, discovery_share=0.3)
    n = 8
    columns = view(
        id=np.arange(100, 100 + n),
        type=np.array(["XML", "HTML"] + ["UNKNOWN"] * 6),
        last_access=np.array([0.0, 0.0] + [np.nan] * 6),
    )
    cash = np.array([0, 0, 0.1, 0.5, 0.3, 0.9, 0.0, 0.2])
    plan = plan_time_unit(columns, now=DAY, settings=settings, opic_cash=cash)
    assert plan.discovery.tolist() == [105, 103, 104]
    assert plan.discovery_scores.tolist() == [0.9, 0.5, 0.3]
    assert plan.policy.bandwidth <= settings.refresh_bandwidth_per_unit + 1e-9
    assert np.isnan(plan.next_refresh[2:]).all()


def test_plan_retries_errors_after_back_off_and_kills_repeated_failures():
    settings = RefreshSettings(max_failures=3, dead_recheck_units=10)
    columns = view(
        id=np.array([1, 2, 3, 4, 5]),
        type=np.array(["ERROR", "ERROR", "ERROR", "DEAD", "DEAD"]),
        last_access=np.array([9.5, 7.0, 9.9, 0.0, 5.0]) * DAY,
        failures=np.array([1, 2, 3, 5, 5]),
    )
    plan = plan_time_unit(columns, now=10 * DAY, settings=settings)
    # failure 1 waits 1 unit (not yet), failure 2 waits 2 units (due), failure 3 -> DEAD
    assert plan.retry.tolist() == [2]
    assert plan.make_dead.tolist() == [3]
    assert plan.background.tolist() == [4]
    assert plan.refresh.tolist() == []


def test_submit_plan_hands_each_level_to_the_queue():
    settings = RefreshSettings(bandwidth_per_unit=4.0, discovery_share=0.25)
    columns = view(
        id=np.array([1, 2, 3, 4]),
        type=np.array(["XML", "ERROR", "UNKNOWN", "DEAD"]),
        last_access=np.array([0.0, 0.0, np.nan, 0.0]),
        failures=np.array([0, 1, 0, 5]),
    )
    queue = RecordingQueue()
    submit_plan(plan_time_unit(columns, now=100 * DAY, settings=settings), queue)
    assert [(ids, level) for ids, level, _ in queue.calls] == [
        ([1], REFRESH_LEVEL),
        ([2], REFRESH_LEVEL),
        ([3], DISCOVERY_LEVEL),
        ([4], BACKGROUND_LEVEL),
    ]


def test_equilibrium_refreshes_about_g_pages_per_unit():
    rng = np.random.default_rng(3)
    n, bandwidth = 5000, 200.0
    weight = np.exp(rng.uniform(-3, 3, n))
    plan = refresh_intervals(weight, bandwidth)
    next_refresh = rng.uniform(0, 1, n) * plan.interval  # equilibrium phases
    counts = refreshes_per_unit(next_refresh, plan.interval, now=0.0, unit_s=1.0, units=30)
    assert counts.mean() == pytest.approx(bandwidth, rel=0.02)


def test_refreshes_per_unit_counts_recurrences_and_overdue_pages():
    counts = refreshes_per_unit(
        np.array([-5.0, 0.5, 2.0]), np.array([1.0, 2.0, np.inf]), now=0.0, unit_s=1.0, units=4
    )
    # page 0 overdue: at 0, 1, 2, 3; page 1 at 0.5, 2.5; page 2 never
    assert counts.tolist() == [2, 1, 2, 1]
