"""Crawl a served realistic site with the daemon, and read back what it made of it.

The daemon runs in this process on a manual clock (as in the daemon's end-to-end tests):
its crawler reads the site from the seed until nothing is left to fetch, the loader stores
the XML, then one ranking pass runs. What it stored is read back by URL, so the tests and
``benchmarks/bench_site.py`` compare it with the ground truth by URL.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from aiohttp.abc import AbstractResolver

from metadata import PAGE_TYPE_CODE, ManualClock, Metadata, PageType
from xyleme.cli import create_repository
from xyleme.commands import RepositoryTarget
from xyleme.config import Config
from xyleme.crawler import Level
from xyleme.daemon import Daemon
from xyleme.jobs import queue_unread
from xyleme.sitegen.rankings import importance, interest
from xyleme.sitegen.server import ServedSite

EPOCH = 1_700_000_000.0
"""The manual clock's start (any fixed date: the site does not change)."""


@dataclass
class DaemonCrawl:
    """What the daemon made of the site."""

    read: dict[str, bool] = field(default_factory=dict)
    """URL → is XML, for every page read as a document (type HTML or XML)."""
    types: dict[str, str] = field(default_factory=dict)
    """URL → the metadata's page type, for every URL it knows."""
    edges: set[tuple[str, str]] = field(default_factory=set)
    """Link-Data as stored: (page URL, child URL), every child a page named."""
    matrix_pages: set[str] = field(default_factory=set)
    """The pages of the rankings' link matrix (§5)."""
    matrix_edges: set[tuple[str, str]] = field(default_factory=set)
    """The rankings' link matrix: (source URL, target URL)."""
    load_status: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """URL → the loader's status and its detail, for every XML page it saw."""
    importance: dict[str, float] = field(default_factory=dict)
    interest: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    """Real seconds for the whole job: crawl, load, store and one ranking pass."""
    crawl_seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU seconds of this process (every thread) over ``seconds``: the daemon's own work,
    without the site's process and the archive's writer process."""
    rank_figures: dict = field(default_factory=dict)
    refresh: dict[str, int] = field(default_factory=dict)
    """After a second pass over every document read (``refresh=True``): how many answered
    304, 200 with the same body (no change), 200 with another (a change), or otherwise."""


def scope_for(served: ServedSite) -> list[str]:
    """The ``[crawler] scope`` naming the site's two origins and nothing else."""
    return [f"{origin}/" for origin in served.site.scope_origins]


async def crawl_with_daemon(
    served: ServedSite, repository: Path, *, concurrency: int = 8
) -> DaemonCrawl:
    """Seed an empty repository with the site's seeds, crawl it whole, rank it."""
    return await crawl_seeds(
        served.site.seeds,
        scope_for(served),
        repository,
        resolver=served.resolver(),
        concurrency=concurrency,
    )


async def crawl_seeds(
    seeds: list[str],
    scope: list[str],
    repository: Path,
    *,
    resolver: AbstractResolver | None = None,
    concurrency: int = 8,
    page_budget: int | None = None,
    refresh: bool = False,
) -> DaemonCrawl:
    """Seed an empty repository, crawl from ``seeds`` within ``scope`` until nothing is left
    (or ``page_budget`` pages a host), rank, read back what the daemon made of it and, with
    ``refresh``, read every document again an hour later (conditional GETs, as a refresh
    pass does) and count what came back."""
    create_repository(repository)
    with Metadata.open(repository / "metadata.db") as md:
        RepositoryTarget(md).add_seeds(seeds)
    config = _config(Config(), scope, concurrency)
    if page_budget is not None:
        config = config.replace("crawler", host_page_budget=page_budget)
    clock = ManualClock(EPOCH)
    daemon = Daemon(repository, config, clock=clock, resolver=resolver)
    daemon.open()
    gc.freeze()  # what start-up built is out of the cyclic GC's sight, as in Daemon.run
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        queue_unread(daemon.md, daemon.crawler)
        await daemon.crawler.run()
        crawl_seconds = time.perf_counter() - start
        rank_figures = await daemon.ranking.run()
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
        outcome = read_crawl(daemon.md, lambda url: daemon.crawler.scope.refusal(url) is None)
        outcome.crawl_seconds, outcome.rank_figures = crawl_seconds, rank_figures
        outcome.seconds, outcome.cpu_seconds = seconds, cpu_seconds
        if refresh:
            clock.advance(3600.0)
            outcome.refresh = await _refresh_all(daemon, list(outcome.read))
    finally:
        gc.unfreeze()
        daemon.close()
    return outcome


async def _refresh_all(daemon: Daemon, urls: list[str]) -> dict[str, int]:
    """Every page of ``urls`` read again at the refresh level; what each fetch recorded."""
    ids = [daemon.md.id_for(url, create=False) for url in urls]
    for url_id in ids:
        daemon.crawler.submit(url_id, Level.REFRESH)
    await daemon.crawler.run()
    counts = {"304": 0, "200 same": 0, "200 changed": 0, "other": 0}
    for url_id in ids:
        last = daemon.md.observations(url_id)[-1]
        status = daemon.md.page(url_id).status
        if status == 304 and last.changed is False:
            counts["304"] += 1
        elif status == 200 and last.changed is not None:
            counts["200 changed" if last.changed else "200 same"] += 1
        else:
            counts["other"] += 1
    return counts


def _config(config: Config, scope: list[str], concurrency: int) -> Config:
    """The site's scope; no politeness delay on loopback; ``concurrency`` requests in flight
    in all (the site's two host names are one server: the bare loop gets the same number);
    scouting deep enough for any path of the site."""
    return config.replace(
        "crawler",
        scope=scope,
        min_delay=0.0,
        max_crawl_delay=0.0,
        concurrency=concurrency,
        per_host_concurrency=concurrency,
        max_scout_depth=64,
    )


def read_crawl(md: Metadata, in_scope: Callable[[str], bool]) -> DaemonCrawl:
    """What the store ``md`` holds of a crawl, by URL: every page's type, the documents read,
    the Link-Data, the rankings' link matrix within ``in_scope``, the loader's statuses and
    the stored scores (the timings left at zero). Public so that a crawl made by other
    processes (``xyleme run --workers``) is read back as this module's daemon's is."""
    outcome = DaemonCrawl()
    view = md.refresh_view()
    ids = view["id"].tolist()
    urls = dict(zip(ids, md.urls_of(ids), strict=True))
    names = {code: page_type.value for page_type, code in PAGE_TYPE_CODE.items()}
    documents = {PAGE_TYPE_CODE[PageType.HTML], PAGE_TYPE_CODE[PageType.XML]}
    for url_id, code in zip(ids, view["type"].tolist(), strict=True):
        outcome.types[urls[url_id]] = names[code]
        if code in documents:
            outcome.read[urls[url_id]] = code == PAGE_TYPE_CODE[PageType.XML]
    for src, dst in md.export_links():
        outcome.edges.update(
            (urls[s], urls[d]) for s, d in zip(src.tolist(), dst.tolist(), strict=True)
        )
    _read_matrix(md, urls, outcome, in_scope)
    for url_id, (status, detail) in md.statuses(ids).items():
        outcome.load_status[urls[url_id]] = (status.value, detail)
    for name, into in (("importance", outcome.importance), ("interest", outcome.interest)):
        score_ids, values = md.scores(name)
        into.update(zip((urls[i] for i in score_ids.tolist()), values.tolist(), strict=True))
    return outcome


def _read_matrix(
    md: Metadata, urls: dict[int, str], outcome: DaemonCrawl, in_scope: Callable[[str], bool]
) -> None:
    """The matrix the ranking pass reads (``Metadata.link_matrix``, issue 16's rule, with the
    crawl's scope as the daemon gives it)."""
    with md.link_matrix(in_scope=in_scope) as matrix:
        ids = matrix.ids.tolist()
        outcome.matrix_pages = {urls[url_id] for url_id in ids}
        for src, dst in matrix.edges():
            outcome.matrix_edges.update(
                (urls[ids[s]], urls[ids[d]])
                for s, d in zip(src.tolist(), dst.tolist(), strict=True)
            )


def truth_overlaps(
    outcome: DaemonCrawl,
    documents: list[str],
    edges: list[tuple[int, int]],
    is_xml: list[bool],
    spelled: Callable[[str], str] = str,
) -> dict[str, int]:
    """How many of the crawl's top 20 pages by importance and by interest are in the top 20
    of the independent computation on the true document graph (``documents``, ``edges``
    between their positions, ``is_xml``); ``spelled`` writes a crawled URL as the truth
    does (:func:`xyleme.sitegen.folder.normal` for a folder's)."""
    n = len(documents)
    references = {
        "importance": importance(n, edges),
        "interest": interest(n, edges, is_xml),
    }
    found = {"importance": outcome.importance, "interest": outcome.interest}
    return {
        name: top_overlap(
            dict(zip(documents, reference.tolist(), strict=True)),
            {spelled(url): value for url, value in found[name].items()},
        )
        for name, reference in references.items()
    }


def top_overlap(reference: dict[str, float], candidate: dict[str, float], k: int = 20) -> int:
    """How many of ``candidate``'s top ``k`` pages are in ``reference``'s top ``k``.

    Ties count as equal: a candidate page is in the reference's top ``k`` when its reference
    score reaches the ``k``-th highest (within 1e-6 relative), since pages the link matrix
    makes interchangeable (dangling XML pages of one section, say) have equal scores and any
    order among them is right.
    """
    if not candidate:
        return 0
    kth = np.sort(np.fromiter(reference.values(), float))[::-1][min(k, len(reference)) - 1]
    chosen = sorted(candidate, key=lambda url: (-candidate[url], url))[:k]
    return sum(bool(reference.get(url, -1.0) >= kth * (1 - 1e-6)) for url in chosen)
