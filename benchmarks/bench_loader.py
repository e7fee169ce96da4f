"""Benchmark of the XML loader against a plain ``lxml.etree.fromstring`` + ``xpath`` loop.

Two figures, each beside its peer measured in the same run:

* documents per second over a generated XML corpus (catalogues validated against internal
  and external DTDs, RSS feeds, XLink documents): the loader does the whole job (safe parse,
  DTD validation, version stored on disk, links extracted and written to the metadata
  manager's SQLite database); the peer only parses each document and runs one XPath
  expression that finds its ``href`` attributes;
* peak memory while loading one large document (200 MB; 50 MB with ``--quick``) streamed from
  a spooled file, measured as the growth of a child process's peak RSS over its RSS just
  before the load.

Run: ``python benchmarks/bench_loader.py [--quick] [--docs N]``. The last line printed is a
JSON object with ``docs_per_s``, ``plain_docs_per_s``, ``ratio`` and ``big_doc_peak_mb``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from lxml import etree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loader import Loader, LoaderSettings, LoadOutcome
from loader.parsing import parse_tree
from metadata import Metadata
from metadata.clock import ManualClock

HOST = "http://bench.simweb.test"
SHARED_DTD = b"""<!ELEMENT catalog (title, item*)>
<!ELEMENT title (#PCDATA)>
<!ELEMENT item (name, price)>
<!ATTLIST item href CDATA #REQUIRED currency CDATA "EUR">
<!ELEMENT name (#PCDATA)>
<!ELEMENT price (#PCDATA)>
"""
PLAIN_XPATH = "//@href | //@*[local-name()='href'] | //link/text()"


class NoFetcher:
    """The corpus's DTD is delivered before timing: nothing is ever requested."""

    def request(self, url: str, referrer_id: int) -> None:
        raise AssertionError(f"unexpected dependency request for {url}")


def catalog(rng: random.Random, n: int, external: bool) -> bytes:
    items = "".join(
        f'<item href="/p/{rng.randrange(100000)}.xml"><name>thing {i}</name>'
        f"<price>{rng.randrange(1, 999)}.{rng.randrange(100):02d}</price></item>"
        for i in range(rng.randrange(20, 80))
    )
    doctype = (
        '<!DOCTYPE catalog SYSTEM "/dtd/catalog.dtd">'
        if external
        else "<!DOCTYPE catalog [" + SHARED_DTD.decode() + "]>"
    )
    return (
        f'<?xml version="1.0"?>\n{doctype}\n<catalog><title>c{n}</title>{items}</catalog>'.encode()
    )


def feed(rng: random.Random, n: int) -> bytes:
    items = "".join(
        f"<item><title>story {i}</title><link>{HOST}/news/{rng.randrange(100000)}.xml</link>"
        f"<description>{'lorem ipsum ' * rng.randrange(5, 30)}</description></item>"
        for i in range(rng.randrange(10, 40))
    )
    channel = f"<title>feed {n}</title><link>{HOST}/</link>{items}"
    return f'<rss version="2.0"><channel>{channel}</channel></rss>'.encode()


def xlinked(rng: random.Random, n: int) -> bytes:
    refs = "".join(
        f'<ref xlink:type="simple" xlink:href="d{rng.randrange(10000)}.xml">see {i}</ref>'
        for i in range(rng.randrange(10, 50))
    )
    return (
        f'<doc xmlns:xlink="http://www.w3.org/1999/xlink" xml:base="{HOST}/docs/">'
        f"<head>doc {n}</head>{refs}</doc>"
    ).encode()


def corpus(count: int, seed: int = 5) -> list[tuple[str, bytes]]:
    rng = random.Random(seed)
    makers = [
        lambda n: catalog(rng, n, external=False),
        lambda n: catalog(rng, n, external=True),
        lambda n: feed(rng, n),
        lambda n: xlinked(rng, n),
    ]
    return [(f"{HOST}/doc/{n}.xml", makers[n % len(makers)](n)) for n in range(count)]


def plain_loop(documents: list[tuple[str, bytes]]) -> float:
    """The peer: parse each document and find its links with one XPath expression."""
    started = time.process_time()
    found = 0
    for _, body in documents:
        found += len(etree.fromstring(body).xpath(PLAIN_XPATH))
    assert found > 0
    return time.process_time() - started


def open_loader(folder: Path, settings: LoaderSettings | None = None) -> tuple[Loader, Metadata]:
    """A loader on a fresh repository, with the corpus's shared DTD already delivered."""
    folder.mkdir(parents=True)
    metadata = Metadata.create(folder / "metadata.db", clock=ManualClock(0.0))
    loader = Loader(folder / "documents", metadata, NoFetcher(), ManualClock(0.0), settings)
    dtd_url = f"{HOST}/dtd/catalog.dtd"
    loader.load(metadata.id_for(dtd_url), dtd_url, SHARED_DTD, {}, 0.0)
    return loader, metadata


def loader_loop(documents: list[tuple[str, bytes]], folder: Path) -> tuple[float, float]:
    """The whole job: parse, validate, store a version, write links to the metadata.

    Returns CPU seconds and wall-clock seconds (the latter includes waiting for the disk).
    """
    loader, metadata = open_loader(folder)
    ids = metadata.ids_for([url for url, _ in documents])
    started, wall = time.process_time(), time.perf_counter()
    for url_id, (url, body) in zip(ids, documents, strict=True):
        result = loader.load(url_id, url, body, {"Content-Type": "application/xml"}, 1.0)
        assert result.outcome is LoadOutcome.STORED, result.reason
    elapsed, wall = time.process_time() - started, time.perf_counter() - wall
    metadata.close()
    return elapsed, wall


def parse_loop(documents: list[tuple[str, bytes]], folder: Path) -> float:
    """The loader's parsing alone: safe parse, DTD validation, link extraction."""
    loader, metadata = open_loader(folder)
    started = time.process_time()
    for url, body in documents:
        parsed = parse_tree(body, url, None, loader.settings, loader.resolver())
        assert parsed.tree is not None
    elapsed = time.process_time() - started
    metadata.close()
    return elapsed


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


def _measure_loader(path: Path, folder: Path, answer) -> None:
    loader, metadata = open_loader(folder, LoaderSettings(max_document_bytes=1 << 30))
    url = f"{HOST}/big.xml"
    url_id = metadata.id_for(url)
    before = _rss_mb()
    started = time.perf_counter()
    result = loader.load(url_id, url, path, {}, 0.0)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    answer.send((result.outcome.value, result.links, peak - before, peak, elapsed))
    metadata.close()


def _measure_plain(path: Path, answer) -> None:
    before = _rss_mb()
    started = time.perf_counter()
    root = etree.fromstring(path.read_bytes(), etree.XMLParser(huge_tree=True))
    links = len(root.xpath("//@href"))  # the union of PLAIN_XPATH is quadratic on one big tree
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small corpus, 50 MB document")
    parser.add_argument("--docs", type=int, default=None, help="documents in the corpus")
    parser.add_argument("--big-mb", type=int, default=None, help="size of the large document")
    options = parser.parse_args()
    count = options.docs or (600 if options.quick else 5000)
    big_mb = options.big_mb or (50 if options.quick else 200)

    documents = corpus(count)
    size_mb = sum(len(body) for _, body in documents) / 2**20
    print(f"corpus: {count} documents, {size_mb:.1f} MB; CPU seconds, best of 3 runs")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        plain = count / min(plain_loop(documents) for _ in range(3))
        cpu, wall = min(loader_loop(documents, scratch / f"job{n}") for n in range(3))
        loaded = count / cpu
        parsed = count / min(parse_loop(documents, scratch / f"parse{n}") for n in range(3))
        print(f"{'documents per CPU second':34}{'loader':>12}{'plain lxml':>12}{'ratio':>8}")
        for label, rate in (
            ("whole job (target ratio >= 0.5)", loaded),
            ("parse + validate + links only", parsed),
        ):
            print(f"  {label:32}{rate:12.0f}{plain:12.0f}{rate / plain:8.3f}")
        print(f"  whole job per wall-clock second: {count / wall:.0f} (disk waits included)")

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
        print(f"{'peak memory growth (MB)':34}{grown:12.1f}{plain_text:>12}")
    print(
        json.dumps(
            {
                "docs_per_s": round(loaded, 1),
                "parse_docs_per_s": round(parsed, 1),
                "wall_docs_per_s": round(count / wall, 1),
                "plain_docs_per_s": round(plain, 1),
                "ratio": round(loaded / plain, 3),
                "big_doc_peak_mb": round(grown, 1),
                "big_doc_mb": big_mb,
                "plain_big_doc_peak_mb": None if plain_grown is None else round(plain_grown, 1),
                "documents": count,
            }
        )
    )


if __name__ == "__main__":
    main()
