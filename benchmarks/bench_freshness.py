"""Freshness of a simulated repository under the sqrt(r·λ) rule and under the peers' schedulers.

N pages change as Poisson processes (λ log-uniform between 0.01 and 100 changes a day) and have
an importance r (Pareto with tail index 1.5, normalised to mean 1, independent of λ). A crawler
of bandwidth G pages a day refreshes them for D days, the scheduler running every hour (the
simulation's time unit, also the shortest refresh interval of the sqrt variants). Measured
after a warm-up (20 days): the time-averaged obsolescence Σ r·λ·(t − t0) (§6.4, with the true
λ) and the importance-weighted fraction of stale pages Σ r·P(stale) / Σ r (with the true λ,
P(stale) = 1 − e^{−λ·age}, integrated exactly over each hour).

Policies:

* uniform: every page every N/G days;
* proportional: refresh frequency proportional to λ (true λ);
* sqrt-true: t_i = K / sqrt(r_i·λ_i) with the true λ (``refresh.policy.refresh_intervals``);
* sqrt-est: the same with λ estimated on-line from the policy's own observations of a
  truthful Last-Modified (the censored eq. 10), K re-solved every day and a page's λ, S and K
  updated as soon as it is fetched (``IncrementalPolicy``);
* sqrt-est-eq9: the same from change observations only (eq. 9 on each page's last 64 access
  intervals; the prior for pages without an interval);
* sqrt-est-eb: change observations only, with the empirical-Bayes posterior mean
  (``refresh.bayes``; the grid prior refitted every day);
* nutch: Apache Nutch's AdaptiveFetchSchedule as its code specifies (×0.8 on change, ×1.2
  otherwise, SYNC_DELTA with rate 0.2, interval clamped to [1 min, 365 days], 30 days at
  first);
* stormcrawler: StormCrawler's AdaptiveScheduler (changed: (1 − 0.5)·t + 0.5·t_min; not
  changed: 1.5·t capped; t in [1 h, 2 weeks], 1 day at first).

Bandwidth: the scheduled policies (uniform, proportional, sqrt-*) are solved for exactly G
refreshes a day; the adaptive peers ask for far more than G, so at every scan they get at most
G per hour, the most overdue pages first (the rest stay due). The realised fetches a day of
every policy are printed. Ω is the optimum S²/(2·G) with the one-hour floor (§6.3–6.4).

Run: ``python benchmarks/bench_freshness.py [--smoke | --quick]`` (``--smoke``: 1,000 pages,
10 days after a 5-day warm-up, a few seconds). The last line is JSON with
``sqrt_true_over_opt``, ``sqrt_est_over_opt``, ``nutch_over_sqrt_est``,
``stormcrawler_over_sqrt_est`` (and ``sqrt_est_eq9_over_opt``, ``sqrt_est_eb_over_opt``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages first

from refresh import (
    AccessIntervals,
    IncrementalPolicy,
    change_observation_mle,
    fit_grid_prior,
    grid_log_likelihood,
    group_prior,
    posterior_mean_rate,
    rate_grid,
    refresh_intervals,
    resolvable_rate_grid,
)

MINUTE = 1 / 1440  # in days
HISTORY = 64
GRID = rate_grid(1e-3, 48.0, 32)  # changes a day, before any interval: 2 per time unit (hour)


@dataclass
class World:
    """The simulated pages and crawler, in days."""

    rate: np.ndarray
    r: np.ndarray
    bandwidth: float
    days: float
    warmup: float
    step: float = 1 / 24

    @property
    def weight(self) -> np.ndarray:
        return self.r * self.rate

    @classmethod
    def generate(cls, n: int, bandwidth: float, days: float, warmup: float, seed: int) -> World:
        rng = np.random.default_rng(seed)
        rate = np.exp(rng.uniform(np.log(0.01), np.log(100.0), n))
        r = rng.pareto(1.5, n) + 1.0  # Pareto (Lomax + 1), tail index 1.5
        return cls(rate, r / r.mean(), bandwidth, days, warmup)


class FixedIntervals:
    """A policy with precomputed intervals, started in its equilibrium (random phases)."""

    equalised = False

    def __init__(self, name: str, interval: np.ndarray) -> None:
        self.name, self.interval = name, interval

    def start(self, world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        last = -rng.random(len(world.rate)) * self.interval
        return last, last + self.interval

    def fetched(self, ids, now, changed, age) -> np.ndarray:
        return now + self.interval[ids]

    def daily(self, now, last):
        return None


def warm_start(world: World, rng: np.random.Generator) -> np.ndarray:
    """Last fetch times of a first crawl spread uniformly over the N/G days before 0."""
    return -rng.random(len(world.rate)) * len(world.rate) / world.bandwidth


class SqrtEstimated:
    """The sqrt rule on λ estimated on-line from the policy's own observations.

    With ``last_modified`` the server's truthful Last-Modified is used (the censored eq. 10,
    kept as its sufficient statistics C and Σl + Σv); without it, eq. 9 on the change
    observations of the last 64 access intervals. A page is re-estimated when it is fetched,
    S and K follow at once (``IncrementalPolicy``, §6.6), and the whole problem is solved
    again (with the one-unit floor) every day.
    """

    equalised = False

    def __init__(self, world: World, *, evidence: str, prior_per_day: float = 1.0) -> None:
        n = len(world.rate)
        self.name = {"last_modified": "sqrt-est", "eq9": "sqrt-est-eq9", "bayes": "sqrt-est-eb"}[
            evidence
        ]
        self.world, self.evidence = world, evidence
        self.log_likelihood = np.zeros((n, len(GRID))) if evidence == "bayes" else None
        self.grid = GRID
        self.grid_prior = np.full(len(GRID), 1 / len(GRID))
        self.length = np.zeros((n, HISTORY))
        self.changed = np.zeros((n, HISTORY), dtype=bool)
        self.count = np.zeros(n, dtype=np.int64)
        self.dated_changes = np.zeros(n)
        self.exposure = np.zeros(n)
        self.estimate = np.full(n, np.nan)
        self.default_prior = prior_per_day
        self.policy: IncrementalPolicy | None = None

    def rates(self) -> np.ndarray:
        if self.evidence == "bayes":
            self.regrid()
            self.grid_prior = fit_grid_prior(self.log_likelihood, self.grid_prior, iterations=20)
            return posterior_mean_rate(self.log_likelihood, self.grid_prior, self.grid)
        prior = group_prior(
            self.estimate,
            np.zeros(len(self.estimate)),
            np.zeros(len(self.estimate)),
            min_pages=50,
            default=self.default_prior,
        )
        return np.where(np.isnan(self.estimate), prior, self.estimate)

    def held_intervals(self, ids: np.ndarray | slice = slice(None)) -> AccessIntervals:
        held = np.minimum(self.count[ids], HISTORY)
        return AccessIntervals(
            self.length[ids], self.changed[ids], np.arange(HISTORY) < held[:, None]
        )

    def regrid(self) -> None:
        """Move the grid to what the held intervals resolve, as ``empirical_bayes_rates`` does."""
        intervals = self.held_intervals()
        grid = resolvable_rate_grid(intervals, len(GRID))
        if grid is None:
            return
        warm = np.interp(np.log(grid), np.log(self.grid), self.grid_prior)
        self.grid, self.grid_prior = grid, warm / warm.sum()
        self.log_likelihood = grid_log_likelihood(intervals, grid)

    def solve(self) -> np.ndarray:
        self.current = self.rates()
        weight = self.world.r * self.current
        if self.policy is None:
            self.policy = IncrementalPolicy(
                weight, self.world.bandwidth, min_interval=self.world.step
            )
        else:
            self.policy.update(np.arange(len(weight)), weight)
        return self.policy.resolve().interval

    def start(self, world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        last = warm_start(world, rng)
        self.rng = rng
        self.dated_changes[:] = 1.0  # the first access dates the last change (§6.1.2)
        self.exposure[:] = rng.exponential(1 / world.rate)
        return last, last + self.solve()

    def observe_last_modified(self, ids, changed, age) -> None:
        rate = self.world.rate[ids]
        since_change = -np.log1p(self.rng.random(len(ids)) * np.expm1(-rate * age)) / rate
        self.dated_changes[ids] += changed
        self.exposure[ids] += np.where(changed, since_change, age)
        self.estimate[ids] = self.dated_changes[ids] / self.exposure[ids]

    def observe_changes(self, ids, changed, age) -> None:
        slot = (self.count[ids] - 1) % HISTORY
        self.length[ids, slot] = age
        self.changed[ids, slot] = changed
        intervals = self.held_intervals(ids)
        if self.evidence == "bayes":
            self.log_likelihood[ids] = grid_log_likelihood(intervals, self.grid)
            self.estimate[ids] = posterior_mean_rate(
                self.log_likelihood[ids], self.grid_prior, self.grid
            )
        else:
            self.estimate[ids] = change_observation_mle(intervals).rate

    def fetched(self, ids, now, changed, age) -> np.ndarray:
        self.count[ids] += 1
        if self.evidence == "last_modified":
            self.observe_last_modified(ids, changed, age)
        else:
            self.observe_changes(ids, changed, age)
        rate = np.where(np.isnan(self.estimate[ids]), self.current[ids], self.estimate[ids])
        self.policy.update(ids, self.world.r[ids] * rate)  # S and K follow at once (§6.6)
        return now + self.policy.interval(ids)

    def daily(self, now, last):
        return last + self.solve()


@dataclass
class Nutch:
    """Apache Nutch's AdaptiveFetchSchedule (defaults of its code, times in days)."""

    name: str = "nutch"
    equalised: bool = True
    inc_rate: float = 0.2
    dec_rate: float = 0.2
    min_interval: float = MINUTE
    max_interval: float = 365.0
    sync_delta_rate: float = 0.2
    default_interval: float = 30.0
    interval: np.ndarray = field(default_factory=lambda: np.empty(0))
    modified: np.ndarray = field(default_factory=lambda: np.empty(0))

    def start(self, world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        last = warm_start(world, rng)
        self.interval = np.full(len(last), self.default_interval)
        self.modified = last.copy()  # Nutch sets modifiedTime to the fetch time when unknown
        return last, last + self.interval

    def fetched(self, ids, now, changed, age) -> np.ndarray:
        interval = self.interval[ids] * np.where(changed, 1 - self.dec_rate, 1 + self.inc_rate)
        modified = np.where(changed, now, self.modified[ids])
        delta = now - modified  # SYNC_DELTA: synchronise with the time of change
        interval = np.maximum(interval, delta)
        ref_time = now - delta * self.sync_delta_rate
        interval = np.clip(interval, self.min_interval, self.max_interval)
        self.interval[ids], self.modified[ids] = interval, modified
        return ref_time + interval

    def daily(self, now, last):
        return None


@dataclass
class StormCrawler:
    """StormCrawler's AdaptiveScheduler (defaults of its code, times in days)."""

    name: str = "stormcrawler"
    equalised: bool = True
    inc_rate: float = 0.5
    dec_rate: float = 0.5
    min_interval: float = 1 / 24
    max_interval: float = 14.0
    default_interval: float = 1.0
    interval: np.ndarray = field(default_factory=lambda: np.empty(0))

    def start(self, world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        last = warm_start(world, rng)
        self.interval = np.full(len(last), self.default_interval)
        return last, last + self.interval

    def fetched(self, ids, now, changed, age) -> np.ndarray:
        old = self.interval[ids]
        shrunk = (1 - self.dec_rate) * old + self.dec_rate * self.min_interval
        grown = np.minimum(old * (1 + self.inc_rate), self.max_interval)
        self.interval[ids] = np.where(changed, shrunk, grown)
        return now + self.interval[ids]

    def daily(self, now, last):
        return None


def simulate(policy, world: World, seed: int) -> dict[str, float]:
    """Run one policy; time-averaged obsolescence and stale share after the warm-up."""
    rng = np.random.default_rng(seed)
    h = world.step
    weight, rate, r = world.weight, world.rate, world.r
    last, next_due = policy.start(world, rng)
    total_weight, weighted_last = weight.sum(), float(np.dot(weight, last))
    stay_fresh = -np.expm1(-rate * h) / (rate * h)  # mean of e^{−λs} over one step
    steps_per_day = round(1 / h)
    credit = 0.0
    obsolescence = stale = fetches = measured = 0.0
    for step in range(round(world.days / h)):
        now = step * h
        if step and step % steps_per_day == 0:
            planned = policy.daily(now, last)
            if planned is not None:
                next_due = planned
        due = np.flatnonzero(next_due <= now)
        if policy.equalised:  # exactly G·h pages: the most overdue, then the next ones
            allowed = int(credit + world.bandwidth * h)
            due = np.argpartition(next_due, allowed - 1)[:allowed]
            credit += world.bandwidth * h - allowed
        if len(due):
            age = now - last[due]
            changed = rng.random(len(due)) < -np.expm1(-rate[due] * age)
            weighted_last += float(np.dot(weight[due], age))
            next_due[due] = policy.fetched(due, now, changed, age)
            last[due] = now
        if now >= world.warmup:
            obsolescence += (now + h / 2) * total_weight - weighted_last
            stale += 1 - np.dot(r, np.exp(-rate * (now - last)) * stay_fresh) / r.sum()
            fetches += len(due)
            measured += 1
    return {
        "obsolescence": obsolescence / measured,
        "stale": stale / measured,
        "fetches_per_day": fetches / (measured * h),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 pages, 60 days (< 60 s)")
    parser.add_argument("--smoke", action="store_true", help="1,000 pages, 15 days (seconds)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    n, bandwidth, days, warmup = (
        (1_000, 100.0, 15.0, 5.0)
        if args.smoke
        else (10_000, 1_000.0, 60.0, 20.0)
        if args.quick
        else (100_000, 10_000.0, 100.0, 20.0)
    )
    world = World.generate(n, bandwidth, days, warmup=warmup, seed=args.seed)
    started = time.perf_counter()

    optimum = refresh_intervals(world.weight, bandwidth, min_interval=world.step)
    uniform = refresh_intervals(np.ones(n), bandwidth, min_interval=world.step)
    proportional = refresh_intervals(world.rate**2, bandwidth, min_interval=world.step)
    policies = [
        FixedIntervals("uniform", uniform.interval),
        FixedIntervals("proportional", proportional.interval),
        FixedIntervals("sqrt-true", optimum.interval),
        SqrtEstimated(world, evidence="last_modified"),
        SqrtEstimated(world, evidence="eq9"),
        SqrtEstimated(world, evidence="bayes"),
        Nutch(),
        StormCrawler(),
    ]
    omega = optimum.obsolescence
    print(
        f"N = {n:,} pages, G = {bandwidth:,.0f} pages/day, {days:.0f} days, warm-up "
        f"{world.warmup:.0f} days; time unit (scan period and shortest interval) = "
        f"{world.step * 24:.0f} h; shortest sqrt-true interval "
        f"{optimum.interval.min() * 24:.2f} h, {optimum.floored} pages at the floor"
    )
    print(f"Ω = S²/(2G) with the floor = {omega:,.1f} (obsolescence, changes·importance)")
    print(
        f"{'policy':>13} {'obsolescence':>13} {'÷ Ω':>7} {'stale (r-weighted)':>19} "
        f"{'fetches/day':>12} {'seconds':>8}"
    )
    results = {}
    for policy in policies:
        tic = time.perf_counter()
        result = simulate(policy, world, args.seed + 1)
        results[policy.name] = result
        print(
            f"{policy.name:>13} {result['obsolescence']:13,.1f} "
            f"{result['obsolescence'] / omega:7.3f} {result['stale']:19.3f} "
            f"{result['fetches_per_day']:12,.0f} {time.perf_counter() - tic:8.1f}"
        )
    print(f"elapsed {time.perf_counter() - started:.1f} s")

    def ratio(a: str, b: str) -> float:
        return round(results[a]["obsolescence"] / results[b]["obsolescence"], 4)

    summary = {
        "sqrt_true_over_opt": round(results["sqrt-true"]["obsolescence"] / omega, 4),
        "sqrt_est_over_opt": round(results["sqrt-est"]["obsolescence"] / omega, 4),
        "nutch_over_sqrt_est": ratio("nutch", "sqrt-est"),
        "stormcrawler_over_sqrt_est": ratio("stormcrawler", "sqrt-est"),
        "sqrt_est_eq9_over_opt": round(results["sqrt-est-eq9"]["obsolescence"] / omega, 4),
        "sqrt_est_eb_over_opt": round(results["sqrt-est-eb"]["obsolescence"] / omega, 4),
        "uniform_over_opt": round(results["uniform"]["obsolescence"] / omega, 4),
        "proportional_over_opt": round(results["proportional"]["obsolescence"] / omega, 4),
        "pages": n,
        "days": days,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
