"""The crawler's hand-off lane gives the loader the bodies queued meanwhile in one batch."""

from __future__ import annotations

from loader import FetchedBody
from xyleme.crawler.handoff import LoaderLane


class BatchSink:
    """A DocumentSink; ``fail_batches`` makes every batch of more than one body raise."""

    def __init__(self, fail_batches: bool = False) -> None:
        self.fail_batches = fail_batches
        self.calls: list[list[str]] = []
        self.failed: list[str] = []

    def load(self, url_id, url, body, headers, fetched_at):
        self.calls.append([url])
        return f"loaded {url}"

    def load_many(self, fetched):
        if self.fail_batches and len(fetched) > 1:
            raise RuntimeError("loader bug")
        self.calls.append([url for _, url, *_ in fetched])
        return [f"loaded {url}" for _, url, *_ in fetched]

    def dependency_failed(self, url_id, url, reason):
        self.failed.append(url)
        return []

    def dependency_arrived(self, url_id, url, body, fetched_at):
        self.calls.append([f"dependency {url}"])
        return f"cached {url}"


async def run_lane(sink, work) -> list[tuple[str, int]]:
    """Queue ``work`` (("load"|"dependency"|"fail", url)) before the lane starts, serve it,
    return what ``on_loaded`` saw (the result and the depth, here the item's number)."""
    seen = []
    lane = LoaderLane(sink, lambda result, depth: seen.append((result, depth)), lambda: None)
    for n, (kind, url) in enumerate(work):
        if kind == "load":
            lane.load(FetchedBody(n, url, b"<r/>", {}, 0.0, "md5"), depth=n)
        elif kind == "dependency":
            lane.dependency(n, url, b"<!ELEMENT r EMPTY>", 0.0, depth=n)
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
    assert seen == [("loaded a", 0), ("loaded b", 1), ("loaded c", 3)]


async def test_a_batch_that_raises_is_loaded_again_one_by_one():
    sink = BatchSink(fail_batches=True)
    seen = await run_lane(sink, [("load", "a"), ("load", "b")])
    assert sink.calls == [["a"], ["b"]]
    assert [depth for _, depth in seen] == [0, 1]


async def test_a_dependency_goes_straight_back_and_keeps_the_order():
    sink = BatchSink()
    work = [("load", "a"), ("dependency", "d.dtd"), ("load", "b"), ("load", "c")]
    seen = await run_lane(sink, work)
    assert sink.calls == [["a"], ["dependency d.dtd"], ["b", "c"]]
    assert seen == [("loaded a", 0), ("cached d.dtd", 1), ("loaded b", 2), ("loaded c", 3)]
