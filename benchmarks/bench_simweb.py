"""How much CPU the simulated web's server spends per page, next to a minimal aiohttp server.

The server runs in its own process (``xyleme simweb serve``); this process is the client:
one aiohttp session at concurrency 64 fetching every live, fault-free page once ("cold":
each body is rendered on demand), then again ("warm": served from the server's cache). The
peer is the floor any aiohttp server pays: a minimal aiohttp application returning one
static body of the same mean size, in its own process, fetched with the same URLs through
the same resolver (so it opens as many connections per host as simweb does).
Server CPU is read from the server process (user + system, psutil) before and after.

    python benchmarks/bench_simweb.py [--smoke | --quick] [--pages N] [--hosts H]

``--smoke`` serves 500 pages on 5 hosts (a few seconds).

The last line printed is a JSON object with ``server_cpu_ms_per_page`` (cold pass) and
``pages_per_s`` (cold pass), plus the warm pass and the peer's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xyleme.simweb import GroundTruth, SimWeb, SimWebProcess, SimWebResolver, SimWebSettings

CONCURRENCY = 64

PEER_SERVER = """
import sys
from aiohttp import web
body = b"x" * int(sys.argv[1])
async def page(request):
    return web.Response(body=body, content_type="text/html")
app = web.Application()
app.router.add_get("/{tail:.*}", page)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), access_log=None, print=None)
"""


async def fetch_all(urls: list[str], connector_factory) -> tuple[int, int, float]:
    """GET every URL at concurrency 64; returns (pages, bytes, wall seconds)."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    for url in urls:
        queue.put_nowait(url)
    fetched = [0, 0]

    async def worker(session: aiohttp.ClientSession) -> None:
        while not queue.empty():
            url = queue.get_nowait()
            async with session.get(url, allow_redirects=False) as response:
                body = await response.read()
                if response.status != 200:
                    raise RuntimeError(f"{url}: HTTP {response.status}")
                fetched[0] += 1
                fetched[1] += len(body)

    started = time.perf_counter()
    async with aiohttp.ClientSession(
        connector=connector_factory(), auto_decompress=False
    ) as session:
        await asyncio.gather(*(worker(session) for _ in range(CONCURRENCY)))
    return fetched[0], fetched[1], time.perf_counter() - started


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def measure(pid: int, urls: list[str], connector_factory) -> dict:
    """One pass over ``urls``: server CPU per page, pages per second, mean body size."""
    server = psutil.Process(pid)
    before = cpu_seconds(server)
    pages, size, wall = asyncio.run(fetch_all(urls, connector_factory))
    used = cpu_seconds(server) - before
    return {
        "pages": pages,
        "cpu_ms_per_page": 1000.0 * used / pages,
        "pages_per_s": pages / wall,
        "mean_bytes": size / pages,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_peer(body_bytes: int, urls: list[str], hosts: list[str]) -> dict:
    """The minimal aiohttp server of static pages, in its own process, fetched like simweb:
    the same URLs through the same resolver, so connections per host are alike."""
    port = free_port()
    peer = subprocess.Popen([sys.executable, "-P", "-c", PEER_SERVER, str(body_bytes), str(port)])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the peer server did not start") from None
                time.sleep(0.05)
        resolver = SimWebResolver(port, hosts)
        return measure(
            peer.pid, urls, lambda: aiohttp.TCPConnector(limit=CONCURRENCY, resolver=resolver)
        )
    finally:
        peer.terminate()
        peer.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small web (under 60 s)")
    parser.add_argument("--smoke", action="store_true", help="500 pages on 5 hosts (seconds)")
    parser.add_argument("--pages", type=int, help="pages in the web [20000; quick 4000; smoke 500]")
    parser.add_argument("--hosts", type=int, default=None, help="hosts in the web [50; smoke 5]")
    args = parser.parse_args()
    pages = args.pages or (500 if args.smoke else 4000 if args.quick else 20_000)
    args.hosts = args.hosts or (5 if args.smoke else 50)
    settings = SimWebSettings(hosts=args.hosts, pages=pages, seed=1).without_faults()
    truth = GroundTruth(SimWeb(settings))
    alive = truth.alive(settings.epoch)
    urls = [truth.web.url(p) for p in range(pages) if alive[p]]

    print(
        f"simweb: {args.hosts} hosts, {pages} pages; {len(urls)} fetched per pass, "
        f"concurrency {CONCURRENCY}, server in its own process, frozen clock"
    )
    with SimWebProcess(settings, frozen=True) as served:

        def connector() -> aiohttp.TCPConnector:
            return aiohttp.TCPConnector(limit=CONCURRENCY, resolver=served.resolver())

        cold = measure(served.pid, urls, connector)
        warm = measure(served.pid, urls, connector)
    peer = run_peer(round(cold["mean_bytes"]), urls, truth.web.host_names)

    rows = [
        ("simweb, cold (render)", cold),
        ("simweb, warm (cache)", warm),
        ("minimal aiohttp (peer)", peer),
    ]
    print(f"{'server':<24}{'CPU ms/page':>12}{'pages/s':>10}{'mean bytes':>12}")
    for name, row in rows:
        print(
            f"{name:<24}{row['cpu_ms_per_page']:>12.3f}{row['pages_per_s']:>10.0f}"
            f"{row['mean_bytes']:>12.0f}"
        )
    print(
        f"cold / peer CPU ratio: {cold['cpu_ms_per_page'] / peer['cpu_ms_per_page']:.2f}; "
        f"warm / peer: {warm['cpu_ms_per_page'] / peer['cpu_ms_per_page']:.2f}"
    )
    print(
        json.dumps(
            {
                "server_cpu_ms_per_page": round(cold["cpu_ms_per_page"], 4),
                "pages_per_s": round(cold["pages_per_s"], 1),
                "warm_server_cpu_ms_per_page": round(warm["cpu_ms_per_page"], 4),
                "warm_pages_per_s": round(warm["pages_per_s"], 1),
                "peer_cpu_ms_per_page": round(peer["cpu_ms_per_page"], 4),
                "peer_pages_per_s": round(peer["pages_per_s"], 1),
                "cpu_ratio_to_peer": round(cold["cpu_ms_per_page"] / peer["cpu_ms_per_page"], 3),
                "pages": cold["pages"],
                "mean_bytes": round(cold["mean_bytes"]),
            }
        )
    )


if __name__ == "__main__":
    main()
