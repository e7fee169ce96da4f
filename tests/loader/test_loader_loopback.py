"""A DTD and an entity fetched over loopback HTTP by an aiohttp client acting as the crawler.

This is the daemon's shape: the loader runs in a worker thread (``asyncio.to_thread``), its
``DependencyFetcher`` hands URLs to the event loop, an aiohttp session fetches them from a
server on 127.0.0.1 and delivers the bodies back to the loader.
"""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from loader import Check, Loader, LoadOutcome, Warehouse
from metadata import LoadStatus, ManualClock, Metadata
from tests.loader_fakes import QueueFetcher

BOOK_DTD = b"""<!ELEMENT book (title, chapter)>
<!ELEMENT title (#PCDATA)>
<!ELEMENT chapter (#PCDATA)>
<!ENTITY one SYSTEM "one.ent">
"""
BOOK = b"""<?xml version="1.0"?>
<!DOCTYPE book SYSTEM "book.dtd">
<book><title>Loopback</title><chapter>&one;</chapter></book>"""


async def test_dtd_and_entity_fetched_through_an_aiohttp_client(tmp_path, aiohttp_server):
    served: list[str] = []

    async def dtd(request: web.Request) -> web.Response:
        served.append(request.path)
        return web.Response(body=BOOK_DTD, content_type="application/xml-dtd")

    async def entity(request: web.Request) -> web.Response:
        served.append(request.path)
        return web.Response(body=b"It began over loopback.", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/books/book.dtd", dtd)
    app.router.add_get("/books/one.ent", entity)
    server = await aiohttp_server(app, host="127.0.0.1")
    base = f"http://127.0.0.1:{server.port}/books"

    fetcher = QueueFetcher(asyncio.get_running_loop())
    with Metadata.create(tmp_path / "metadata.db") as md:
        loader = Loader(tmp_path / "documents", md, fetcher, ManualClock(0.0))
        doc_id = md.id_for(f"{base}/doc.xml")
        first = await asyncio.to_thread(loader.load, doc_id, f"{base}/doc.xml", BOOK, {}, 0.0)
        assert first.outcome is LoadOutcome.WAITING

        async with aiohttp.ClientSession() as session:
            while not fetcher.queue.empty():
                url = await fetcher.queue.get()
                async with session.get(url) as response:
                    body, headers = await response.read(), dict(response.headers)
                await asyncio.to_thread(loader.load, md.id_for(url), url, body, headers, 1.0)
                await asyncio.sleep(0)  # let call_soon_threadsafe put the next request

        assert served == ["/books/book.dtd", "/books/one.ent"]
        assert md.status(doc_id)[0] is LoadStatus.LOADED
        stored = loader.repository.latest(doc_id)
        assert stored.validity.dtd is Check.VALID
        assert loader.repository.read(doc_id) == BOOK  # the body as fetched
        chapter = Warehouse(tmp_path / "documents").parse(doc_id).find("chapter")
        assert chapter.text == "It began over loopback."  # the entity, from the cache
