"""The crawler's hand-off lane gives the loader the bodies queued meanwhile in one batch."""

from __future__ import annotations

import asyncio

from xyleme.crawler.handoff import LoaderLane


class BatchSink:
    """A DocumentSink with ``load_many``; ``fail_batches`` makes every batch raise."""

    def __init__(self, fail_batches: bool = False) -> None:
        self.fail_batches = fail_batches
        self.calls: list[list[str]] = []
        self.failed: list[str] = []

    def load(self, url_id, url, body, headers, fetched_at):
        self.calls.append([url])
        return f"loaded {url}"

    def load_many(self, fetched):
        if self.fail_batches:
            raise RuntimeError("loader bug")
        self.calls.append([url for _, url, *_ in fetched])
        return [f"loaded {url}" for _, url, *_ in fetched]

    def dependency_failed(self, url_id, url, reason):
        self.failed.append(url)
        return []


async def run_lane(sink, work) -> list[tuple[str, str]]:
    """Queue ``work`` (("load"|"fail", url)) before the lane starts, serve it, return what
    ``on_loaded`` saw."""
    seen = []
    lane = LoaderLane(sink, lambda result, context: seen.append((result, context)), lambda: None)
    for n, (kind, url) in enumerate(work):
        if kind == "load":
            lane.load(n, url, b"<r/>", {}, 0.0, context=url)
        else:
            lane.fail(n, url, "gone")
    lane.start()
    await lane.close()
    assert lane.pending == 0
    return seen


async def test_queued_bodies_go_to_load_many_together_in_order():
    sink = BatchSink()
    work = [("load", "a"), ("load", "b"), ("fail", "d.dtd"), ("load", "c")]
    seen = await run_lane(sink, work)
    assert sink.calls == [["a", "b"], ["c"]]  # a failure in between keeps the order
    assert sink.failed == ["d.dtd"]
    assert seen == [("loaded a", "a"), ("loaded b", "b"), ("loaded c", "c")]


async def test_a_batch_that_raises_is_loaded_again_one_by_one():
    sink = BatchSink(fail_batches=True)
    seen = await run_lane(sink, [("load", "a"), ("load", "b")])
    assert sink.calls == [["a"], ["b"]]
    assert [context for _, context in seen] == ["a", "b"]


async def test_a_sink_without_load_many_loads_one_by_one():
    class OneByOne(BatchSink):
        load_many = None

    sink = OneByOne()
    await asyncio.wait_for(run_lane(sink, [("load", "a"), ("load", "b")]), 10)
    assert sink.calls == [["a"], ["b"]]
