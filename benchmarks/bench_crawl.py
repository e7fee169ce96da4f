"""Crawl throughput: xyleme's crawler against Scrapy and a bare aiohttp + lxml loop.

All three crawl the same loopback site in one run, each in its own subprocess (so each
has its own peak RSS), one after the other, while the site is served by another process:
``--hosts`` virtual hosts on loopback addresses 127.0.0.1, 127.0.0.2…, one port,
``--pages`` HTML pages with a power-law link structure (every page reachable from the
hosts' home pages), a robots.txt per host that disallows ``/private/``. Same concurrency,
same per-host limit, robots obeyed, no delay:

* xyleme: the full work — robots.txt, politeness slots, conditional-GET bookkeeping, MD5,
  link extraction and canonicalisation, scope checks, batched metadata writes (SQLite);
* Scrapy: a minimal link-following spider (``CONCURRENT_REQUESTS`` equal to ours,
  ``ROBOTSTXT_OBEY``), no pipeline; with ``--quick`` it is stopped after 15 s
  (``CLOSESPIDER_TIMEOUT``) so the run stays under a minute; it is rated from its first
  page to its last (its start-up is not counted, xyleme's and the bare loop's are);
* bare: a queue of URLs, aiohttp workers, lxml link extraction, a Python set for dedup.

Run::

    python benchmarks/bench_crawl.py --quick    # ~5,000 pages, < 60 s
    python benchmarks/bench_crawl.py            # 20,000 pages

The last line is JSON with ``xyleme_pages_per_s``, ``scrapy_pages_per_s``,
``bare_pages_per_s``, ``ratio_vs_scrapy``, ``ratio_vs_bare`` and ``xyleme_peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages

LINKS_PER_PAGE = 12
FILLER = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + "</p>"


# ---------------------------------------------------------------------------- the site


def site_links(pages: int, hosts: int, seed: int = 7) -> list[list[int]]:
    """Each page's link targets: a chain (reachability) plus power-law picks."""
    rng = random.Random(seed)
    links = []
    for page in range(pages):
        targets = {(page + 1) % pages}
        while len(targets) < LINKS_PER_PAGE:
            targets.add(int(pages * rng.random() ** 3))  # low ids are popular
        links.append(sorted(targets))
    return links


def page_host(page: int, hosts: int) -> str:
    return f"127.0.0.{1 + page % hosts}"


def render_site(pages: int, hosts: int, port: int) -> dict[tuple[str, str], bytes]:
    """Every response of the site, rendered once: (host, path) -> HTTP/1.1 response bytes."""
    links = site_links(pages, hosts)

    def response(status: str, content_type: str, body: bytes) -> bytes:
        head = (
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    def html(page: int) -> bytes:
        anchors = "".join(
            f'<li><a href="http://{page_host(t, hosts)}:{port}/p/{t}.html">page {t}</a></li>'
            for t in links[page]
        )
        return response(
            "200 OK",
            "text/html; charset=utf-8",
            (
                f"<!DOCTYPE html><html><head><title>page {page}</title></head><body>"
                f"<h1>Page {page}</h1>{FILLER}<ul>{anchors}</ul>"
                f'<a href="/private/{page}.html">private</a>{FILLER}</body></html>'
            ).encode(),
        )

    robots = response("200 OK", "text/plain", b"User-agent: *\nDisallow: /private/\n")
    site = {}
    for index in range(hosts):
        host = f"127.0.0.{index + 1}"
        site[(host, "/robots.txt")] = robots
        site[(host, "/")] = html(index)
    for page in range(pages):
        site[(page_host(page, hosts), f"/p/{page}.html")] = html(page)
    return site


class SiteProtocol(asyncio.Protocol):
    """A minimal HTTP/1.1 keep-alive server of pre-rendered responses.

    The site must not be the bottleneck of a crawler benchmark on two cores: aiohttp's
    server costs more per request than the crawlers being measured.
    """

    not_found = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"

    def __init__(self, site: dict[tuple[str, str], bytes]) -> None:
        self.site = site
        self.buffer = b""

    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            path = lines[0].split(" ")[1]
            host = next(
                (line[5:].strip() for line in lines if line[:5].lower() == "host:"), ""
            ).split(":")[0]
            self.transport.write(self.site.get((host, path), self.not_found))


def serve(pages: int, hosts: int) -> None:
    """Serve the site on 127.0.0.1..127.0.0.HOSTS until stdin closes; print the port first."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        site: dict[tuple[str, str], bytes] = {}
        first = await loop.create_server(lambda: SiteProtocol(site), "127.0.0.1", 0, backlog=1024)
        port = first.sockets[0].getsockname()[1]
        servers = [first]
        for index in range(2, hosts + 1):
            servers.append(
                await loop.create_server(
                    lambda: SiteProtocol(site), f"127.0.0.{index}", port, backlog=1024
                )
            )
        site.update(render_site(pages, hosts, port))
        print(port, flush=True)
        await loop.run_in_executor(None, sys.stdin.read)
        for server in servers:
            server.close()

    asyncio.run(main())


def seeds(port: int, hosts: int) -> list[str]:
    return [f"http://127.0.0.{index}:{port}/" for index in range(1, hosts + 1)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------------------- crawlers


def run_xyleme(port: int, hosts: int, concurrency: int, per_host: int) -> dict:
    from metadata import Metadata
    from metadata.clock import AcceleratedClock
    from xyleme.crawler import Crawler, CrawlerSettings, Scope

    clock = AcceleratedClock(epoch=1_000_000_000.0)
    clock.freeze()
    settings = CrawlerSettings(
        concurrency=concurrency,
        per_host_concurrency=per_host,
        min_delay=0.0,
        max_scout_depth=10_000,
    )
    scope = Scope(hosts=frozenset(f"127.0.0.{i}" for i in range(1, hosts + 1)))
    with (
        tempfile.TemporaryDirectory() as folder,
        Metadata.create(Path(folder) / "metadata.db", clock=clock) as md,
    ):
        crawler = Crawler(md, settings, scope, clock=clock)
        for url in seeds(port, hosts):
            crawler.submit(url)
        started = time.perf_counter()
        stats = asyncio.run(crawler.run())
        seconds = time.perf_counter() - started
        html = stats["by_type"].get("HTML", 0)
    return {"pages": html, "seconds": seconds, "peak_rss_mb": peak_rss_mb(), "stats": stats}


def run_bare(port: int, hosts: int, concurrency: int, per_host: int) -> dict:
    from urllib.parse import urljoin

    import aiohttp
    import lxml.html

    async def crawl() -> int:
        queue: asyncio.Queue[str] = asyncio.Queue()
        seen: set[str] = set()
        for url in seeds(port, hosts):
            seen.add(url)
            queue.put_nowait(url)
        fetched = 0
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=per_host)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def worker() -> None:
                nonlocal fetched
                while True:
                    url = await queue.get()
                    try:
                        async with session.get(url) as response:
                            body = await response.read()
                        fetched += 1
                        root = lxml.html.fromstring(body)
                        for href in root.xpath("//a/@href"):
                            link = urljoin(url, href)
                            if "/private/" not in link and link not in seen:
                                seen.add(link)
                                queue.put_nowait(link)
                    finally:
                        queue.task_done()

            workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
            await queue.join()
            for task in workers:
                task.cancel()
        return fetched

    started = time.perf_counter()
    pages = asyncio.run(crawl())
    return {"pages": pages, "seconds": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb()}


def run_scrapy(
    port: int, hosts: int, concurrency: int, per_host: int, seconds: float = 0.0
) -> dict:
    import scrapy
    from scrapy.crawler import CrawlerProcess

    counted = {"pages": 0, "first": 0.0, "last": 0.0}

    class LinkSpider(scrapy.Spider):
        name = "links"
        start_urls = seeds(port, hosts)

        def parse(self, response):
            counted["pages"] += 1
            counted["last"] = time.perf_counter()
            counted["first"] = counted["first"] or counted["last"]
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, callback=self.parse)

    process = CrawlerProcess(
        settings={
            "CONCURRENT_REQUESTS": concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": per_host,
            "DOWNLOAD_DELAY": 0,
            "ROBOTSTXT_OBEY": True,
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "COOKIES_ENABLED": False,
            "RETRY_ENABLED": False,
            "HTTPCACHE_ENABLED": False,
            "CLOSESPIDER_TIMEOUT": seconds,  # 0: crawl the whole site
        }
    )
    process.crawl(LinkSpider)
    process.start()
    # Rated from its first page to its last: Scrapy's start-up is not held against it.
    seconds = counted["last"] - counted["first"]
    return {"pages": counted["pages"] - 1, "seconds": seconds, "peak_rss_mb": peak_rss_mb()}


RUNNERS = {"xyleme": run_xyleme, "scrapy": run_scrapy, "bare": run_bare}


def measure(name: str, port: int, args: argparse.Namespace) -> dict:
    """Run one crawler in a fresh subprocess; its JSON result."""
    extra = ["--scrapy-seconds", str(args.scrapy_seconds)] if name == "scrapy" else []
    command = [
        sys.executable,
        __file__,
        "--run",
        name,
        "--port",
        str(port),
        "--hosts",
        str(args.hosts),
        "--concurrency",
        str(args.concurrency),
        "--per-host",
        str(args.per_host),
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{name} crawl failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["pages_per_s"] = result["pages"] / result["seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 5,000 pages, < 60 s")
    parser.add_argument("--pages", type=int, default=None)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--per-host", type=int, default=4)
    parser.add_argument("--only", choices=sorted(RUNNERS), action="append")
    parser.add_argument(
        "--scrapy-seconds",
        type=float,
        default=None,
        help="stop Scrapy after this many seconds and rate what it did (--quick: 15)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", choices=sorted(RUNNERS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pages = args.pages or (5_000 if args.quick else 20_000)
    if args.scrapy_seconds is None:
        args.scrapy_seconds = 15.0 if args.quick else 0.0
    if args.serve:
        serve(pages, args.hosts)
        return
    if args.run:
        options = {"seconds": args.scrapy_seconds} if args.run == "scrapy" else {}
        result = RUNNERS[args.run](
            args.port, args.hosts, args.concurrency, args.per_host, **options
        )
        print(json.dumps(result))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--pages", str(pages), "--hosts", str(args.hosts)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(server.stdout.readline())
        results = {name: measure(name, port, args) for name in (args.only or RUNNERS)}
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    print(
        f"{pages} pages on {args.hosts} hosts, concurrency {args.concurrency}, "
        f"{args.per_host} per host"
    )
    print(f"{'crawler':<8} {'pages':>7} {'seconds':>8} {'pages/s':>9} {'peak RSS MB':>12}")
    for name, result in results.items():
        print(
            f"{name:<8} {result['pages']:>7} {result['seconds']:>8.2f} "
            f"{result['pages_per_s']:>9.0f} {result['peak_rss_mb']:>12.0f}"
        )
    rate = {name: result["pages_per_s"] for name, result in results.items()}
    summary = {
        "pages": pages,
        "xyleme_pages_per_s": round(rate.get("xyleme", 0.0), 1),
        "scrapy_pages_per_s": round(rate.get("scrapy", 0.0), 1),
        "bare_pages_per_s": round(rate.get("bare", 0.0), 1),
        "ratio_vs_scrapy": round(rate.get("xyleme", 0) / rate["scrapy"], 2)
        if rate.get("scrapy")
        else None,
        "ratio_vs_bare": round(rate.get("xyleme", 0) / rate["bare"], 2)
        if rate.get("bare")
        else None,
        "xyleme_peak_rss_mb": round(results.get("xyleme", {}).get("peak_rss_mb", 0.0), 1),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
