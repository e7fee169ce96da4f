"""The loader on the simulated web: DTDs, entities and schemas fetched over loopback.

An aiohttp session (through simweb's resolver) plays the crawler: it fetches XML documents,
hands them to the loader in a worker thread, and fetches at once every DTD, entity and schema
the loader asks for. The result is checked against simweb's ground truth: validity against
the DTD, links, dependencies.
"""

from __future__ import annotations

import asyncio

import pytest

from loader import Check, Loader
from metadata import LoadStatus, ManualClock, Metadata
from tests.loader_fakes import QueueFetcher
from xyleme.simweb import GroundTruth, SimWebServer, SimWebSettings

SETTINGS = SimWebSettings(hosts=2, pages=160, seed=11).without_faults()


@pytest.fixture
def truth():
    return GroundTruth(SimWebServer(SETTINGS, ManualClock(SETTINGS.epoch)).web)


def xml_pages(truth, at, *, dtd: bool, limit: int) -> list:
    pages = (truth.page(i, at) for i in range(truth.page_count))
    chosen = [
        p
        for p in pages
        if p.kind == "XML"
        and p.state == "alive"
        and p.has_dtd == dtd
        and (dtd or "schema" in " ".join(p.dependencies))
    ]
    return chosen[:limit]


async def crawl(server, loader, md, fetcher, urls: list[str]) -> list[str]:
    """Fetch ``urls`` and, first, whatever the loader asks for (priority 0).

    Returns the dependency URLs fetched for the loader, in order.
    """
    asked = []
    async with server.client_session() as session:

        async def fetch(url: str):
            async with session.get(url) as response:
                assert response.status == 200, url
                body, headers = await response.read(), dict(response.headers)
            return await asyncio.to_thread(loader.load, md.id_for(url), url, body, headers, 1.0)

        for url in urls:
            await fetch(url)
            await asyncio.sleep(0)
            while not fetcher.queue.empty():
                asked.append(await fetcher.queue.get())
                await fetch(asked[-1])
                await asyncio.sleep(0)
    return asked


async def test_simweb_documents_are_validated_with_their_fetched_dtds(tmp_path, truth):
    at = SETTINGS.epoch
    catalogues = xml_pages(truth, at, dtd=True, limit=8)
    records = xml_pages(truth, at, dtd=False, limit=3)
    assert catalogues and records
    assert {p.valid for p in catalogues} == {True, False}  # both kinds are exercised

    async with SimWebServer(SETTINGS, ManualClock(at)) as server:
        fetcher = QueueFetcher(asyncio.get_running_loop())
        with Metadata.create(tmp_path / "metadata.db") as md:
            loader = Loader(tmp_path / "documents", md, fetcher, ManualClock(at))
            pages = catalogues + records
            asked = await crawl(server, loader, md, fetcher, [p.url for p in pages])
            needed = {u for p in pages for u in p.dependencies if not u.endswith(".xsl")}
            assert sorted(asked) == sorted(needed)  # each DTD, entity, schema asked once
            for page in pages:
                url_id = md.id_for(page.url)
                assert md.status(url_id)[0] is LoadStatus.LOADED, md.status(url_id)
                stored = loader.repository.latest(url_id)
                if page.has_dtd:
                    assert stored.validity.dtd is (Check.VALID if page.valid else Check.INVALID)
                else:
                    assert stored.validity.schema is Check.VALID, stored.validity
                assert set(md.urls_of(md.children(url_id))) == {
                    truth.web.url(t) for t in page.links
                }
                assert set(md.urls_of(md.dependencies(url_id))) == set(page.dependencies)
