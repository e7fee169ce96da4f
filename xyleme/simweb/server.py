"""The HTTP face of the simulated web: an aiohttp server on 127.0.0.1 only.

One low-level aiohttp server (no router, no middleware, no access log: every microsecond of
the server's CPU shows in the crawler benchmark) serves every virtual host. The host comes
from the Host header (its port ignored), so a client may reach the web two ways:

* through :class:`~xyleme.simweb.resolver.SimWebResolver`, which makes ``*.simweb.test``
  resolve to this server (the xyleme crawler);
* by using the server as its HTTP proxy (``http_proxy=http://127.0.0.1:PORT``): a proxy
  request names the host in its absolute URL and Host header, which is all this server needs
  (Scrapy and any client without custom DNS).

Either way the URLs have no port, so a repository keeps its URL-Ids whatever port the server
gets. Time is read only from the clock the server is given.

HTTP semantics: Last-Modified is the start of the served version (or a lie, per host), the
ETag names page and version, and a conditional GET gets 304 exactly when the version the
client names is still current (If-None-Match first, then If-Modified-Since, RFC 9110 §13.2.2).
"""

from __future__ import annotations

import asyncio
import calendar
import gzip
import re
import signal
from bisect import bisect_right
from collections.abc import Callable
from email.utils import mktime_tz, parsedate_tz
from types import TracebackType

import aiohttp
from aiohttp import hdrs, web

from metadata import Clock
from xyleme.simweb.lifecycle import SOFT_404
from xyleme.simweb.render import Renderer, http_date
from xyleme.simweb.resolver import SimWebResolver
from xyleme.simweb.settings import SimWebSettings
from xyleme.simweb.structure import (
    CALENDAR_PREFIX,
    DTD_PATH,
    ENTITY_PATH,
    SCHEMA_PATH,
    SITEMAP_PATH,
    STYLESHEET_PATH,
    Fault,
    Kind,
    LastModified,
    Robots,
)
from xyleme.simweb.web import SimWeb

LOOPBACK = "127.0.0.1"
"""The only address the server ever binds."""

CONTENT_TYPES = {
    Kind.HTML: "text/html; charset=utf-8",
    Kind.XML: "application/xml",
    Kind.RSS: "application/rss+xml",
    Kind.ATOM: "application/atom+xml",
}
WRONG_CONTENT_TYPES = {
    Kind.HTML: "application/xml",
    Kind.XML: "text/html; charset=utf-8",
    Kind.RSS: "text/plain",
    Kind.ATOM: "text/html",
}
_CALENDAR = re.compile(r"/calendar/(\d{4})/(\d{2})/(?:(\d{2})/)?$")
_SITEMAP_PART = re.compile(r"/sitemap-(\d+)\.xml$")
_REDIRECT_PREFIXES = ("/moved", "/hop/1", "/hop/2", "/loop/a", "/loop/b")


class UntypedResponse(web.Response):
    """A response without Content-Type (aiohttp always adds one; this fault needs none, and
    the realistic site's misconfigured pages too)."""

    async def _write_headers(self) -> None:
        self._headers.popall(hdrs.CONTENT_TYPE, None)
        await super()._write_headers()


def _response(status: int, body: bytes = b"", headers: dict | None = None) -> web.Response:
    return web.Response(status=status, body=body, headers=headers)


class _BodyCache:
    """Rendered bodies by key, evicted oldest-first beyond a byte budget."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._used = 0
        self._bodies: dict = {}

    def get(self, key):
        return self._bodies.get(key)

    def put(self, key, body: bytes) -> bytes:
        self._bodies[key] = body
        self._used += len(body)
        while self._used > self._budget and self._bodies:
            oldest = next(iter(self._bodies))
            self._used -= len(self._bodies.pop(oldest))
        return body


class SimWebServer:
    """Serves a :class:`SimWeb` on 127.0.0.1; an async context manager.

    Parameters
    ----------
    web_or_settings
        The web to serve, or the settings to generate it from.
    clock
        The only source of simulated time (page versions, deaths, HTTP dates).
    port
        The TCP port; 0 picks a free one (read it back from :attr:`port`).

    Examples
    --------
    >>> async def crawl_home(clock):                       # doctest: +SKIP
    ...     async with SimWebServer(SimWebSettings(hosts=3, pages=60), clock) as server:
    ...         async with aiohttp.ClientSession(connector=server.connector()) as session:
    ...             async with session.get(server.seed_urls[0]) as response:
    ...                 return response.status
    """

    def __init__(
        self, web_or_settings: SimWeb | SimWebSettings, clock: Clock, port: int = 0
    ) -> None:
        self.web = (
            web_or_settings if isinstance(web_or_settings, SimWeb) else SimWeb(web_or_settings)
        )
        self.clock = clock
        self.requested_port = port
        self.renderer = Renderer(self.web)
        self.requests_served = 0
        self._date_second, self._date_text = -1, ""
        self._cache = _BodyCache(self.web.settings.cache_bytes)
        self._runner: web.ServerRunner | None = None
        self._port: int | None = None
        st = self.web.structure
        self._host_of = st.host_of.tolist()
        self._kind = st.kind.tolist()
        self._fault = st.fault.tolist()
        self._home = st.home.tolist()
        self._lm_policy = st.last_modified.tolist()
        self._birth = self.web.lifecycles.birth.tolist()
        self._death = self.web.lifecycles.death.tolist()
        self._dead_status = self.web.lifecycles.dead_status.tolist()
        self._host_events = self._lifecycle_events()
        self._static = {
            DTD_PATH: (self.renderer.dtd(), "application/xml-dtd"),
            STYLESHEET_PATH: (self.renderer.stylesheet(), "text/xsl"),
            SCHEMA_PATH: (self.renderer.schema(), "application/xml"),
        }

    def _lifecycle_events(self) -> list[list[float]]:
        """Per host, the sorted times at which its set of pages changes (for sitemaps)."""
        events: list[list[float]] = [[] for _ in range(self.web.structure.host_count)]
        for page, (birth, death) in enumerate(zip(self._birth, self._death, strict=True)):
            host = self._host_of[page]
            if birth > self.web.settings.epoch:
                events[host].append(birth)
            if death != float("inf"):
                events[host].append(death)
        for times in events:
            times.sort()
        return events

    # -- lifecycle -----------------------------------------------------------------------
    async def start(self) -> None:
        """Bind 127.0.0.1 and start serving."""
        server = web.Server(self._handle, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, LOOPBACK, self.requested_port)
        await site.start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Stop serving; requests in flight (slow pages, timing-out robots) are cancelled."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> SimWebServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The port the server listens on (known once started)."""
        if self._port is None:
            raise RuntimeError("the simulated web is not started")
        return self._port

    @property
    def proxy_url(self) -> str:
        """The server's own address, usable as an HTTP proxy for the simulated hosts."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def seed_urls(self) -> list[str]:
        """The home page of every host (port-less URLs)."""
        return self.web.seed_urls()

    @property
    def addresses(self) -> list:
        """The socket addresses the server is bound to."""
        return list(self._runner.addresses) if self._runner else []

    def resolver(self) -> SimWebResolver:
        """A resolver mapping the simulated hosts to this server, for an aiohttp connector.

        A host the web's lifecycles have killed by the clock's current time fails to resolve.
        """
        return SimWebResolver(
            self.port,
            self.web.host_names,
            is_down=lambda name: self.web.host_down(name, self.clock.now()),
        )

    def connector(self, **options) -> aiohttp.TCPConnector:
        """An aiohttp connector that reaches the simulated hosts (``options`` go to it)."""
        return aiohttp.TCPConnector(resolver=self.resolver(), **options)

    def client_session(self, **options) -> aiohttp.ClientSession:
        """A client session that reaches the simulated hosts (``options`` go to the session).

        Call it inside a running event loop, and close it (``async with``) when done.
        """
        return aiohttp.ClientSession(connector=self.connector(), **options)

    def precompute(self) -> int:
        """Render the current version of every live page now, so serving it costs no rendering.

        For a frozen clock (the crawler benchmark) this takes rendering out of the serving
        path entirely. Returns the number of bodies rendered.
        """
        now = self.clock.now()
        count = 0
        for page in range(self.web.structure.page_count):
            if self._birth[page] <= now < self._death[page]:
                self._body(page, self.web.version(page, now))
                count += 1
        return count

    # -- request handling ----------------------------------------------------------------
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        self.requests_served += 1
        now = self.clock.now()
        response = await self._route(request, now)
        headers = response.headers
        if hdrs.DATE not in headers:
            headers[hdrs.DATE] = self._http_date(now)
        headers[hdrs.SERVER] = "simweb"
        return response

    def _http_date(self, at: float) -> str:
        """``http_date`` memoised for the current second (most requests share it)."""
        second = int(at)
        if second != self._date_second:
            self._date_second, self._date_text = second, http_date(second)
        return self._date_text

    async def _route(self, request: web.BaseRequest, now: float) -> web.StreamResponse:
        host_header = request.host
        name = host_header.rpartition(":")[0] if ":" in host_header else host_header
        host = self.web.host_index.get(name.lower())
        path = request.path
        if path.startswith("http://"):  # absolute-form target of a proxy request
            path = "/" + path.split("/", 3)[3] if path.count("/") >= 3 else "/"
        if host is None:
            return self._not_a_host(name)
        page = self.web.page_by_path.get(path)
        if page is not None and self._host_of[page] == host:
            return await self._page(request, page, now, path)
        if path == "/":
            return await self._page(request, self._home[host], now, path)
        return await self._resource(request, host, path, now)

    def _not_a_host(self, name: str) -> web.Response:
        if name in (LOOPBACK, "localhost"):
            seeds = "\n".join(self.seed_urls)
            body = f"simweb: {len(self.seed_urls)} hosts; use me as a proxy or resolver.\n{seeds}\n"
            return _response(200, body.encode(), {hdrs.CONTENT_TYPE: "text/plain"})
        return _response(502, f"simweb: no such host {name!r}\n".encode())

    def _body(self, page: int, version: int) -> bytes:
        key = (page, version)
        body = self._cache.get(key)
        if body is None:
            malformed = self._fault[page] == Fault.MALFORMED
            body = self.renderer.page(page, version, malformed=malformed)
            if self._fault[page] == Fault.GZIP:
                body = gzip.compress(body, compresslevel=6, mtime=0)
            body = self._cache.put(key, body)
        return body

    async def _page(
        self, request: web.BaseRequest, page: int, now: float, path: str, *, landed: bool = False
    ) -> web.StreamResponse:
        """Serve ``page`` at ``now``; ``landed``: the request followed its redirects already."""
        if now < self._birth[page]:
            return _response(404, b"Not Found\n")
        if now >= self._death[page]:
            status = self._dead_status[page]
            if status == SOFT_404:
                return _response(
                    200, self.renderer.soft_404(page), {hdrs.CONTENT_TYPE: CONTENT_TYPES[Kind.HTML]}
                )
            return _response(status, b"Gone\n" if status == 410 else b"Not Found\n")
        fault = self._fault[page]
        if not landed and fault in (Fault.REDIRECT, Fault.REDIRECT_CHAIN, Fault.REDIRECT_LOOP):
            return self._redirect(fault, path)
        if fault == Fault.SLOW:
            await asyncio.sleep(self.web.settings.faults.slow_seconds)
        version = self.web.version(page, now)
        last_change = self.web.last_change(page, version)
        headers = {hdrs.DATE: self._http_date(now)}
        policy = self._lm_policy[self._host_of[page]]
        if policy != LastModified.MISSING:
            etag = f'"{page:x}-{version}"'
            headers[hdrs.ETAG] = etag
            if policy == LastModified.HONEST:
                headers[hdrs.LAST_MODIFIED] = http_date(last_change)
            elif policy == LastModified.ALWAYS_NOW:
                headers[hdrs.LAST_MODIFIED] = self._http_date(now)
            else:
                headers[hdrs.LAST_MODIFIED] = http_date(self._birth[page])
            if self._unchanged(request, etag, last_change, now):
                return _response(304, headers=headers)
        kind = self._kind[page]
        if fault == Fault.WRONG_TYPE:
            headers[hdrs.CONTENT_TYPE] = WRONG_CONTENT_TYPES[kind]
        elif fault != Fault.MISSING_TYPE:
            headers[hdrs.CONTENT_TYPE] = CONTENT_TYPES[kind]
        if fault == Fault.GZIP_BOMB:
            headers[hdrs.CONTENT_ENCODING] = "gzip"
            bomb = await asyncio.to_thread(
                self.renderer.gzip_bomb, self.web.settings.faults.gzip_bomb_bytes
            )
            return _response(200, bomb, headers)
        body = self._body(page, version)
        if fault == Fault.GZIP:
            headers[hdrs.CONTENT_ENCODING] = "gzip"
        elif fault == Fault.OVERSIZE:
            body = self.renderer.padded(body, self.web.settings.faults.oversize_bytes)
        elif fault == Fault.MISSING_TYPE:
            return UntypedResponse(body=body, headers=headers)
        return web.Response(body=body, headers=headers)

    @staticmethod
    def _unchanged(request: web.BaseRequest, etag: str, last_change: float, now: float) -> bool:
        """Whether the client's validators name the current version (RFC 9110 §13.1).

        If-None-Match wins over If-Modified-Since and compares weakly (``W/"x"`` matches
        ``"x"``). An If-Modified-Since that is not a date, or lies after the simulated now
        (a client sending its real clock), is ignored: 304 only when surely unchanged.
        """
        headers = request.headers
        match = headers.get(hdrs.IF_NONE_MATCH)
        if match is not None:
            tags = {tag.strip().removeprefix("W/") for tag in match.split(",")}
            return "*" in tags or etag in tags
        since = headers.get(hdrs.IF_MODIFIED_SINCE)
        if since is not None:
            parsed = parsedate_tz(since)
            if parsed is None:
                return False
            stamp = mktime_tz(parsed)
            return last_change <= stamp <= now
        return False

    @staticmethod
    def _redirect(fault: int, path: str) -> web.Response:
        """The first hop of a redirecting page (``/moved``, a chain, or the loop)."""
        if fault == Fault.REDIRECT:
            return _response(301, headers={hdrs.LOCATION: "/moved" + path})
        if fault == Fault.REDIRECT_CHAIN:
            return _response(302, headers={hdrs.LOCATION: "/hop/1" + path})
        return _response(302, headers={hdrs.LOCATION: "/loop/a" + path})

    async def _resource(
        self, request: web.BaseRequest, host: int, path: str, now: float
    ) -> web.StreamResponse:
        for prefix in _REDIRECT_PREFIXES:
            if path.startswith(prefix + "/"):
                return await self._redirected(request, host, prefix, path[len(prefix) :], now)
        if path == "/robots.txt":
            return await self._robots(host)
        if path == SITEMAP_PATH or _SITEMAP_PART.match(path):
            return self._sitemap(host, path, now)
        if path == ENTITY_PATH:
            return _response(
                200,
                self.renderer.entity(host),
                {hdrs.CONTENT_TYPE: "application/xml-external-parsed-entity"},
            )
        static = self._static.get(path)
        if static is not None:
            return _response(200, static[0], {hdrs.CONTENT_TYPE: static[1]})
        date = _CALENDAR.match(path) if path.startswith(CALENDAR_PREFIX) else None
        if date is not None and self.web.structure.trap[host]:
            year, month, day = (int(g) if g else None for g in date.groups())
            if 1 < year < 9999 and 1 <= month <= 12:
                days = calendar.monthrange(year, month)[1]
                if day is None or 1 <= day <= days:
                    body = self.renderer.calendar(year, month, day)
                    return _response(200, body, {hdrs.CONTENT_TYPE: CONTENT_TYPES[Kind.HTML]})
        return _response(404, b"Not Found\n")

    async def _robots(self, host: int) -> web.Response:
        """robots.txt in its host's variant: a body, 404, 500, or an answer that comes too late."""
        variant = self.web.structure.robots[host]
        if variant == Robots.NOT_FOUND:
            return _response(404, b"Not Found\n")
        if variant == Robots.SERVER_ERROR:
            return _response(500, b"Internal Server Error\n")
        if variant == Robots.TIMEOUT:
            await asyncio.sleep(self.web.settings.faults.robots_timeout_seconds)
            return _response(200, b"User-agent: *\nDisallow:\n", {hdrs.CONTENT_TYPE: "text/plain"})
        return _response(200, self.renderer.robots(host), {hdrs.CONTENT_TYPE: "text/plain"})

    def _sitemap(self, host: int, path: str, now: float) -> web.Response:
        """A sitemap (or index), cached until a page of the host is born or dies."""
        match = _SITEMAP_PART.match(path)
        part = int(match.group(1)) if match else None
        if part is not None and part >= self.renderer.sitemap_count(host):
            return _response(404, b"Not Found\n")
        key = ("sitemap", host, part, bisect_right(self._host_events[host], now))
        body = self._cache.get(key)
        if body is None:
            body = self._cache.put(key, self.renderer.sitemap(host, now, part))
        return _response(200, body, {hdrs.CONTENT_TYPE: "application/xml"})

    async def _redirected(
        self, request: web.BaseRequest, host: int, prefix: str, path: str, now: float
    ) -> web.StreamResponse:
        """The later hops of a redirect: the chain's steps, the loop, the final location."""
        page = self.web.page_by_path.get(path)
        if page is None or self._host_of[page] != host:
            return _response(404, b"Not Found\n")
        fault = self._fault[page]
        if prefix == "/moved" and fault in (Fault.REDIRECT, Fault.REDIRECT_CHAIN):
            return await self._page(request, page, now, path, landed=True)
        if fault == Fault.REDIRECT_CHAIN and prefix.startswith("/hop/"):
            target = "/hop/2" if prefix == "/hop/1" else "/moved"
            return _response(
                307 if target == "/hop/2" else 301, headers={hdrs.LOCATION: target + path}
            )
        if fault == Fault.REDIRECT_LOOP and prefix.startswith("/loop/"):
            target = "/loop/b" if prefix == "/loop/a" else "/loop/a"
            return _response(302, headers={hdrs.LOCATION: target + path})
        return _response(404, b"Not Found\n")


async def serve_until_stopped(
    server: SimWebServer, precompute: bool, started: Callable[[], None]
) -> None:
    """Serve until SIGINT or SIGTERM; ``started`` is called once the server listens (this
    child and ``xyleme simweb serve`` both)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if precompute:
        server.precompute()
    async with server:
        started()
        await stop.wait()
