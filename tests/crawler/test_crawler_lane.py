"""The crawler's lane to the loader: bodies in order and in batches, a failing batch loaded
again one by one, the documents stored counted, and no loader call ever beside another."""

from __future__ import annotations

import asyncio
import threading
import time

from loader import FetchedBody, LoaderSettings, LoadOutcome, LoadResult
from metadata import LoadStatus
from tests.crawler_fixtures import make_crawler
from tests.crawler_site import Page
from xyleme.crawler.writer import LoaderLane


def stored(n: int, url: str) -> LoadResult:
    return LoadResult(n, LoadOutcome.STORED, reason=url)


class BatchSink:
    """A DocumentSink; ``fail_batches`` makes every batch of more than one body raise,
    ``refuse`` names the URLs it refuses."""

    def __init__(self, fail_batches: bool = False, refuse: tuple[str, ...] = ()) -> None:
        self.fail_batches = fail_batches
        self.refuse = refuse
        self.calls: list[list[str]] = []
        self.failed: list[str] = []

    def load_many(self, fetched):
        if self.fail_batches and len(fetched) > 1:
            raise RuntimeError("loader bug")
        self.calls.append([url for _, url, *_ in fetched])
        return [
            LoadResult(n, LoadOutcome.FAILED, reason="not well-formed")
            if url in self.refuse
            else stored(n, url)
            for n, url, *_ in fetched
        ]

    def dependency_failed(self, url_id, url, reason):
        self.failed.append(url)
        return []

    def dependency_arrived(self, url_id, url, body, fetched_at):
        self.calls.append([f"dependency {url}"])
        return LoadResult(url_id, LoadOutcome.DEPENDENCY, reason=url)


async def run_lane(sink, work) -> tuple[LoaderLane, list[tuple[str, int]]]:
    """Queue ``work`` (("load"|"dependency"|"fail", url)) before the lane serves it, serve
    it, return the lane and what ``on_loaded`` saw (the result's note and the depth, here
    the item's number)."""
    seen = []
    lane = LoaderLane(lambda result, depth: seen.append((result.reason, depth)), lambda: None)
    lane.sink = sink
    lane.start()  # the task runs only once this test awaits: everything is queued by then
    for n, (kind, url) in enumerate(work):
        if kind == "load":
            lane.load(FetchedBody(n, url, b"<r/>", {}, 0.0, "md5"), depth=n)
        elif kind == "dependency":
            lane.dependency(n, url, b"<!ELEMENT r EMPTY>", 0.0, depth=n)
        else:
            lane.fail(n, url, "gone")
    await lane.close()
    assert lane.pending == 0 and not lane.running
    return lane, seen


async def test_queued_bodies_go_to_load_many_together_in_order():
    sink = BatchSink()
    work = [("load", "a"), ("load", "b"), ("fail", "d.dtd"), ("load", "c")]
    _, seen = await run_lane(sink, work)
    assert sink.calls == [["a", "b"], ["c"]]  # a failure in between keeps the order
    assert sink.failed == ["d.dtd"]
    assert seen == [("a", 0), ("b", 1), ("c", 3)]


async def test_a_batch_that_raises_is_loaded_again_one_by_one():
    sink = BatchSink(fail_batches=True)
    _, seen = await run_lane(sink, [("load", "a"), ("load", "b")])
    assert sink.calls == [["a"], ["b"]]
    assert [depth for _, depth in seen] == [0, 1]


async def test_a_dependency_goes_straight_back_and_keeps_the_order():
    sink = BatchSink()
    work = [("load", "a"), ("dependency", "d.dtd"), ("load", "b"), ("load", "c")]
    _, seen = await run_lane(sink, work)
    assert sink.calls == [["a"], ["dependency d.dtd"], ["b", "c"]]
    assert seen == [("a", 0), ("d.dtd", 1), ("b", 2), ("c", 3)]


async def test_the_documents_stored_are_counted_and_a_refusal_is_logged(caplog):
    sink = BatchSink(refuse=("bad",))
    work = [("load", "a"), ("load", "bad"), ("dependency", "d.dtd"), ("load", "c")]
    with caplog.at_level("INFO", logger="xyleme.crawler.writer"):
        lane, _ = await run_lane(sink, work)
    assert lane.loaded == 2  # a and c: not the refusal, not the dependency
    assert "document bad refused: not well-formed" in caplog.text


class OverlapSink(BatchSink):
    """Fails the test if two of its calls ever run at the same time (each lasts a while,
    in whatever worker thread the lane picks)."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = 0
        self.overlaps = 0
        self.expired = 0
        self._count = threading.Lock()

    def _enter(self) -> None:
        with self._count:
            self.inside += 1
            self.overlaps += self.inside > 1
        time.sleep(0.02)
        with self._count:
            self.inside -= 1

    def load_many(self, fetched):
        self._enter()
        return super().load_many(fetched)

    def expire_waiting(self):
        self._enter()
        self.expired += 1
        return [stored(0, "expired")]


async def test_expire_waiting_never_runs_beside_a_load():
    """The periodic expiry (and any call of the lane's owner) waits for the load in progress,
    whether the lane is serving or not; without the lane's lock they overlap at once."""
    sink = OverlapSink()
    lane = LoaderLane(lambda result, depth: None, lambda: None)
    lane.sink = sink
    assert await lane.expire_waiting() == 1  # not running: a call all the same
    lane.start()
    for n in range(12):
        lane.load(FetchedBody(n, f"u{n}", b"<r/>", {}, 0.0, None), depth=0)
        await asyncio.sleep(0)  # one body at a time: twelve loads, each in its own call
    expiries = [lane.expire_waiting() for _ in range(12)]
    checks = [lane.call(sink.load_many, []) for _ in range(4)]
    assert await asyncio.wait_for(asyncio.gather(*expiries, *checks), 30) == [1] * 12 + [[]] * 4
    await asyncio.wait_for(lane.close(), 30)
    assert sink.expired == 13 and sum(map(len, sink.calls)) == 12
    assert sink.overlaps == 0


async def test_a_dependency_is_fetched_once_however_many_documents_ask(site, md, tmp_path):
    """Every document that names the DTD asks for it while its fetch is in flight (it is
    slow): the crawler fetches it once, and every document loads once it is there."""
    doc = b'<?xml version="1.0"?>\n<!DOCTYPE d SYSTEM "/shared.dtd">\n<d/>'
    docs = [
        site.add("a.test", f"/{n}.xml", Page(doc, content_type="application/xml")) for n in range(6)
    ]
    site.html("a.test", "/", [f"/{n}.xml" for n in range(6)])
    site.add(
        "a.test", "/shared.dtd", Page(b"<!ELEMENT d EMPTY>", 200, "application/xml-dtd", delay=0.5)
    )
    crawler = make_crawler(md)
    crawler.sink = crawler.make_loader(tmp_path / "documents", md, LoaderSettings())
    crawler.submit(site.url("a.test", "/"))
    await asyncio.wait_for(crawler.run(), 30)
    assert [hit.path for hit in site.hits].count("/shared.dtd") == 1
    statuses = [md.status(md.id_for(url, create=False))[0] for url in docs]
    assert statuses == [LoadStatus.LOADED] * len(docs)
