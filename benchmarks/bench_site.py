"""Acquire the realistic site whole with the daemon, and measure it against the truth.

Serves the generated documentation site (``xyleme.sitegen``, docs/realsite.md) on 127.0.0.1
from a process of its own (``RealSiteProcess``: a real site is not inside the crawler's
process; until issue 18's pass the server ran on this process's event loop and took half of
the daemon's loop time, and the bare loop's too), crawls it with the daemon in this process
(the whole job: fetch, load, store, one ranking pass), then runs a bare aiohttp + lxml loop
over the same documents in the same run (fetch and parse each, same concurrency). It reports
the reach (documents read / documents a faithful crawl reaches), both rates, the top-20
overlap of the daemon's importance and interest with networkx's PageRank and eq. 6–7
computed with scipy on the site's true link matrix (ties counted as equal), and the requests
the site's access log shows outside the crawl's scope.

Like with like: both sides have the same 8 requests in flight to the site's one server and
no politeness delay (a loopback site of our own; the daemon's per-host delay is a setting,
``min_delay = 0`` here, and it is honoured whenever it is set). The bare loop GETs the
documents a faithful crawl reads (1,420 with ``--quick``); the daemon makes the requests a
crawl must (1,440–1,445: robots.txt, the sitemaps, redirects and 404s too). The daemon's
start-up heap is frozen out of the garbage collector's sight, as ``Daemon.run`` does.

Issue 16's targets: reach ≥ 0.99, both overlaps ≥ 18, daemon ≥ 0.5 × bare, 0 out of scope.

Run ``python benchmarks/bench_site.py`` (4,000 documents), ``--quick`` (1,500) or
``--smoke`` (300). The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from xyleme.sitegen import (
    RealSiteProcess,
    ServedSite,
    SiteSpec,
    crawl_with_daemon,
    ground_truth,
    importance,
    interest,
    top_overlap,
)

SIZES = {"smoke": 300, "quick": 1500, "full": 4000}
CONCURRENCY = 8
"""Requests in flight to the site's one server, for the daemon (in all, and per host: its two
host names are one server) and the bare loop alike; no politeness delay on either side."""


async def bare_loop(served: ServedSite, urls: list[str]) -> float:
    """Fetch and parse every URL (HTML by lxml's HTML parser, XML by its XML parser without
    DTDs or entities); the seconds it took."""
    xml_parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    html_parser = etree.HTMLParser(recover=True)
    limit = asyncio.Semaphore(CONCURRENCY)
    connector = aiohttp.TCPConnector(resolver=served.resolver(), limit=CONCURRENCY)

    async def one(session: aiohttp.ClientSession, url: str) -> None:
        async with limit, session.get(url) as response:
            body = await response.read()
            xml = "xml" in (response.content_type or "")
        etree.fromstring(body, xml_parser if xml else html_parser)

    start = time.perf_counter()
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(one(session, url) for url in urls))
    return time.perf_counter() - start


async def measure(size: int, seed: int) -> dict:
    async with RealSiteProcess(SiteSpec(seed=seed, size=size)) as served:
        truth = ground_truth(served.site)
        with tempfile.TemporaryDirectory() as folder:
            outcome = await crawl_with_daemon(
                served, Path(folder) / "repo", concurrency=CONCURRENCY
            )
        out_of_scope = served.out_of_scope()
        bare_seconds = await bare_loop(served, truth.documents)
    n = len(truth.documents)
    reference_importance = dict(
        zip(truth.documents, importance(n, truth.edges).tolist(), strict=True)
    )
    reference_interest = dict(
        zip(truth.documents, interest(n, truth.edges, truth.is_xml).tolist(), strict=True)
    )
    read = len(set(truth.documents) & outcome.read.keys())
    daemon_rate = read / outcome.seconds
    bare_rate = n / bare_seconds
    return {
        "size": size,
        "seed": seed,
        "pages_reachable": n,
        "xml_reachable": int(sum(truth.is_xml)),
        "true_links": len(truth.edges),
        "pages_read": read,
        "reach": round(read / n, 4),
        "daemon_crawl_s": round(outcome.crawl_seconds, 2),
        "daemon_total_s": round(outcome.seconds, 2),
        "bare_s": round(bare_seconds, 2),
        "daemon_pages_per_s": round(daemon_rate, 1),
        "bare_pages_per_s": round(bare_rate, 1),
        "daemon_over_bare": round(daemon_rate / bare_rate, 3),
        "daemon_cpu_ms_per_page": round(outcome.cpu_seconds * 1000 / max(read, 1), 3),
        "importance_top20_overlap": top_overlap(reference_importance, outcome.importance),
        "interest_top20_overlap": top_overlap(reference_interest, outcome.interest),
        "out_of_scope_fetches": len(out_of_scope),
        "out_of_scope_paths": sorted({f"{a.host}{a.path}" for a in out_of_scope})[:10],
        "stored_links": len(outcome.edges),
        "matrix_pages": len(outcome.matrix_pages),
        "matrix_links": len(outcome.matrix_edges),
        "ranked_pages": len(outcome.importance),
        "daemon_rank_s": round(outcome.seconds - outcome.crawl_seconds, 2),
        "importance_sweeps": outcome.rank_figures.get("importance_sweeps"),
        "interest_sweeps": outcome.rank_figures.get("interest_sweeps"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="1,500 documents (under 60 s)")
    group.add_argument("--smoke", action="store_true", help="300 documents (a few seconds)")
    parser.add_argument("--seed", type=int, default=16, help="the site's seed")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    size = SIZES["smoke" if args.smoke else "quick" if args.quick else "full"]
    figures = asyncio.run(measure(size, args.seed))
    targets = (
        ("reach", figures["reach"], ">= 0.99", figures["reach"] >= 0.99),
        ("importance overlap", figures["importance_top20_overlap"], ">= 18",
         figures["importance_top20_overlap"] >= 18),
        ("interest overlap", figures["interest_top20_overlap"], ">= 18",
         figures["interest_top20_overlap"] >= 18),
        ("daemon / bare", figures["daemon_over_bare"], ">= 0.5",
         figures["daemon_over_bare"] >= 0.5),
        ("out-of-scope fetches", figures["out_of_scope_fetches"], "== 0",
         figures["out_of_scope_fetches"] == 0),
    )  # fmt: skip
    print(
        f"realistic site: {figures['pages_reachable']} documents reachable "
        f"({figures['xml_reachable']} XML), {figures['true_links']} true links"
    )
    print(
        f"daemon: {figures['pages_read']} read in {figures['daemon_total_s']} s "
        f"(crawl {figures['daemon_crawl_s']} s) = {figures['daemon_pages_per_s']} pages/s; "
        f"bare aiohttp + lxml: {figures['bare_pages_per_s']} pages/s; "
        f"daemon CPU {figures['daemon_cpu_ms_per_page']} ms a page"
    )
    for name, value, target, met in targets:
        print(f"  {name:<22} {value!s:>8}  target {target:<8} {'met' if met else 'NOT MET'}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
