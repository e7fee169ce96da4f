"""Crawl any folder served by a plain static server, and measure the crawl against the files.

Serves ``--root`` with ``python -m http.server --bind 127.0.0.1`` in a process of its own
(Content-Types guessed from the suffix, folder listings, a 301 for a folder without its
slash: what a real static server does), crawls it from ``--seed`` with the daemon (in this
process, on a manual clock, no politeness delay on loopback, the scope the seed's folder
unless ``--scope`` says otherwise), and computes the truth from the files on disk
(``xyleme.sitegen.folder``: other parsers than the crawler's). It prints the reach, the
pages missed with the reason the daemon recorded for each, the link matrix's recall and
precision against the true links, the top-20 overlaps of the daemon's importance and
interest with networkx's PageRank and eq. 6–7 (§5.2) on the true matrix, and the rate.

``--url`` crawls a server already running (nginx, Apache httpd, lighttpd serving ``--root``
at that origin) instead: ``--server`` names whose types, index files and listings the truth
models (:mod:`xyleme.sitegen.flavours`), and ``--access-log`` the server's log, whose lines
written during the crawl are counted for requests outside the scope.

``--smoke`` and ``--quick`` crawl a folder they generate (``xyleme.sitegen.realfolder``:
the shapes of mdBook, rustdoc, DocBook HTML, listings and odd file names) when no
``--root`` is given. The last line is JSON.

    python benchmarks/bench_folder.py --root /usr/share/doc/valgrind/html --seed index.html
    python benchmarks/bench_folder.py --root /usr/share/doc --seed valgrind/html/index.html \
        --url http://127.0.0.1:18081 --server nginx --access-log /tmp/nginx-access.log
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import resource
import sys
import tempfile
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from xyleme.sitegen import (
    DaemonCrawl,
    FolderTruth,
    StaticProcess,
    StaticServer,
    crawl_seeds,
    flavour,
    folder_truth,
    importance,
    interest,
    normal,
    parse_types,
    top_overlap,
    write_folder,
)

GENERATED = {"smoke": 1, "quick": 12}
"""Copies of each generated section for ``--smoke`` and ``--quick``."""
CONCURRENCY = 8
_REASON_DETAIL = re.compile(r"'[^']*'|\d+|(?<=out of scope: ).*")
"""What varies within one reason (a count, a segment, the URL), left out of its group."""


def missed_by_reason(truth: FolderTruth, outcome: DaemonCrawl, rejected: dict[str, str]):
    """Why each reachable document was not read, as the daemon recorded it."""
    types = {normal(url): kind for url, kind in outcome.types.items()}
    statuses = {normal(url): status for url, status in outcome.load_status.items()}
    read = {normal(url) for url in outcome.read}
    reasons: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for url in truth.documents:
        if url in read:
            continue
        if url in types:
            reason = f"typed {types[url]}"
            if url in statuses:
                reason += f" ({statuses[url][0]}: {(statuses[url][1] or '')[:60]})"
        elif url in rejected:
            reason = f"rejected: {rejected[url].split(':')[0]}"
        else:
            reason = "never discovered"
        reasons[reason] += 1
        examples.setdefault(reason, url)
    return dict(reasons.most_common()), examples


def measure(
    root: Path,
    seed: str,
    scope: str | None,
    pages: int | None,
    production: list[str] | None = None,
    running: tuple[str, str, Path | None] | None = None,
    refresh: bool = False,
) -> dict:
    """The figures of one crawl of ``root``, served by ``http.server``, given ``production``
    options by :mod:`xyleme.sitegen.webserver`, or given ``running`` (its origin, its
    flavour's name, its access log or None) by a server already running, ``production``
    then naming what its operator set (``--charset``, ``--type``) for the truth."""
    options = _options(production or [])
    origin, kind, log = running or ("", "http.server", None)
    process = nullcontext() if running else StaticProcess(root, production)
    log_start = log.stat().st_size if log is not None else 0
    with process as served, tempfile.TemporaryDirectory() as folder:
        origin = origin.rstrip("/") or served.origin
        server = StaticServer(root, origin, options.type, options.charset, flavour(kind))
        seed_url = server.url_of(seed)
        scope_url = server.url_of(scope) if scope is not None else seed_url.rsplit("/", 1)[0]
        scope_url = scope_url.rstrip("/") + "/"
        started = time.perf_counter()
        truth = folder_truth(server, [seed_url], [scope_url])
        truth_s = time.perf_counter() - started
        outcome = asyncio.run(
            crawl_seeds(
                [seed_url],
                [scope_url],
                Path(folder) / "repo",
                concurrency=CONCURRENCY,
                page_budget=pages,
                refresh=refresh,
            )
        )
        rejected = _rejected(Path(folder) / "repo")
    result = figures(truth, outcome, rejected, truth_s, seed_url, scope_url, pages)
    name = kind if running or production is None else "webserver"
    result["server"] = " ".join([name, *(production or [])])
    if refresh:
        result["refresh"] = outcome.refresh
    if log is not None:
        result["out_of_scope_fetches"] = out_of_scope_requests(log, log_start, scope_url)
    result["same_file_urls"] = same_file_urls(server, outcome)
    # ru_maxrss is in KiB on Linux: the benchmark's process, the daemon and the truth in it.
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return result


def out_of_scope_requests(log: Path, start: int, scope: str) -> int:
    """Requests in a server's access log (combined format) after byte ``start`` whose path
    is outside ``scope``'s but ``/robots.txt`` (the server sees all the crawler asked)."""
    prefix = "http://h/" + normal(scope).split("/", 3)[3]
    with log.open("rb") as file:
        file.seek(start)
        paths = re.findall(rb'"[A-Z]+ (/[^ "]*)', file.read())
    urls = [normal(f"http://h{path.decode('latin-1')}") for path in paths]
    return sum(not url.startswith(prefix) and url != "http://h/robots.txt" for url in urls)


def _options(production: list[str]) -> argparse.Namespace:
    """The production server's options, read as it reads them (its types and charset)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--charset")
    parser.add_argument("--type", action="append", default=[])
    options = parser.parse_args(production)
    options.type = parse_types(options.type)
    return options


def same_file_urls(server: StaticServer, outcome: DaemonCrawl) -> int:
    """Pages read under a second URL of a file already read under another (``dir/`` and
    ``dir/index.html``, a symlink): each is a page of its own, as URLs are (ARCHITECTURE
    "What a page is"), counted so a real tree's duplicates are seen."""
    files = set()
    for url in outcome.read:
        answer = server.answer(normal(url))
        target = answer.file or answer.listing
        if target is not None:
            files.add(target.resolve())
    return len(outcome.read) - len(files)


def _rejected(repository: Path) -> dict[str, str]:
    from metadata import Metadata

    with Metadata.open(repository / "metadata.db") as md:
        return {normal(row.url): row.reason for row in md.rejected(limit=1_000_000)}


def figures(
    truth: FolderTruth,
    outcome: DaemonCrawl,
    rejected: dict[str, str],
    truth_s: float,
    seed: str,
    scope: str,
    budget: int | None = None,
) -> dict:
    """The figures of the crawl against the truth; under a ``budget`` smaller than the
    reachable set, reach counts against the budget and the links and rankings are compared
    on the true graph between the documents read."""
    reachable = len(truth.documents)
    read = {normal(url) for url in outcome.read} & truth.position().keys()
    bound = budget is not None and budget < reachable
    if bound:
        truth = truth.within(read)
    n = len(truth.documents)
    position = truth.position()
    true_edges = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}
    recorded = {(normal(s), normal(d)) for s, d in outcome.matrix_edges}
    if bound:  # the matrix also holds the links to pages the budget left unread
        recorded = {(s, d) for s, d in recorded if s in position and d in position}
    recorded_between = {(s, d) for s, d in recorded if s in position and d in position}
    reasons, examples = missed_by_reason(truth, outcome, rejected)
    result: dict = {
        "seed": seed,
        "scope": scope,
        "pages_reachable": reachable,
        "xml_reachable": int(sum(truth.is_xml)),
        "pages_read": len(read),
        "reach": round(len(read) / min(reachable, budget or reachable), 4) if n else None,
        "edges_true": len(true_edges),
        "edges_recorded": len(recorded),
        "edge_recall": round(len(recorded & true_edges) / len(true_edges), 4)
        if true_edges
        else None,
        "edge_precision": round(len(recorded_between & true_edges) / len(recorded), 4)
        if recorded
        else None,
        "edges_missed_examples": sorted(true_edges - recorded)[:5],
        "edges_extra_examples": sorted(recorded - true_edges)[:5],
        "missed_by_reason": reasons,
        "rejected_by_reason": dict(
            Counter(_REASON_DETAIL.sub("…", reason) for reason in rejected.values()).most_common()
        ),
        "missed_examples": examples,
        "extra_read": len({normal(url) for url in outcome.read} - position.keys()),
        "extra_read_examples": sorted({normal(u) for u in outcome.read} - position.keys())[:5],
        "scripted_pages": truth.scripted,
        "truth_s": round(truth_s, 2),
        "daemon_crawl_s": round(outcome.crawl_seconds, 2),
        "daemon_total_s": round(outcome.seconds, 2),
        "daemon_pages_per_s": round(len(outcome.read) / outcome.crawl_seconds, 1)
        if outcome.crawl_seconds
        else None,
        "notes": {"reach": f"against the budget of {budget} pages"} if bound else {},
    }
    scores = _scores(outcome.importance, position if bound else None)
    reference = dict(zip(truth.documents, importance(n, truth.edges).tolist(), strict=True))
    result["importance_top20_overlap"] = top_overlap(reference, scores) if n else None
    if any(truth.is_xml):
        inverse = interest(n, truth.edges, truth.is_xml).tolist()
        scores = _scores(outcome.interest, position if bound else None)
        result["interest_top20_overlap"] = top_overlap(
            dict(zip(truth.documents, inverse, strict=True)), scores
        )
    else:
        result["interest_top20_overlap"] = None
        result["notes"]["interest_top20_overlap"] = "no XML page reachable: E' is empty"
    return result


def _scores(scores: dict[str, float], among: dict[str, int] | None) -> dict[str, float]:
    """The daemon's scores by normal URL (only of the pages ``among``, when given)."""
    found = {normal(url): value for url, value in scores.items()}
    return found if among is None else {url: v for url, v in found.items() if url in among}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="the folder to serve")
    parser.add_argument("--seed", default="index.html", help="the seed's path below --root")
    parser.add_argument("--scope", help="the scope's path prefix below --root (default: the "
                        "seed's folder)")  # fmt: skip
    parser.add_argument("--pages", type=int, help="at most this many pages (a host budget)")
    parser.add_argument(
        "--production",
        action="store_true",
        help="serve with gzip, ETags and 304s (xyleme.sitegen.webserver) instead of http.server",
    )
    parser.add_argument("--charset", help="with --production or --url: the charset of "
                        "text/html")  # fmt: skip
    parser.add_argument("--type", action="append", default=[], metavar=".SUFFIX=TYPE",
                        help="with --production or --url: a Content-Type by suffix")  # fmt: skip
    parser.add_argument("--url", help="the origin of a running server serving --root "
                        "(http://127.0.0.1:18081): crawl it instead of starting one")  # fmt: skip
    parser.add_argument("--server", default="nginx", choices=["nginx", "apache", "lighttpd"],
                        help="with --url: whose answers the truth models")  # fmt: skip
    parser.add_argument("--access-log", type=Path, help="with --url: the server's access log")
    parser.add_argument("--refresh", action="store_true",
                        help="then read every document again (conditional GETs)")  # fmt: skip
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="a generated folder, under 60 s")
    group.add_argument("--smoke", action="store_true", help="a small generated folder")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as generated:
        root = args.root
        if root is None:
            root = Path(generated)
            write_folder(root, copies=GENERATED["smoke" if args.smoke else "quick"])
            args.seed = "index.html"
        if not root.is_dir():
            parser.error(f"--root {root} is not a folder")
        if args.url and args.production:
            parser.error("--url crawls a running server; --production starts one")
        production = None
        if args.production or args.url:  # --url: the options the running server was given
            production = [*(["--charset", args.charset] if args.charset else [])]
            production += [item for pair in args.type for item in ("--type", pair)]
            try:
                parse_types(args.type)
            except ValueError as error:
                parser.error(str(error))
        elif args.charset or args.type:
            parser.error("--charset and --type need --production or --url")
        running = (args.url, args.server, args.access_log) if args.url else None
        result = measure(
            root.resolve(), args.seed, args.scope, args.pages, production, running, args.refresh
        )
    print(
        f"{result['seed']}: {result['pages_read']} of {result['pages_reachable']} reachable "
        f"documents read (reach {result['reach']}); {result['daemon_pages_per_s']} pages/s"
    )
    print(
        f"links: {result['edges_recorded']} recorded, {result['edges_true']} true, recall "
        f"{result['edge_recall']}, precision {result['edge_precision']}"
    )
    print(f"missed: {result['missed_by_reason'] or 'nothing'}")
    print(
        f"top-20 overlaps: importance {result['importance_top20_overlap']}, "
        f"interest {result['interest_top20_overlap']}"
    )
    if "refresh" in result:
        print(f"second pass: {result['refresh']}")
    if "out_of_scope_fetches" in result:
        print(f"out-of-scope requests in the server's log: {result['out_of_scope_fetches']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
