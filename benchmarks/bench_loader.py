"""Benchmark of the XML loader against a plain ``lxml.etree.fromstring`` + ``xpath`` loop.

Two figures, each beside its peer measured in the same run:

* documents per second over the XML documents of a simulated web (``xyleme.simweb``:
  catalogues with a DOCTYPE, an external entity and a style sheet, records with an XML Schema
  and XInclude, RSS and Atom feeds): the loader does the whole job (safe parse, DTD and schema
  validation, version stored on disk, links extracted and written to the metadata manager's
  SQLite database); the peer only parses each document and runs one XPath expression that
  finds its links;
* peak memory while loading one large document (200 MB; 50 MB with ``--quick``) streamed from
  a spooled file, measured in a fresh child process as the growth of its peak RSS (VmHWM)
  over its RSS just before the load.

The whole job's cost per document is broken into its parts (issue 18), each timed on its own
over the same corpus: ``parse_validate`` (lxml's own work: the safe parse with its DTD and
entities through the resolver, DTD validation, XML Schema validation), ``links`` (the rest of
``parse_tree``: finding and resolving the links, the entity and depth limits, the loader's
Python around the parse), ``compress`` (zstd), ``version_rows`` (MD5 and the version's rows
in SQLite) and ``metadata`` (the rest of the whole job: URL-Ids of the links, Link-Data,
Status-Data, types, the batch's reads). ``metadata_us`` splits that rest by call, in one
more run (``benchmarks/loader_calls.py``): the links' URL-Ids (Map-Data's ``ids_for``), the
batch's reads, Link-Data rows, Status-Data and type rows, the metadata commit, and the cyclic
garbage collector (on in the whole job, off while the parts are timed); what none of them
holds is the loader's own Python between the calls. Every loader is warmed up first on one
document per host, root element and schema locations at other URLs (catalogs read, schemas
compiled), as a running daemon's is. Beside it,
``daemon_pages_per_s``: the daemon run briefly against a simulated web on this machine, as
``bench_daemon.py`` does. Targets: the whole job at least 3x the daemon's fetch rate, and
everything but ``parse_validate`` at most 1x it.

Run: ``python benchmarks/bench_loader.py [--quick | --smoke] [--docs N] [--batch B]``. The
last line printed is a JSON object with ``docs_per_s``, ``plain_docs_per_s``, ``ratio``,
``big_doc_peak_mb``, ``parts_us``, ``metadata_us``, ``not_lxml_over_lxml``,
``daemon_pages_per_s`` and ``job_over_daemon``. ``docs_per_s`` loads ``B`` documents per
``Loader.load_many`` call (the crawler's batches); ``single_docs_per_s`` one per
``Loader.load`` call. ``--smoke`` (a few seconds) uses 100 documents, one run of each, a 2 MB
large document and a 3 s daemon.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import re
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.loader_calls import metered_run
from loader import Loader, LoaderSettings, LoadOutcome, Validity, md5_of, parse_tree, safe_parser
from metadata import ManualClock, Metadata, MetadataSettings, NewVersion

PLAIN_XPATH = "//@href | //@*[local-name()='href'] | //link/text()"
_ROOT = re.compile(rb"<([A-Za-z_][\w:.-]*)")
_SCHEMAS = re.compile(rb"[sS]chemaLocation\s*=\s*[\"']([^\"']*)")


class NoFetcher:
    """Every dependency is delivered before timing: nothing may be requested."""

    def request(self, url: str, referrer_id: int) -> None:
        raise AssertionError(f"unexpected dependency request for {url}")


@dataclass
class Corpus:
    """XML documents of a simulated web, and the DTDs, entities and schemas they need."""

    documents: list[tuple[str, bytes]]
    dependencies: list[tuple[str, bytes]]


def simweb_corpus(count: int, seed: int = 5) -> Corpus:
    """The first ``count`` XML documents (data, catalogues, feeds) of a simulated web."""
    # imported here so the child process measuring memory does not carry simweb and numpy
    from xyleme.simweb import (
        DTD_PATH,
        ENTITY_PATH,
        SCHEMA_PATH,
        Kind,
        Renderer,
        SimWeb,
        SimWebSettings,
    )

    web = SimWeb(SimWebSettings(hosts=20, pages=count * 6, seed=seed).without_faults())
    render = Renderer(web)
    kinds = web.structure.kind.tolist()
    xml = [page for page, kind in enumerate(kinds) if kind != Kind.HTML][:count]
    documents = [(web.url(page), render.page(page, 0)) for page in xml]
    dependencies = []
    for host in range(len(web.host_names)):
        base = web.host_url(host)
        dependencies += [
            (base + DTD_PATH, render.dtd()),
            (base + ENTITY_PATH, render.entity(host)),
            (base + SCHEMA_PATH, render.schema()),
        ]
    return Corpus(documents, dependencies)


def plain_loop(documents: list[tuple[str, bytes]]) -> float:
    """The peer: parse each document and find its links with one XPath expression."""
    parser = etree.XMLParser(resolve_entities=False)  # ``&notice;`` stays unexpanded
    started = time.process_time()
    found = 0
    for _, body in documents:
        found += len(etree.fromstring(body, parser).xpath(PLAIN_XPATH))
    assert found > 0
    return time.process_time() - started


def open_loader(
    folder: Path,
    dependencies: list[tuple[str, bytes]],
    settings: LoaderSettings | None = None,
    metadata_settings: MetadataSettings | None = None,
    warm: list[tuple[str, bytes]] | None = None,
) -> tuple[Loader, Metadata]:
    """A loader on a fresh repository, with the corpus's dependencies already delivered
    (and warmed up on ``warm``'s hosts and kinds, see :func:`warm_up`)."""
    folder.mkdir(parents=True)
    metadata = Metadata.create(
        folder / "metadata.db", clock=ManualClock(0.0), settings=metadata_settings
    )
    loader = Loader(folder / "documents", metadata, NoFetcher(), ManualClock(0.0), settings)
    for url, body in dependencies:
        loader.load(metadata.id_for(url), url, body, {"Content-Type": "application/xml-dtd"}, 0.0)
    if warm:
        warm_up(loader, metadata, warm)
    return loader, metadata


def warm_up(loader: Loader, metadata: Metadata, documents: list[tuple[str, bytes]]) -> None:
    """Load one document of each host, root element and schema locations at another URL
    first, so the timed loads find the loader as a running daemon's is: its catalogs read,
    its schemas compiled (~17 ms for the quick corpus, once per loader)."""
    first: dict[tuple, tuple[str, bytes]] = {}
    for url, body in documents:
        root = _ROOT.search(body)
        kind = (root.group(1) if root else b"", *_SCHEMAS.findall(body))
        first.setdefault((url.split("/")[2], kind), (url, body))
    for url, body in first.values():
        warm = f"{url}?warm-up"
        loader.load(metadata.id_for(warm), warm, body, {"Content-Type": "application/xml"}, 0.5)


def loader_loop(
    corpus: Corpus, folder: Path, batch: int, metered: Callable[[Loader], None] | None = None
) -> tuple[float, float]:
    """The whole job: parse, validate, store a version, write links to the metadata.

    ``batch`` documents go to ``Loader.load_many`` at a time (1: ``Loader.load``, each
    document then commits on its own). Returns CPU seconds and wall-clock seconds (the
    latter includes waiting for the disk).
    """
    loader, metadata = open_loader(folder, corpus.dependencies, warm=corpus.documents)
    if metered is not None:
        metered(loader)
    documents = corpus.documents
    ids = metadata.ids_for([url for url, _ in documents])
    headers = {"Content-Type": "application/xml"}
    fetched = [(i, url, body, headers, 1.0) for i, (url, body) in zip(ids, documents, strict=True)]
    started, wall = time.process_time(), time.perf_counter()
    if batch == 1:
        results = [loader.load(*item) for item in fetched]
    else:
        results = []
        for start in range(0, len(fetched), batch):
            results += loader.load_many(fetched[start : start + batch])
    elapsed, wall = time.process_time() - started, time.perf_counter() - wall
    for result in results:
        assert result.outcome is LoadOutcome.STORED, result.reason
    metadata.close()
    return elapsed, wall


def parse_loop(corpus: Corpus, folder: Path) -> float:
    """The loader's parsing alone: safe parse, DTD validation, link extraction."""
    loader, metadata = open_loader(folder, corpus.dependencies, warm=corpus.documents)
    started = time.process_time()
    for url, body in corpus.documents:
        parsed = parse_tree(body, url, None, loader.settings, loader.resolver())
        assert parsed.tree is not None
    elapsed = time.process_time() - started
    metadata.close()
    return elapsed


def lxml_parse(body: bytes, url: str, resolver) -> etree._Element:
    """lxml's own part of the loader's parse: the safe parser with its DTD and entities
    through the resolver, validating when there is a DOCTYPE (an invalid document parsed
    again without validation, as the loader does)."""
    validate = body.find(b"<!DOCTYPE", 0, 1 << 20) != -1
    try:
        return etree.fromstring(body, safe_parser(resolver, validate=validate), base_url=url)
    except etree.XMLSyntaxError:
        return etree.fromstring(body, safe_parser(resolver), base_url=url)


def job_parts(corpus: Corpus, folder: Path) -> dict[str, float]:
    """CPU seconds of each part of the job over the corpus, each part timed on its own.

    ``metadata`` is left to the caller: the whole job less the other parts.
    """
    loader, metadata = open_loader(folder, corpus.dependencies, warm=corpus.documents)
    settings = loader.settings
    documents = corpus.documents
    lxml_alone = whole_parse = 0.0
    parsed = []
    gc.disable()  # a collection in one part's timing would charge it with all the trees
    try:
        for url, body in documents:
            lxml_parse(body, url, loader.resolver())  # warm: both timings below see warm caches
            resolver = loader.resolver()
            started = time.process_time()
            lxml_parse(body, url, resolver)
            middle = time.process_time()
            parsed.append(parse_tree(body, url, None, settings, loader.resolver()))
            ended = time.process_time()
            lxml_alone += middle - started
            whole_parse += ended - middle
    finally:
        gc.enable()
    links = max(0.0, whole_parse - lxml_alone)  # noise could make a tiny part negative
    started = time.process_time()
    for document in parsed:
        loader._check_schema(document)  # the part of the whole job that checks schemas
    schemas = time.process_time() - started
    repository = loader.repository
    started = time.process_time()
    for url_id, (_, body) in enumerate(documents, 1):
        repository._encode(url_id, "", body, len(body))  # zstd, as the job stores bodies
    compress = time.process_time() - started
    raw = Loader(folder / "raw", metadata, NoFetcher(), ManualClock(0.0))
    raw.repository.compress = False
    ids = metadata.ids_for([url for url, _ in documents])
    started = time.process_time()
    versions = [
        NewVersion(i, url, body, md5_of(body), 1.0, Validity())
        for i, (url, body) in zip(ids, documents, strict=True)
    ]
    for start in range(0, len(versions), 100):
        raw.repository.store_many(versions[start : start + 100])
    rows = time.process_time() - started
    metadata.close()
    return {
        "parse_validate": lxml_alone + schemas,
        "links": links,
        "compress": compress,
        "version_rows": rows,
    }


def daemon_pages_per_s(seconds: float, pages: int) -> tuple[float | None, str | None]:
    """Pages per second the daemon fetches (and loads) against a simulated web, on this
    machine now: ``bench_daemon.py``'s soak, run briefly. None, with the soak's reason, when
    the run was too short to measure it."""
    import asyncio
    import logging

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_daemon import soak

    from xyleme.logs import configure_logging

    configure_logging("text", logging.WARNING)
    figures = asyncio.run(soak(seconds, pages, 8_640.0))
    return figures["pages_per_s"], figures["notes"].get("pages_per_s")


def write_big_document(path: Path, megabytes: int) -> None:
    """A sitemap-like list of records with links, written in chunks (never held whole)."""
    record = (
        '<record id="{n}"><title>record {n}</title>'
        '<link href="/r/{n}.xml"/><body>{text}</body></record>\n'
    )
    text = "the quick brown fox jumps over the lazy dog " * 4
    target = megabytes * 2**20
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0"?>\n<records>\n')
        written, n = 0, 0
        while written < target:
            chunk = "".join(record.format(n=n + i, text=text) for i in range(1000))
            out.write(chunk)
            written += len(chunk)
            n += 1000
        out.write("</records>\n")


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not ``ru_maxrss``: across fork and exec that keeps
    the parent's peak, and the parent holds the whole corpus."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _measure_loader(path: Path, folder: Path, answer) -> None:
    # SQLite's page cache is the metadata manager's memory (64 MiB by default, filled here by
    # 65,534 new URLs), not the loader's: a small one keeps the figure about the streaming.
    loader, metadata = open_loader(
        folder, [], LoaderSettings(max_document_bytes=1 << 30), MetadataSettings(cache_mb=4)
    )
    url = "http://big.simweb.test/big.xml"
    url_id = metadata.id_for(url)
    before = _rss_mb()
    started = time.perf_counter()
    result = loader.load(url_id, url, path, {}, 0.0)
    elapsed = time.perf_counter() - started
    peak = _peak_rss_mb()
    answer.send((result.outcome.value, result.links, peak - before, peak, elapsed))
    metadata.close()


def _measure_plain(path: Path, answer) -> None:
    before = _rss_mb()
    started = time.perf_counter()
    root = etree.fromstring(path.read_bytes(), etree.XMLParser(huge_tree=True))
    links = len(root.xpath("//@href"))  # the union of PLAIN_XPATH is quadratic on one big tree
    elapsed = time.perf_counter() - started
    peak = _peak_rss_mb()
    answer.send(("parsed", links, peak - before, peak, elapsed))


def in_child(target, *args):
    """Run a measurement in a fresh process so its peak RSS is its own."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=target, args=(*args, sender))
    process.start()
    answer = receiver.recv()
    process.join()
    return answer


def print_parts(parts: dict[str, float], count: int, whole: float, plain: float) -> dict:
    """The whole job per document, part by part, beside the plain loop (µs of CPU)."""
    per_doc = {name: 1e6 * seconds / count for name, seconds in parts.items()}
    per_doc["metadata"] = max(0.0, 1e6 * whole / count - sum(per_doc.values()))
    print(f"{'whole job per document, by part':46}{'us CPU':>12}")
    for name, micros in per_doc.items():
        print(f"  {name:44}{micros:12.1f}")
    print(f"  {'whole job, batches':44}{1e6 * whole / count:12.1f}")
    print(f"  {'plain loop (fromstring + xpath)':44}{1e6 / plain:12.1f}")
    return {name: round(micros, 1) for name, micros in per_doc.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, 50 MB document")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: tiny sizes")
    parser.add_argument("--docs", type=int, default=None, help="documents in the corpus")
    parser.add_argument("--big-mb", type=int, default=None, help="size of the large document")
    parser.add_argument(
        "--dir", default=None, help="where the scratch repositories go (default: the temp dir)"
    )
    parser.add_argument(
        "--batch", type=int, default=100, help="documents per Loader.load_many call"
    )
    parser.add_argument(
        "--daemon-seconds", type=float, default=None, help="how long the daemon runs (20; 3)"
    )
    options = parser.parse_args()
    size = "smoke" if options.smoke else "quick" if options.quick else "full"
    count = options.docs or {"smoke": 100, "quick": 600, "full": 5000}[size]
    big_mb = options.big_mb or {"smoke": 2, "quick": 50, "full": 200}[size]
    runs = 1 if options.smoke else 3
    daemon_seconds = options.daemon_seconds or (3.0 if options.smoke else 20.0)

    corpus = simweb_corpus(count)
    documents = corpus.documents
    size_mb = sum(len(body) for _, body in documents) / 2**20
    print(f"simweb corpus: {count} XML documents, {size_mb:.1f} MB; CPU time, best of {runs}")
    with tempfile.TemporaryDirectory(dir=options.dir) as scratch:
        scratch = Path(scratch)
        plain = count / min(plain_loop(documents) for _ in range(runs))
        cpu, wall = min(
            loader_loop(corpus, scratch / f"job{n}", options.batch) for n in range(runs)
        )
        loaded = count / cpu
        single = count / min(loader_loop(corpus, scratch / f"one{n}", 1)[0] for n in range(runs))
        parsed = count / min(parse_loop(corpus, scratch / f"parse{n}") for n in range(runs))
        print(f"{'documents per CPU second':46}{'loader':>12}{'plain lxml':>12}{'ratio':>8}")
        for label, rate in (
            (f"whole job, batches of {options.batch}", loaded),
            ("whole job, one document at a time", single),
            ("parse + validate + links only", parsed),
        ):
            print(f"  {label:44}{rate:12.0f}{plain:12.0f}{rate / plain:8.3f}")
        print(f"  whole job per wall-clock second: {count / wall:.0f} (disk waits included)")
        part_runs = [job_parts(corpus, scratch / f"parts{n}") for n in range(runs)]
        parts = {name: min(run[name] for run in part_runs) for name in part_runs[0]}
        parts_us = print_parts(parts, count, cpu, plain)
        lxml_us = parts_us["parse_validate"]
        not_lxml = sum(parts_us.values()) - lxml_us
        print(f"  not lxml's own work / parse+validate: {not_lxml / lxml_us:.2f} (target <= 1)")
        metered = metered_run(
            lambda meter: loader_loop(corpus, scratch / "metered", options.batch, meter)
        )
        metadata_us = {name: round(1e6 * seconds / count, 1) for name, seconds in metered.items()}
        print("  metadata, by call (one run):")
        for name, micros in metadata_us.items():
            print(f"    {name:42}{micros:12.1f}")

        big = scratch / "big.xml"
        write_big_document(big, big_mb)
        outcome, links, grown, peak, elapsed = in_child(_measure_loader, big, scratch / "big")
        print(
            f"large document: {big.stat().st_size / 2**20:.0f} MB, loader {outcome}, "
            f"{links} links, {elapsed:.1f} s; peak RSS {peak:.0f} MB"
        )
        plain_grown = None
        if big_mb <= 50:  # the peer holds the whole tree: only measured on the smaller size
            plain_grown = in_child(_measure_plain, big)[2]
        plain_text = "not run" if plain_grown is None else f"{plain_grown:.1f}"
        print(f"{'peak memory growth (MB)':46}{grown:12.1f}{plain_text:>12}")
    daemon, daemon_note = daemon_pages_per_s(daemon_seconds, 500 if options.smoke else 20_000)
    if daemon is None:
        print(f"daemon against a simulated web, {daemon_seconds:g} s: not measured, {daemon_note}")
    else:
        ratio = f"{loaded / daemon:.1f}" if daemon else "– (no page fetched)"
        print(
            f"daemon against a simulated web, {daemon_seconds:g} s: {daemon:.0f} pages/s; "
            f"whole job / daemon: {ratio} (target >= 3)"
        )
    print(
        json.dumps(
            {
                "docs_per_s": round(loaded, 1),
                "single_docs_per_s": round(single, 1),
                "parse_docs_per_s": round(parsed, 1),
                "wall_docs_per_s": round(count / wall, 1),
                "plain_docs_per_s": round(plain, 1),
                "ratio": round(loaded / plain, 3),
                "parts_us": parts_us,
                "metadata_us": metadata_us,
                "whole_us": round(1e6 * cpu / count, 1),
                "plain_us": round(1e6 / plain, 1),
                "not_lxml_over_lxml": round(not_lxml / lxml_us, 2),
                "daemon_pages_per_s": daemon,
                "job_over_daemon": round(loaded / daemon, 2) if daemon else None,
                "big_doc_peak_mb": round(grown, 1),
                "big_doc_mb": big_mb,
                "plain_big_doc_peak_mb": None if plain_grown is None else round(plain_grown, 1),
                "documents": count,
                "batch": options.batch,
                "notes": {} if daemon_note is None else {"daemon_pages_per_s": daemon_note},
            }
        )
    )


if __name__ == "__main__":
    main()
