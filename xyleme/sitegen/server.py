"""Serve a generated site on 127.0.0.1, and log every request that reaches it.

It answers as a static web server does: ``ETag`` and ``Last-Modified`` on every page, 304
to a conditional GET that matches, text and XML compressed when the client accepts it.
Two listeners: the site's port (its 127.0.0.1 origin and its IDNA host, told apart by the
Host header) and an *off-scope* port holding the DTD and entity some pages name. The access
log records each request's method, path as sent, Host header and the port it reached: what
proves a crawl never fetched outside its scope. :meth:`RealSiteServer.resolver` maps the IDNA
host to the site's port for the crawler and fails every other name, so nothing reaches the
internet whatever a page links to.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Self

from aiohttp import hdrs, web

from xyleme.simweb.resolver import SimWebResolver
from xyleme.simweb.server import UntypedResponse
from xyleme.sitegen.build import IDNA_PUNYCODE, SiteSpec, build_site
from xyleme.sitegen.model import Response, Site, canonical, is_xml_type

LOOPBACK = "127.0.0.1"
LAST_MODIFIED = "Wed, 01 May 2024 12:00:00 GMT"
"""Every page's Last-Modified: the generated site never changes."""
_LAST_MODIFIED_AT = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
NOT_FOUND = Response(404, b"<!DOCTYPE html><title>Not Found</title>", "text/html")


@dataclass(frozen=True, slots=True)
class Access:
    """One request the server received."""

    method: str
    path: str
    """The request target as sent (percent-encoding and query included)."""
    host: str
    """The Host header."""
    port: int
    """The local port the request reached."""
    status: int


class ServedSite:
    """What a crawl of a served site needs of its server, wherever it runs: the site (built
    for its ports), name resolution, and the requests outside the scope."""

    site: Site | None
    accesses: list[Access]
    port: int

    async def start(self) -> None:
        """Serve the site and build it for its ports."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop serving."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def resolver(self) -> SimWebResolver:
        """Name resolution for a crawler of this site: the IDNA host → 127.0.0.1 on the
        site's port, every other name a DNS failure (IP literals never reach a resolver)."""
        return SimWebResolver(self.port, [IDNA_PUNYCODE])

    def out_of_scope(self) -> list[Access]:
        """Requests for anything the site's scope does not name (must stay empty)."""
        return [
            a
            for a in self.accesses
            if not self.site.in_scope(canonical(f"http://{a.host}{a.path}"))
        ]


class RealSiteServer(ServedSite):
    """The realistic site of ``spec`` on two loopback ports, built once they are bound.

    >>> import asyncio
    >>> async def main():
    ...     async with RealSiteServer(SiteSpec(size=150)) as served:
    ...         return len(served.site.documents) > 150, served.accesses
    >>> asyncio.run(main())
    (True, [])
    """

    def __init__(self, spec: SiteSpec | None = None) -> None:
        self.spec = spec or SiteSpec()
        self.site: Site | None = None
        self.accesses: list[Access] = []
        self._etags: dict[str, str] = {}
        self._runners: list[web.ServerRunner] = []

    async def start(self) -> None:
        """Bind both ports, then generate the site for them."""
        ports = []
        for _ in range(2):
            runner = web.ServerRunner(
                web.Server(self._handle, access_log=None),
                handle_signals=False,
                shutdown_timeout=0.5,
            )
            await runner.setup()
            await web.TCPSite(runner, LOOPBACK, 0).start()
            self._runners.append(runner)
            ports.append(runner.addresses[0][1])
        self.site = build_site(self.spec, ports[0], ports[1])

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners = []

    @property
    def port(self) -> int:
        """The site's port."""
        return self._runners[0].addresses[0][1]

    @property
    def offsite_port(self) -> int:
        """The port the scope does not name."""
        return self._runners[1].addresses[0][1]

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        port = request.transport.get_extra_info("sockname")[1] if request.transport else 0
        host = request.host.lower()
        try:
            key = canonical(f"http://{host}{request.raw_path}")
        except ValueError:
            key = ""
        response = self.site.responses.get(key)
        if response is None or (port == self.port) != self.site.in_scope(f"http://{host}/"):
            response = NOT_FOUND
        headers = dict(response.headers)
        status, body = response.status, response.body
        if status == 200:
            headers.update(self._validators(key, body))
            if _not_modified(request, headers):
                status, body = 304, b""
        self.accesses.append(Access(request.method, request.raw_path, request.host, port, status))
        kind = web.Response if response.content_type is not None else UntypedResponse
        answer = kind(status=status, body=body, headers=headers)
        if response.content_type is not None:
            answer.headers[hdrs.CONTENT_TYPE] = response.content_type
            if len(body) > 512 and _textual(response.media_type):
                answer.enable_compression()  # gzip or deflate, as Accept-Encoding allows
        return answer

    def _validators(self, key: str, body: bytes) -> dict[str, str]:
        """Last-Modified (the site never changes) and a strong ETag from the body's MD5."""
        etag = self._etags.get(key)
        if etag is None:
            etag = self._etags[key] = f'"{hashlib.md5(body).hexdigest()[:20]}"'
        return {"ETag": etag, "Last-Modified": LAST_MODIFIED}


def _not_modified(request: web.BaseRequest, validators: dict[str, str]) -> bool:
    """RFC 9110 §13.1: If-None-Match decides when sent, else If-Modified-Since."""
    if_none_match = request.headers.get(hdrs.IF_NONE_MATCH)
    if if_none_match is not None:
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or validators["ETag"] in tags
    since = request.if_modified_since
    return since is not None and since >= _LAST_MODIFIED_AT


def _textual(media_type: str | None) -> bool:
    """Whether a static server would compress this type (text and XML, not images)."""
    return media_type is not None and (
        media_type.startswith("text/") or is_xml_type(media_type) or media_type.endswith("json")
    )
