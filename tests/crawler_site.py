"""A tiny virtual-host web on 127.0.0.1 for the crawler's tests (until simweb lands).

Pages are registered per (host, path); every request is logged with its real arrival time
so tests can measure politeness. ``SiteResolver`` maps ``*.test`` to loopback for aiohttp.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web
from aiohttp.abc import AbstractResolver


@dataclass
class Page:
    """A canned response."""

    body: bytes = b""
    status: int = 200
    content_type: str = "text/html"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Hit:
    """One request the site received."""

    host: str
    path: str
    at: float
    headers: dict[str, str]


class SiteResolver(AbstractResolver):
    """Resolves every ``*.test`` name to 127.0.0.1; anything else fails like DNS would."""

    def __init__(self) -> None:
        self.lookups: list[str] = []

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list:
        self.lookups.append(host)
        if not host.endswith(".test"):
            raise OSError(f"no such host {host}")
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        pass


class Site:
    """Virtual hosts on one loopback server; ``url(host, path)`` names a page."""

    def __init__(self) -> None:
        self.pages: dict[tuple[str, str], Page | Callable[[web.Request], Page]] = {}
        self.hits: list[Hit] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    def add(self, host: str, path: str, page: Page | Callable[[web.Request], Page]) -> str:
        """Serve ``page`` at http://host/path and return its URL."""
        self.pages[(host, path)] = page
        return self.url(host, path)

    def html(self, host: str, path: str, links: list[str] = (), extra: str = "", **kw) -> str:
        """Serve an HTML page linking to ``links``."""
        anchors = "".join(f'<a href="{link}">{link}</a>' for link in links)
        body = f"<html><head>{extra}</head><body>{anchors}</body></html>".encode()
        return self.add(host, path, Page(body, **kw))

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def hits_to(self, host: str) -> list[Hit]:
        return [hit for hit in self.hits if hit.host == host]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        host = request.host.rsplit(":", 1)[0]
        path = request.path_qs
        self.hits.append(Hit(host, path, time.monotonic(), dict(request.headers)))
        page = self.pages.get((host, path))
        if callable(page):
            page = page(request)
        if page is None:
            if path == "/robots.txt":
                return web.Response(status=404)
            return web.Response(status=404, text="not found")
        if page.delay:
            await asyncio.sleep(page.delay)
        headers = {"Content-Type": page.content_type, **page.headers}
        return web.Response(body=page.body, status=page.status, headers=headers)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


__all__ = ["Page", "Site", "SiteResolver", "aiohttp"]
