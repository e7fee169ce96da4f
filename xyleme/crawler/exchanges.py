"""The crawler's side of the archive hook: what it reports after each fetch.

:func:`exchange_of` turns an aiohttp response (and the body the fetcher read) into an
:class:`~xyleme.archive.Exchange`; :func:`fetch_of` turns a finished fetch into a crawl-log
:class:`~xyleme.archive.Fetch`, with Heritrix-like negative status codes for fetches that
got no response and a discovery path of hop letters.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from xyleme.archive import Exchange, Fetch

if TYPE_CHECKING:
    from collections.abc import Callable

    import aiohttp

    from metadata import FetchResult
    from xyleme.crawler.fetcher import Body, FetchError, Response
    from xyleme.crawler.frontier import Request

NO_RESPONSE_CODES = {
    "dns": -1,
    "connect": -2,
    "tls": -2,
    "protocol": -3,
    "encoding": -3,
    "timeout": -4,
    "internal": -5,
    "metadata": -5,
    "scope": -5000,
    "too_large": -5003,
    "robots_unreachable": -61,
    "robots": -9998,
}
"""Status codes of fetches without an HTTP status, after Heritrix's: -1 DNS failure,
-2 connection failed, -3 connection broken, -4 timeout, -5 internal error, -61 refused
because the host's robots.txt could not be had (Heritrix's "prerequisite robots.txt fetch
failed": that fetch has its own line and code), -5000 refused by the scope (an address the
SSRF guard refuses), -5003 over a size cap, -9998 refused by robots.txt's rules
(Heritrix's "precluded by robots"), -9999 other."""
OTHER_CODE = -9999


def peer_address(response: aiohttp.ClientResponse) -> str | None:
    """The server's IP address (WARC-IP-Address), best effort: aiohttp hands a small
    response's connection back to its pool at once, so its protocol's transport is asked."""
    protocol = getattr(response, "_protocol", None)
    transport = getattr(protocol, "transport", None)
    address = transport.get_extra_info("peername") if transport is not None else None
    return address[0] if address else None


def exchange_of(
    url: str, response: aiohttp.ClientResponse, body: Body | None, ip: str | None = None
) -> Exchange:
    """The exchange of a finished response; a spooled body is hard-linked (the crawler may
    remove its own name first: the archive's name keeps the data until it is written)."""
    content: bytes | Path | None = None
    if body is not None:
        content = body.content
        if isinstance(content, Path):
            content = _second_name(content)
    info = response.request_info
    version = response.version
    return Exchange(
        url=url,
        method=info.method,
        request_headers=list(info.headers.items()),
        status=response.status,
        reason=response.reason or "",
        protocol=f"HTTP/{version.major}.{version.minor}" if version else "HTTP/1.1",
        response_headers=[
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in response.raw_headers
        ],
        body=content,
        size=0 if body is None else body.size,
        md5=None if body is None else body.md5,
        ip=ip,
    )


def _second_name(path: Path) -> Path:
    """A second name for a spooled file, in its folder (so it is swept with the spool)."""
    twin = path.with_name(path.name.replace(".body", "-warc.body"))
    try:
        os.link(path, twin)
    except OSError:  # a file system without hard links: a copy (rare, and off the hot path)
        shutil.copyfile(path, twin)
    return twin


def hops_of(request: Request) -> str:
    """The discovery path: E for a dependency, an L per link hop from a seed, an R per
    redirect followed; ``-`` for a seed or a page a module queued (the level tells which)."""
    path = ("E" if request.dependency else "") + "L" * request.depth + "R" * len(request.redirects)
    return path or "-"


def status_code(status: int | None, kind: str | None) -> int:
    """A fetch's crawl-log status: the HTTP status, else the code of its failure's kind."""
    if status is not None:
        return status
    return NO_RESPONSE_CODES.get(kind or "", OTHER_CODE)


def prerequisite_of(
    url: str,
    via: Request,
    response: Response | None,
    error: FetchError | None,
    times: tuple[float, float, float],
) -> Fetch:
    """The crawl-log line of a robots.txt GET (or of a redirect on its way to it) that
    ``via`` waited for: discovery path ``via``'s with ``P`` added (Heritrix's prerequisite),
    referrer ``via``'s URL. ``times``: the real end, the repository clock's, the seconds."""
    wall, at, seconds = times
    body = b"" if response is None else response.body
    return Fetch(
        wall=wall,
        at=at,
        status=status_code(
            None if response is None else response.status, None if error is None else error.kind
        ),
        size=None if response is None else len(body),
        url=url,
        hops=hops_of(via).removeprefix("-") + "P",
        referrer=via.url,
        content_type=None if response is None else response.headers.get("Content-Type"),
        duration_ms=round(seconds * 1000),
        md5=None if response is None else hashlib.md5(body, usedforsecurity=False).hexdigest(),
        level=int(via.level),
        page_type="",
        reason=None if error is None else error.reason,
    )


def fetch_of(
    request: Request,
    result: FetchResult,
    kind: str | None,
    wall: float,
    seconds: float,
    url_of: Callable[[int], str],
) -> Fetch:
    """The crawl-log line of a finished fetch (``kind``: the failure's, if it failed)."""
    status = status_code(result.status, kind)
    if request.redirects:
        referrer = request.redirects[-1]
    elif request.referrer is not None:
        referrer = url_of(request.referrer)
    else:
        referrer = None
    return Fetch(
        wall=wall,
        at=result.fetched_at,
        status=status,
        size=result.size,
        url=request.url,
        hops=hops_of(request),
        referrer=referrer,
        content_type=result.content_type,
        duration_ms=round(seconds * 1000),
        md5=result.md5,
        level=int(request.level),
        page_type=result.page_type.value,
        reason=result.reason,
    )
