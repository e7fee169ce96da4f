"""A folder served as a production web server serves it: compressed, validated, typed by rule.

Why: ``python -m http.server`` sends the plainest answers (no compression, no ETag, no
charset, ``.html`` always ``text/html``). nginx or Apache in front of the same folder answer
otherwise, and a crawler must read both: ``Content-Encoding: gzip`` when the client accepts
it, a strong ``ETag`` and ``Last-Modified`` with 304 to a conditional GET, a charset on
``text/html`` (nginx's ``charset utf-8;``, Apache's ``AddDefaultCharset``), and types set by
the operator (``AddType application/xhtml+xml .html`` for an XHTML tree). The answers are
:class:`~xyleme.sitegen.folder.StaticServer`'s (the same files, listings and redirects), so
the truth of :mod:`.folder` holds for both servers.

    python -m xyleme.sitegen.webserver ROOT --charset utf-8 --type .html=application/xhtml+xml
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import html
import os
from email.utils import formatdate
from pathlib import Path
from urllib.parse import quote

from aiohttp import hdrs, web

from xyleme.sitegen.folder import StaticServer

LOOPBACK = "127.0.0.1"


def parse_types(pairs: list[str]) -> dict[str, str]:
    """``[".html=application/xhtml+xml"]`` as a suffix → type map (``ValueError`` if bad)."""
    types = {}
    for pair in pairs:
        suffix, _, kind = pair.partition("=")
        if not suffix.startswith(".") or "/" not in kind:
            raise ValueError(f"a type is .SUFFIX=TYPE/SUBTYPE, not {pair!r}")
        types[suffix.lower()] = kind.strip()
    return types


def listing(folder: Path, path: str) -> bytes:
    """A folder's listing with ``http.server``'s links (sorted by lower-case name, quoted,
    ``/`` after a folder): what the truth reads from a listing."""
    items = []
    for name in sorted(os.listdir(folder), key=str.lower):
        link = name + ("/" if (folder / name).is_dir() else "")
        items.append(f'<li><a href="{quote(link)}">{html.escape(link)}</a></li>')
    title = f"Index of {html.escape(path)}"
    page = (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1><ul>\n" + "\n".join(items) + "\n</ul></body></html>\n"
    )
    return page.encode("utf-8")


class WebServer:
    """The aiohttp application serving ``served``'s answers with production headers."""

    def __init__(self, served: StaticServer) -> None:
        self.served = served

    async def handle(self, request: web.Request) -> web.StreamResponse:
        answer = self.served.answer(self.served.origin + request.path_qs)
        if answer.status in (301, 302, 303, 307, 308):
            raise web.HTTPMovedPermanently(answer.location.removeprefix(self.served.origin))
        if answer.status != 200:
            raise web.HTTPNotFound()
        if answer.listing is not None:
            body = listing(answer.listing, request.path)
            stamp = answer.listing.stat().st_mtime
        else:
            assert answer.file is not None
            body = await asyncio.to_thread(answer.file.read_bytes)
            stamp = answer.file.stat().st_mtime
        etag = f'"{hashlib.md5(body).hexdigest()[:20]}"'
        headers = {hdrs.ETAG: etag, hdrs.LAST_MODIFIED: formatdate(stamp, usegmt=True)}
        if etag in request.headers.get(hdrs.IF_NONE_MATCH, ""):
            return web.Response(status=304, headers=headers)
        headers[hdrs.CONTENT_TYPE] = answer.content_type or "application/octet-stream"
        response = web.Response(body=body, headers=headers)
        if _compressible(answer.content_type):
            response.enable_compression()  # gzip or deflate, as Accept-Encoding allows
        return response


def _compressible(content_type: str) -> bool:
    essence = content_type.split(";")[0].strip().lower()
    return essence.startswith("text/") or essence.endswith(("xml", "javascript", "json"))


async def serve(served: StaticServer) -> None:
    """Serve on a free loopback port, say it (``port N``, as ``http.server`` does), forever."""
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", WebServer(served).handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"Serving HTTP on {LOOPBACK} port {port}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--charset", help="added to text/html answers (nginx's charset)")
    parser.add_argument("--type", action="append", default=[], help=".SUFFIX=TYPE")
    args = parser.parse_args()
    try:
        types = parse_types(args.type)
    except ValueError as error:
        parser.error(str(error))
    # The origin is only a prefix the answers are computed under: every request is local.
    served = StaticServer(args.root, "http://served", types=types, charset=args.charset)
    asyncio.run(serve(served))


if __name__ == "__main__":
    main()
