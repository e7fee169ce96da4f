"""Scheduling a time unit (§6.5–6.6): scan, folders, levels, back-off, DEAD, discovery."""

import numpy as np
import pytest

from refresh import RefreshSettings, refresh_intervals, time_averaged_obsolescence
from refresh.scheduler import (
    BACKGROUND_LEVEL,
    DISCOVERY_LEVEL,
    REFRESH_LEVEL,
    FolderSchedule,
    RefreshTimetable,
    plan_time_unit,
    refreshes_per_unit,
    retry_delay_units,
    scan_due,
    submit_plan,
)

DAY = 86_400.0


class RecordingQueue:
    """A CrawlQueue that remembers what it was given."""

    def __init__(self):
        self.calls = []

    async def submit_plan(self, batches):
        self.calls += [
            (list(ids), level, list(scores)) for ids, level, scores in batches if len(ids)
        ]
        return sum(len(ids) for ids, _, _ in batches)


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


def test_a_page_that_redirected_is_rechecked_in_the_background_not_rediscovered():
    settings = RefreshSettings(bandwidth_per_unit=10.0, discovery_share=0.3, dead_recheck_units=5)
    # 7: never read; 8 and 9 answered 301 two and six days ago (read, still UNKNOWN)
    columns = view(
        id=np.array([7, 8, 9]),
        type=np.array(["UNKNOWN"] * 3),
        last_access=np.array([np.nan, 8.0, 4.0]) * DAY,
    )
    plan = plan_time_unit(
        columns, now=10 * DAY, settings=settings, opic_cash=np.array([0.1, 0.9, 0.9])
    )
    assert plan.discovery.tolist() == [7]  # the redirects' cash does not take its place
    assert plan.background.tolist() == [9]


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


async def test_submit_plan_hands_each_level_to_the_queue():
    settings = RefreshSettings(bandwidth_per_unit=4.0, discovery_share=0.25)
    columns = view(
        id=np.array([1, 2, 3, 4]),
        type=np.array(["XML", "ERROR", "UNKNOWN", "DEAD"]),
        last_access=np.array([0.0, 0.0, np.nan, 0.0]),
        failures=np.array([0, 1, 0, 5]),
    )
    queue = RecordingQueue()
    assert await submit_plan(plan_time_unit(columns, now=100 * DAY, settings=settings), queue) == 4
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


def test_plan_lists_the_units_upcoming_refreshes_by_due_time():
    settings = RefreshSettings(bandwidth_per_unit=2.0, discovery_share=0.0)
    # K = 2 days: due at 2, 2.8, 2.5 and 4 days
    columns = view(id=np.array([10, 11, 12, 13]), last_access=np.array([0, 0.8, 0.5, 2]) * DAY)
    plan = plan_time_unit(columns, now=2 * DAY, settings=settings)
    assert plan.refresh.tolist() == [10]
    assert plan.upcoming.tolist() == [12, 11]  # due in (now, now + unit], earliest first
    assert plan.upcoming_at.tolist() == pytest.approx([2.5 * DAY, 2.8 * DAY])
    assert plan.upcoming_scores.tolist() == pytest.approx([2.0, 2.0])  # r·λ·t at the moment


def test_the_timetable_releases_each_page_once_at_its_moment():
    table = RefreshTimetable(np.array([1, 2, 3, 4]), np.array([4.0, 1.0, 3.0, 1.0]))
    assert table.pop_due(0.5)[0].tolist() == []
    assert table.pop_due(1.0)[0].tolist() == [2, 4]
    assert table.pop_due(3.5)[0].tolist() == [3]
    assert table.pop_due(2.0)[0].tolist() == []  # the clock never goes back: nothing again
    assert len(table) == 1 and table.pop_due(10.0)[0].tolist() == [1] and len(table) == 0


def simulate_daily_passes(release_steps: int, days: int = 60) -> tuple[float, float, float]:
    """Pages refreshed by a pass per unit (day) and, between passes, releases at the moments
    (``release_steps`` per unit; 0: every refresh at the pass). Returns the time-averaged
    obsolescence over the second half, Ω and the refreshes per unit."""
    rng = np.random.default_rng(5)
    n = 3000
    rate = np.exp(rng.uniform(np.log(1 / 60), np.log(24), n)) / DAY
    settings = RefreshSettings(bandwidth_per_unit=400.0, discovery_share=0.0)
    columns = view(id=np.arange(1, n + 1), change_rate=rate, last_access=rng.uniform(0, DAY, n))
    accesses = [[at] for at in columns["last_access"].tolist()]
    omega = fetched = 0.0
    for day in range(1, days):
        plan = plan_time_unit(columns, now=day * DAY, settings=settings)
        omega = plan.policy.obsolescence
        moments = [(day * DAY, plan.refresh)]
        if release_steps:
            table = RefreshTimetable.of_plan(plan)
            steps = day * DAY + DAY * np.arange(1, release_steps + 1) / release_steps
            moments += [(t, table.pop_due(t)[0]) for t in steps.tolist()]
        for at, ids in moments:
            columns["last_access"][ids - 1] = at
            for url_id in ids.tolist():
                accesses[url_id - 1].append(at)
            fetched += len(ids) * (day >= days // 2)
    history = {
        "id": columns["id"],
        "offsets": np.cumsum([0] + [len(a) for a in accesses]),
        "at": np.concatenate(accesses),
    }
    weight = rate * columns["importance"]
    measured = time_averaged_obsolescence(
        history, columns["id"], weight, days // 2 * DAY, days * DAY
    )
    return measured, omega, fetched / (days - days // 2)


def test_releasing_refreshes_at_their_moments_reaches_the_optimum():
    measured, omega, per_unit = simulate_daily_passes(release_steps=96)
    assert measured / omega == pytest.approx(1.0, abs=0.05)
    assert per_unit == pytest.approx(400.0, rel=0.05)


def test_refreshing_only_at_the_daily_pass_is_late_and_underspends():
    """What the daemon did before the timetable: each refresh up to a unit late, the floored
    pages every second unit, so above Ω with bandwidth left unused (1.16·Ω, 86 % of G)."""
    measured, omega, per_unit = simulate_daily_passes(release_steps=0)
    assert measured / omega > 1.1
    assert per_unit < 0.9 * 400.0


def test_time_averaged_obsolescence_integrates_each_pages_age():
    rng = np.random.default_rng(8)
    n = 40
    counts = rng.integers(1, 6, n)
    at = np.concatenate([np.sort(rng.uniform(0, 100, c)) for c in counts])
    history = {"id": np.arange(n) * 2 + 1, "offsets": np.cumsum([0, *counts]), "at": at}
    ids = np.arange(2 * n + 1)
    weight = rng.uniform(0, 2, len(ids))
    grid = np.linspace(30, 90, 60_001)
    expected = np.zeros(len(grid))
    for k, page in enumerate(history["id"]):
        reads = at[history["offsets"][k] : history["offsets"][k + 1]]
        last = np.searchsorted(reads, grid, side="right") - 1
        seen = last >= 0  # before its first read a page is not in the repository
        expected[seen] += weight[page] * (grid[seen] - reads[last[seen]])
    measured = time_averaged_obsolescence(history, ids, weight, 30.0, 90.0)
    assert measured == pytest.approx(expected.mean(), rel=1e-3)
