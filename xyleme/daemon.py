"""The acquisition daemon (``xyleme run``): one asyncio process that keeps a repository fresh.

The daemon only wires and schedules; every decision is a module's (ARCHITECTURE "Data flow",
docs/daemon.md):

1. at start it takes the repository's lock (:mod:`xyleme.lock`), opens the metadata,
   restores the simulated clock and OPIC from the last checkpoint (:mod:`xyleme.status`),
   and queues the seeds, every known page never read, and every XML page read but never
   loaded (a kill -9 between the two);
2. the crawler's workers and writer run on the loop; the loader is its document sink,
   parsing in a worker thread (:mod:`xyleme.loading`); OPIC is credited from the crawler's
   events after each commit;
3. APScheduler's ``AsyncIOScheduler`` fires the periodic jobs on real time (simulated
   intervals divided by the clock's speed): the refresh pass every time unit, the release of
   its refreshes at their moments ``RELEASES_PER_UNIT`` times a unit, the ranking every
   ``rank_every`` units, the checkpoint, the command table. Tests build a :class:`Daemon` on
   a ``ManualClock`` and call the jobs themselves (:meth:`Daemon.refresh_scan`,
   :meth:`Daemon.release_refreshes`, :meth:`Daemon.recompute_ranking`,
   :meth:`Daemon.checkpoint`, :meth:`Daemon.poll_commands`);
4. state-changing commands of the CLI arrive through the command table
   (:mod:`xyleme.commands`); the daemon is their :class:`~xyleme.commands.CommandTarget`;
5. SIGTERM / SIGINT stop taking work, give in-flight fetches the crawler's
   ``shutdown_deadline``, let running jobs end, write a checkpoint and return; after a
   kill -9 the next start resumes from the database and the last checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import importlib
import inspect
import logging
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from metadata.clock import Clock
from metadata.errors import StoreError, StoreFull
from metadata.reports import write_host_stats
from ranking import RankingCancelled, RankingError
from ranking.opic import OPIC
from ranking.opic_events import FetchListener
from ranking.repository import rank_repository
from refresh.recheck import RecheckProgress, recheck
from refresh.report import ScheduleReport, host_keys, schedule_report, time_averaged_obsolescence
from refresh.scheduler import RefreshTimetable
from xyleme import commands, signals
from xyleme.archive.writer import Archive
from xyleme.commands import Answer
from xyleme.config import Config
from xyleme.crawler import Crawler, CrawlerSettings, CrawlEvent, Level, Scope
from xyleme.crawler.fetcher import SPOOLED_BODIES
from xyleme.crawler.frontier import host_key
from xyleme.crawler.probe import CrawlerProbe
from xyleme.loading import LoaderSink
from xyleme.lock import DaemonLock
from xyleme.recheck import NothingToRecheck, RecheckRequest, prepare, progress_line, summary
from xyleme.scope_config import check_start, repository_scope, seed_refusals
from xyleme.status import restore_clock, save_clock, save_live_status

log = logging.getLogger(__name__)

DATABASE = "metadata.db"
POLICY_FIGURES = ("S", "K", "omega", "obsolescence", "due_now", "refreshed_pages")
"""The refresh policy's figures kept for ``xyleme status`` and the demo."""
RELEASES_PER_UNIT = 96
"""How often a unit's upcoming refreshes are released to the crawler (each at its moment,
to within 1/96 of a unit: 15 min when the unit is a day), but at most every
``MIN_RELEASE_SECONDS`` real seconds (a fast clock would otherwise fire it 100 times a second)."""
MIN_RELEASE_SECONDS = 0.05


class DaemonStopped(RuntimeError):
    """The daemon had to stop on an error it cannot work around (a full disk, say)."""


class Daemon:
    """The repository's one long-running process.

    Parameters
    ----------
    repository : Path
        The repository folder (made by ``xyleme init``).
    config : Config
        The effective configuration (``xyleme.toml``).
    clock : Clock, optional
        Simulated time; by default restored from the repository at the configured speed.
    stop_at : float, optional
        Simulated time at which the daemon stops by itself (the demo's ``--days``).
    resolver : aiohttp.abc.AbstractResolver, optional
        Name resolution for the crawler (the simulated web's in the demo and the tests).
    """

    def __init__(
        self,
        repository: Path,
        config: Config,
        *,
        clock: Clock | None = None,
        stop_at: float | None = None,
        resolver: Any = None,
    ) -> None:
        self.repository = repository
        self.config = config
        self.clock = clock
        self.stop_at = stop_at
        self.resolver = resolver
        self.crawler: Crawler | None = None
        self.opic: OPIC | None = None
        self.sink: LoaderSink | None = None
        self.archive: Archive | None = None
        self._fetching: asyncio.Task | None = None
        self.lock = DaemonLock(repository)
        self.md: Metadata | None = None
        self.paused = False
        self.passes: dict[str, float | None] = {"refresh": None, "ranking": None}
        self.policy: dict[str, float] = {}
        self.refreshes_per_unit: list[int] = []
        self.obsolescence_history: list[tuple[float, float, float]] = []
        """(pass time, obsolescence averaged over the unit before it, Ω(G)) per refresh pass."""
        self._timetable = RefreshTimetable(np.empty(0, np.int64), np.empty(0))
        self._refreshes = 0
        self._sitemap_hosts: set[str] = set()
        self.failure: str | None = None
        self._stop: asyncio.Event | None = None
        self._scheduler: AsyncIOScheduler | None = None
        self._running_jobs: set[asyncio.Task] = set()
        self._rank_cancel = threading.Event()
        self.rechecking: asyncio.Task | None = None
        """The re-check running in the background (``xyleme recheck``), if any."""
        self.recheck_status: dict[str, Any] | None = None
        """The last re-check's progress (``state`` running, done or cancelled), for status."""

    # ------------------------------------------------------------------ life cycle

    def open(self) -> None:
        """Lock the repository, open its metadata and restore the clock (raises if held)."""
        md = Metadata.open(self.repository / DATABASE, settings=self.config.metadata)
        try:
            scope = check_start(self.config, commands.stored_seeds(md))  # or NoSeedInScope
            if not self.lock.held:  # run_with_dashboard takes it before announcing itself
                self.lock.acquire()
        except BaseException:
            md.close()
            raise
        self.md = md
        if self.clock is None:
            self.clock = restore_clock(self.md, self.config.clock.speed, time.time())
        md.clock = self.clock  # discoveries and rejections are dated in simulated time
        self.paused = commands.is_paused(self.md)
        self.archive = Archive(
            self.repository / self.config.archive.folder,
            self.config.archive,
            self.clock,
            {"isPartOf": self.repository.resolve().name},
        )
        self.archive.open()
        self.crawler = Crawler(
            md,
            self._crawler_settings(),
            scope,
            clock=self.clock,
            resolver=self.resolver,
            exchanges=self.archive if self.archive.active else None,
        )
        documents = self.repository / self.config.paths.documents
        self.sink = LoaderSink(documents, md, self.crawler, self.clock, self.config.loader)
        self.crawler.sink = self.sink
        self.opic = self._restore_opic()
        self._listen_to_fetches()
        self.checkpoint()
        # numba and the ranking kernels load now (~1.5 s), not inside the first ranking pass
        importlib.import_module("ranking.pagerank.compute")
        log.info(
            "daemon started on %s (simulated time %s, speed x%g%s)",
            self.repository,
            _iso(self.clock.now()),
            self.clock.speed,
            ", paused" if self.paused else "",
        )

    def close(self) -> None:
        """Write a last checkpoint, close the metadata and let go of the lock."""
        if self.md is None:
            return
        try:
            self.checkpoint()
        except Exception as error:
            if not _disk_full(error):
                raise
            self.stop(f"cannot write the last checkpoint: {error}")
        finally:
            if self.archive is not None:
                self.archive.close_now()  # the exchanges still queued are written, files closed
            self.sink.close()
            self.md.close()
            self.md = None
            self.lock.release()
        log.info("daemon stopped")

    async def run(self) -> None:
        """Run until SIGTERM/SIGINT, :meth:`stop`, ``stop_at`` or a fatal error.

        Raises :class:`DaemonStopped` when it stopped on an error (the CLI exits non-zero).
        """
        self._stop = asyncio.Event()
        with self._stopping_on_signals():
            self.open()
            try:
                self.queue_unread()
                await self.queue_not_loaded()
                # What start-up built (modules, settings, caches) lives as long as the process:
                # out of the cyclic GC's sight, a full collection no longer stalls the loop
                # for a scan of it (measured: ~90 ms every few seconds).
                gc.freeze()
                self._scheduler = self._start_scheduler()
                if not self.paused:
                    self.start_fetching()
                await self._stop.wait()
            finally:
                if self._scheduler is not None:
                    self._scheduler.pause()  # no new job; running ones end below
                await self.cancel_recheck()
                await self.stop_fetching()
                await self._stop_scheduler()
                self.close()
        if self.failure is not None:
            raise DaemonStopped(self.failure)

    def stop(self, failure: str | None = None) -> None:
        """Ask :meth:`run` to stop taking work and return (``failure`` says why, if bad).

        A ranking pass in progress is cancelled (it is recomputed at the next start)."""
        self._rank_cancel.set()
        if failure is not None and self.failure is None:
            self.failure = failure
            log.error("stopping: %s", failure)
        if self._stop is not None:
            self._stop.set()

    @contextlib.contextmanager
    def _stopping_on_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT ask for a clean stop while the block runs."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)
        try:
            yield
        finally:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        log.info(
            "%s received: finishing in-flight work, then stopping", signal.Signals(signum).name
        )
        self.stop()

    def _start_scheduler(self) -> AsyncIOScheduler:
        """The periodic jobs, on real time (simulated intervals divided by the speed).

        Every job is a coroutine function, so APScheduler runs it on the event loop, never in
        a thread: the daemon's objects are used from the loop only.
        """
        settings = self.config.daemon
        scheduler = AsyncIOScheduler()
        jobs = [
            (self.refresh_scan, self._real_seconds(1.0)),
            (
                self.release_refreshes,
                max(MIN_RELEASE_SECONDS, self._real_seconds(1.0 / RELEASES_PER_UNIT)),
            ),
            (self._ranking_job, self._real_seconds(settings.rank_every)),
            (self._checkpoint_job, settings.checkpoint_seconds),
            (self.poll_commands, settings.command_poll),
        ]
        if self.stop_at is not None:
            jobs.append((self._check_stop_at, min(0.1, settings.command_poll)))
        for job, seconds in jobs:
            scheduler.add_job(
                self._run_job,
                "interval",
                args=[job],
                seconds=seconds,
                max_instances=1,
                coalesce=True,
                id=job.__name__,
            )
        scheduler.start()
        return scheduler

    async def _run_job(self, job: Callable[[], Awaitable[None]]) -> None:
        """Run one periodic job; a stop lets it finish (it may be writing in a thread)."""
        task = asyncio.current_task()
        self._running_jobs.add(task)
        try:
            await job()
        except Exception as error:
            if _disk_full(error):  # nothing more can be written: stop cleanly, say why
                self.stop(f"cannot write to the repository: {error}")
            else:
                log.exception("periodic job %s failed (it runs again next time)", job.__name__)
        finally:
            self._running_jobs.discard(task)

    async def _stop_scheduler(self) -> None:
        """No new job starts; the running ones finish before the metadata is closed."""
        if self._scheduler is None:
            return
        self._scheduler.pause()
        if self._running_jobs:
            log.info("waiting for %d periodic job(s) to finish", len(self._running_jobs))
        await asyncio.gather(*self._running_jobs, return_exceptions=True)
        self._scheduler.shutdown(wait=False)
        self._scheduler = None

    def _crawler_settings(self) -> CrawlerSettings:
        """The crawler's settings, its large bodies spooled in the repository (unless the
        configuration names another folder), emptied of the bodies a kill -9 left behind:
        their fetches were not committed and will be made again."""
        settings = self.config.crawler
        if not settings.spool_dir:
            settings = replace(settings, spool_dir=str(self.repository / self.config.paths.spool))
        folder = Path(settings.spool_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(SPOOLED_BODIES):
            stale.unlink(missing_ok=True)
        return settings

    def _real_seconds(self, time_units: float) -> float:
        """Real seconds between two runs of a job that comes every ``time_units``."""
        return self.clock.real_seconds(time_units * self.config.clock.time_unit)

    async def _check_stop_at(self) -> None:
        if self.clock.now() >= self.stop_at:
            log.info("reached the end of the run (%s)", _iso(self.stop_at))
            self.stop()

    def _restore_opic(self) -> OPIC:
        """OPIC from the last checkpoint (or new), knowing every page the metadata knows."""
        settings = self.config.opic
        opic = OPIC.restore(self.md, settings.checkpoint_key) or settings.build()
        known = self.md.max_url_id()
        if known:
            opic.add_pages(np.arange(1, known + 1))  # ids start at 1; known ones are kept
        return opic

    def _listen_to_fetches(self) -> None:
        """OPIC credits every committed fetch, failures included (their cash goes back); the
        refreshes of the current time unit are counted."""
        credit = FetchListener(self.opic, self.md)
        for signal_ in (signals.page_fetched, signals.page_failed, signals.page_dead):
            self.crawler.signals.connect(signal_, lambda event: credit(event.result))
        self.crawler.signals.connect(signals.page_fetched, self._count_refresh)
        self.crawler.signals.connect(signals.page_fetched, self._queue_sitemaps)
        for signal_ in (signals.page_fetched, signals.page_failed, signals.page_dead):
            self.crawler.signals.connect(signal_, self.sink.dependency_answered)

    def _queue_sitemaps(self, event: CrawlEvent) -> None:
        """The first page read from a host: queue the sitemaps its robots.txt names.

        The loader reads a sitemap's URLs as its links, and they are scouted like any.
        """
        host = host_key(event.url)
        if host in self._sitemap_hosts:
            return
        self._sitemap_hosts.add(host)
        rules = self.crawler.robots.lookup(host, time.monotonic())
        if rules is not None and rules.parser is not None:
            for sitemap in rules.parser.sitemaps:
                self.crawler.submit(sitemap, Level.SCOUTING)

    def _count_refresh(self, event: CrawlEvent) -> None:
        if event.level == Level.REFRESH:
            self._refreshes += 1

    # ------------------------------------------------------------------ fetching

    def _scope(self) -> Scope:
        """``[crawler] scope`` rules, else the seeds' sites (grows with ``seed add``)."""
        return repository_scope(self.config, commands.stored_seeds(self.md))

    def queue_unread(self) -> int:
        """Queue the seeds and every known page never read (at start, and after a crash).

        Only what was in flight or queued is lost by a kill -9: the database knows every
        discovered page, so it is queued again here, at the scouting level.
        """
        view = self.md.refresh_view()
        unread = view["id"][view["type"] == PAGE_TYPE_CODE[PageType.UNKNOWN]]
        urls = [*commands.stored_seeds(self.md), *self.md.urls_of(unread.tolist())]
        queued = sum(self.crawler.submit(url, Level.SCOUTING) for url in dict.fromkeys(urls))
        if queued:
            log.info("queued %d unread pages", queued)
        return queued

    async def queue_not_loaded(self) -> int:
        """Read again the XML pages whose last read the loader never stored (after a kill -9).

        The crawler commits a read before it hands the body to the loader: a crash between
        the two leaves a page whose MD5 is recorded but not in the loader's repository, and
        its next refresh, seeing that MD5 again, would not load it. Such pages (unless parked
        waiting for a DTD) are queued at the refresh level, read unconditionally and handed to
        the loader whatever their MD5.
        """
        read = await asyncio.to_thread(self.md.content_md5s, PageType.XML)
        url_ids = await asyncio.to_thread(self.sink.not_loaded, read)
        queued = sum(self.crawler.submit(url_id, Level.REFRESH, reload=True) for url_id in url_ids)
        if queued:
            log.info("queued %d XML pages read but never loaded (a crash cut them off)", queued)
        return queued

    def start_fetching(self) -> None:
        """Let the crawler's workers run (at start, and on ``resume``)."""
        if self._fetching is None or self._fetching.done():
            self._fetching = asyncio.create_task(self.crawler.run(until_idle=False), name="crawler")

    async def stop_fetching(self) -> None:
        """Stop the workers: in-flight fetches get the crawler's ``shutdown_deadline``."""
        if self._fetching is not None:
            self.crawler.stop()
            await self._fetching
            self._fetching = None

    # ------------------------------------------------------------------ periodic jobs

    async def refresh_scan(self) -> None:
        """The refresh pass of one time unit (paper §6.5–6.6).

        λ is estimated from every page's observations, the sqrt(r·λ) policy gives each page
        its next refresh, and the unit's work goes to the crawler: the due refreshes and
        retries (level 1), θ·G unread pages by OPIC cash (level 2), DEAD re-checks (level 4).
        The refreshes due before the next pass wait in a timetable that
        :meth:`release_refreshes` empties as their moments come. The heavy part runs in a
        thread; only queueing touches the loop.
        """
        now, started = self.clock.now(), time.monotonic()
        previous = self.passes["refresh"]
        since = (
            previous
            if previous is not None and previous < now
            else now - self.config.clock.time_unit
        )
        report, obsolescence = await asyncio.to_thread(
            self._plan_refreshes, now, self.opic.cash(), since
        )
        plan = report.plan
        self._timetable = RefreshTimetable.of_plan(plan)
        batches = (
            (plan.refresh, Level.REFRESH, plan.refresh_scores),
            (plan.retry, Level.REFRESH, np.zeros(len(plan.retry))),
            (plan.discovery, Level.DISCOVERY, plan.discovery_scores),
            (plan.background, Level.BACKGROUND, np.zeros(len(plan.background))),
        )
        for url_ids, level, scores in batches:
            for count, (url_id, score) in enumerate(
                zip(url_ids.tolist(), scores.tolist(), strict=True)
            ):
                self.crawler.submit(url_id, level, score)
                if count % 256 == 255:
                    await asyncio.sleep(0)  # a URL lookup each: let the fetchers run between
        expired = await self.sink.expire_waiting()
        if expired:
            log.info("%d documents waited too long for a DTD or entity: failed", expired)
        self.refreshes_per_unit.append(self._refreshes)
        self._refreshes = 0
        self.passes["refresh"] = now
        self.policy = {**report.summary(), "obsolescence": obsolescence}
        self.obsolescence_history.append((now, obsolescence, self.policy["omega"]))
        log.info(
            "refresh pass in %.1f s: %d due, %d more in this unit, %d retries, %d discoveries, "
            "%d re-checks; S %.4g, K %.4g, Ω(G) %.4g, obsolescence over the last unit %.4g",
            time.monotonic() - started,
            len(plan.refresh),
            len(plan.upcoming),
            len(plan.retry),
            len(plan.discovery),
            len(plan.background),
            self.policy["S"],
            self.policy["K"],
            self.policy["omega"],
            self.policy["obsolescence"],
        )

    async def release_refreshes(self) -> int:
        """Hand the crawler the refreshes whose moment has come since the last call (§6.6).

        Each page is then read about when its interval t_i ends, not at the next unit's
        boundary: a pass once per unit with every refresh at its start reads a page read just
        after a pass only two passes later (the floored pages every 2 units instead of 1).
        Returns how many were released.
        """
        url_ids, scores = self._timetable.pop_due(self.clock.now())
        for url_id, score in zip(url_ids.tolist(), scores.tolist(), strict=True):
            self.crawler.submit(url_id, Level.REFRESH, score)
        return len(url_ids)

    async def recompute_ranking(self) -> dict[str, Any]:
        """Importance and interest of every page (paper §5), every ``rank_every`` units.

        The sliced computation runs in a worker thread (its kernels release the GIL), so
        fetching goes on; a stop cancels it between two slices, and nothing is written then.
        Returns the pass's figures (also logged).
        """
        started, real_start = self.clock.now(), time.monotonic()
        self._rank_cancel.clear()
        folder = self.repository / self.config.paths.ranking
        scope = None if self.crawler is None else self.crawler.scope
        ranking = await asyncio.to_thread(
            rank_repository,
            self.md,
            folder,
            self.config.ranking,
            cancel=self._rank_cancel,
            in_scope=None if scope is None else (lambda url: scope.refusal(url) is None),
        )
        self.passes["ranking"] = started
        figures = {
            "pages": ranking.pages,
            "xml_pages": ranking.xml_pages,
            "links": ranking.links,
            "importance_sweeps": ranking.importance.sweeps,
            "interest_sweeps": None if ranking.interest is None else ranking.interest.sweeps,
        }
        log.info(
            "ranking pass in %.1f s: %d pages (%d XML), %d links; importance in %d sweeps%s",
            time.monotonic() - real_start,
            ranking.pages,
            ranking.xml_pages,
            ranking.links,
            ranking.importance.sweeps,
            "" if ranking.interest is None else f", interest in {ranking.interest.sweeps}",
        )
        return figures

    async def _ranking_job(self) -> None:
        try:
            await self.recompute_ranking()
        except RankingCancelled:
            log.info("ranking pass cancelled by the stop")
        except RankingError as error:  # e.g. no page yet, not converged: next time
            log.warning("ranking pass skipped: %s", error)

    def _plan_refreshes(
        self, now: float, cash: np.ndarray, since: float
    ) -> tuple[ScheduleReport, float]:
        """In a thread: the schedule from the metadata, its λ and next refreshes stored, and
        the repository's obsolescence Σ r·λ·(t − last read) over the refreshed pages (eq. 21)
        averaged over [since, now], the quantity the policy keeps at Ω(G) (same λ and r as
        this Ω). An instant's value would not do: it swings with where the instant falls in
        the pages' refresh cycles."""
        md = self.md
        with md.snapshot():  # the crawler commits on the loop meanwhile
            view = md.refresh_view()
            history = md.observation_history()
        ids = view["id"]
        aligned_cash = np.zeros(len(ids))
        held = ids < len(cash)
        aligned_cash[held] = cash[ids[held]]
        report = schedule_report(
            view,
            history,
            now,
            self.config.refresh,
            units=1,
            host_keys=host_keys(md.urls_of(ids.tolist())),
            opic_cash=aligned_cash,
        )
        estimated = ~np.isin(report.method, ["prior", "stored"])
        if estimated.any():
            md.set_scores("change_rate", ids[estimated], report.change_rate[estimated])
        md.set_scores("next_refresh", ids, report.next_refresh)
        for url_id in report.plan.make_dead.tolist():
            failures = self.config.refresh.max_failures
            md.set_type(url_id, PageType.DEAD, f"{failures} failed fetches in a row")
        weight = np.where(np.isfinite(report.interval_units), report.r * report.change_rate, 0.0)
        return report, time_averaged_obsolescence(history, ids, weight, since, now)

    def checkpoint(self) -> None:
        """Save what lives in memory: the clock, OPIC, the figures of ``xyleme status``, the
        crawler's per-host facts of ``xyleme hosts``."""
        self._write_checkpoint(
            self.opic.snapshot(), self.live_status(), self.crawler.host_snapshot()
        )

    def _write_checkpoint(
        self, opic_snapshot: bytes, live: dict[str, Any], hosts: list[dict[str, Any]]
    ) -> None:
        """Write a checkpoint taken on the loop (may run in a thread: it owns its copies)."""
        save_clock(self.md, self.clock)
        OPIC.from_snapshot(opic_snapshot).checkpoint(self.md, self.config.opic.checkpoint_key)
        save_live_status(self.md, live)
        write_host_stats(self.md, hosts, live["at"])

    async def _checkpoint_job(self) -> None:
        """The periodic checkpoint: state captured on the loop in milliseconds (OPIC is fed
        there and is not thread-safe), written in a thread so fetching never waits for it."""
        await asyncio.to_thread(
            self._write_checkpoint,
            self.opic.snapshot(),
            self.live_status(),
            self.crawler.host_snapshot(),
        )

    def live_status(self) -> dict[str, Any]:
        """The in-memory figures ``xyleme status`` shows."""
        crawl = self.crawler.snapshot()
        return {
            "at": self.clock.now(),
            "fetch_rate": crawl["pages_per_s"] if self._fetching else 0.0,
            "queues": {str(level): size for level, size in crawl["queues"].items()},
            "fetched": crawl["pages"],
            "loaded": self.sink.loaded,
            "errors": crawl["errors"],
            "last_refresh": self.passes["refresh"],
            "last_ranking": self.passes["ranking"],
            "refreshes_last_unit": self.refreshes_per_unit[-1] if self.refreshes_per_unit else None,
            **({"recheck": self.recheck_status} if self.recheck_status else {}),
            "policy": {
                "G": self.config.bandwidth.G,
                "theta": self.config.bandwidth.theta,
                "time_unit": self.config.clock.time_unit,
                **{key: self.policy[key] for key in POLICY_FIGURES if key in self.policy},
            },
        }

    async def poll_commands(self) -> None:
        """Run the commands the CLI queued while we hold the repository, and answer them."""
        try:
            pending = commands.take_pending(self.md)
        except StoreError as error:
            log.warning("could not read the command table: %s", error)
            return
        for command_id, name, args in pending:
            try:
                reply = commands.execute(self, name, args)
                if inspect.isawaitable(reply):
                    reply = await reply
            except Exception as error:  # a bad command must not take the daemon down
                log.exception("command %r failed", name)
                reply = Answer(f"{name} failed: {error}", ok=False)
            log.info("command %s: %s", name, reply.message)
            commands.answer(self.md, command_id, reply)

    # ------------------------------------------------------------------ commands

    def add_seeds(self, urls: list[str]) -> Answer:
        """``seed add``: store the seeds like the CLI would, widen the scope, queue them.

        A seed the scope refuses refuses the whole command (nothing is added)."""
        refused = seed_refusals(self.config, urls)
        if refused:
            shown = "; ".join(f"seed {url} refused: {reason}" for url, reason in refused)
            return Answer(f"{shown}. Nothing added", {"refused": dict(refused)}, ok=False)
        reply = commands.RepositoryTarget(self.md).add_seeds(urls)
        self.crawler.scope = self._scope()
        for url in reply.data["added"]:
            self.crawler.submit(url, Level.SCOUTING)
        return reply

    def remove_seeds(self, urls: list[str]) -> Answer:
        """``seed remove``: forget the seeds like the CLI would; the scope follows (a scope
        made of the seeds' hosts narrows). Queued requests stay: their pages are known."""
        reply = commands.RepositoryTarget(self.md).remove_seeds(urls)
        self.crawler.scope = self._scope()
        return reply

    async def compute_ranking(self) -> Answer:
        """``rank compute`` handed over by the CLI: a ranking pass now, with [ranking]."""
        try:
            figures = await self.recompute_ranking()
        except RankingError as error:
            return Answer(f"{error} (no score was written)", ok=False)
        interest = figures["interest_sweeps"]
        return Answer(
            f"ranked {figures['pages']} pages ({figures['xml_pages']} XML) over "
            f"{figures['links']} links by the daemon: importance in "
            f"{figures['importance_sweeps']} sweeps"
            + ("" if interest is None else f", interest in {interest}"),
            figures,
        )

    async def recheck(self, args: dict[str, Any]) -> Answer:
        """``recheck`` handed over by the CLI: start the re-check as a background task.

        The same engine as a direct run (:func:`refresh.recheck.recheck`), its probe sharing
        this daemon's crawler (session, robots.txt, host slots: :meth:`CrawlerProbe.sharing`),
        so it needs fetching to run. The answer comes at once ("started"); progress goes to
        the log and to ``xyleme status``, the summary to the log when it ends. One at a time.
        """
        if self.rechecking is not None and not self.rechecking.done():
            return Answer(
                f"a re-check is already running ({self.recheck_status['line']})", ok=False
            )
        if self._fetching is None or self._fetching.done():
            return Answer("fetching is paused: `xyleme resume` first", ok=False)
        request = RecheckRequest(**args)
        try:
            session, url_ids = await asyncio.to_thread(prepare, self.md, request)
        except NothingToRecheck as error:
            return Answer(str(error), ok=False)
        probe = CrawlerProbe.sharing(self.crawler, method=request.method)
        self._recheck_progress(RecheckProgress(session.n_pages, 0, 0, 0, 0))
        self.rechecking = asyncio.create_task(
            self._run_recheck(request, session, url_ids, probe), name="recheck"
        )
        planned = session.n_pages if request.budget is None else min(request.budget, len(url_ids))
        return Answer(
            f"re-check started by the daemon: {planned} of {session.n_pages} pages in LiveRank "
            f"order {request.strategy!r} ({request.method.upper()}); `xyleme status` follows it",
            {"started": True, "pages": session.n_pages, "planned": planned, **args},
        )

    async def _run_recheck(self, request, session, url_ids, probe: CrawlerProbe) -> None:
        """The background re-check: every answer recorded by the probe, progress kept."""
        step = max(1, min(len(url_ids), request.budget or len(url_ids)) // 20)

        def on_progress(progress: RecheckProgress) -> None:
            self._recheck_progress(progress)
            if progress.fetches % step == 0:
                log.info("re-check: %s", progress_line(progress))

        try:
            async with probe:
                report = await recheck(
                    session,
                    url_ids,
                    probe,
                    budget=request.budget,
                    concurrency=request.concurrency,
                    on_progress=on_progress,
                )
        except Exception:
            self.recheck_status["state"] = "failed"
            log.exception("re-check failed")
            return
        figures = summary(request, report, probe.fetches)
        self.recheck_status = {**self.recheck_status, **figures, "state": "done"}
        log.info(
            "re-check done: %d of %d pages tested, %d alive, %d dead, %d unknown; "
            "fraction alive %.3f%s",
            figures["fetches"],
            figures["pages"],
            figures["alive"],
            figures["dead"],
            figures["unknown"],
            figures["fraction_alive"],
            "" if figures["complete"] else " (budget spent)",
        )

    def _recheck_progress(self, progress: RecheckProgress) -> None:
        self.recheck_status = {
            "state": "running",
            "pages": progress.pages,
            "fetches": progress.fetches,
            "alive": progress.alive,
            "dead": progress.dead,
            "unknown": progress.unknown,
            "fraction_alive": round(progress.fraction_alive, 4),
            "line": progress_line(progress),
        }

    async def cancel_recheck(self) -> None:
        """Stop a running re-check (pause, stop): what it tested is recorded already."""
        if self.rechecking is not None and not self.rechecking.done():
            self.rechecking.cancel()
            await asyncio.gather(self.rechecking, return_exceptions=True)
            self.recheck_status["state"] = "cancelled"
            log.info("re-check cancelled: %s", self.recheck_status["line"])

    async def set_paused(self, paused: bool) -> Answer:
        """``pause`` / ``resume``: stop or restart the workers; the choice survives a restart."""
        self.paused = paused
        if paused:
            await self.cancel_recheck()  # it fetches with the crawler's session
            await self.stop_fetching()
        else:
            self.start_fetching()
        return commands.RepositoryTarget(self.md).set_paused(paused)


def _disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the database's quota) is full."""
    if isinstance(error, StoreFull):
        return True
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(seconds))


def run_daemon(repository: Path, config: Config, **options: Any) -> None:
    """Run a daemon in a fresh event loop until it stops (the ``xyleme run`` command)."""
    asyncio.run(Daemon(repository, config, **options).run())
