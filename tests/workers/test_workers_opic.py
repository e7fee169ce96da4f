"""A worker's part of OPIC credits no fetch on the event loop that needs the store: an XML
page's children (the loader records them) and every fetch committed during a flush are set
aside, then credited in the flush's thread, before the flush commits (both engines)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from metadata import FetchResult, Metadata, PageType
from xyleme import signals
from xyleme.config import Config
from xyleme.jobs import cash_drift
from xyleme.worker_opic import WorkerOPIC


def read(md: Metadata, url_id: int, kind: PageType, children=None) -> FetchResult:
    return FetchResult(url_id, 1.0, kind, 200, md5="0" * 32, children=children)


async def test_fetches_needing_the_store_are_credited_in_the_flush(store_url):
    with Metadata.create(store_url) as md:
        html, xml, child, other = md.ids_for([f"http://a.test/{n}" for n in range(4)])
        md.set_children(xml, [child, other])  # what the loader recorded
        crawler = SimpleNamespace(signals=signals.SignalManager())
        opic = WorkerOPIC(md, crawler=crawler, config=Config(), part=0, parts=1)
        reads = opic.part.opic.reads
        fired = [read(md, html, PageType.HTML, [child]), read(md, xml, PageType.XML)]
        for result in fired:
            crawler.signals.send_catch_log(signals.page_fetched, SimpleNamespace(result=result))
        assert reads()[html] == 1 and reads()[xml] == 0  # the XML page waits for the flush
        assert [r.url_id for r in opic.listener.set_aside] == [xml]
        opic.listener.flushing = True  # as while a flush's thread runs: nothing credited
        opic.listener(read(md, child, PageType.HTML, []))
        assert reads()[child] == 0
        opic.listener.flushing = False
        other_before = float(opic.part.opic.cash([other])[0])
        await opic.flush()
        assert reads()[xml] == 1 and reads()[child] == 1 and opic.listener.set_aside == []
        assert float(opic.part.opic.cash([other])[0]) > other_before  # paid by the XML page
        assert opic.flushes == 1 and cash_drift(md) <= 1e-9
        opic.listener(read(md, xml, PageType.XML))
        opic.last_flush()
        assert reads()[xml] == 2 and cash_drift(md) <= 1e-9


async def test_fetches_committed_while_the_thread_flushes_are_credited_after_it(store_url):
    with Metadata.create(store_url) as md:
        page, child = md.ids_for(["http://a.test/p", "http://a.test/c"])
        crawler = SimpleNamespace(signals=signals.SignalManager())
        opic = WorkerOPIC(md, crawler=crawler, config=Config(), part=0, parts=1)
        flushing = asyncio.create_task(opic.flush())
        await asyncio.sleep(0)  # the flush has set its flag and gone to its thread
        assert opic.listener.flushing
        opic.listener(read(md, page, PageType.HTML, [child]))
        assert opic.part.opic.reads()[page] == 0
        await asyncio.wait_for(flushing, 60)
        assert opic.part.opic.reads()[page] == 1 and not opic.listener.flushing
