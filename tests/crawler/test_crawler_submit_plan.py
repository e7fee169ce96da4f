"""The crawler as the refresh module's CrawlQueue: a whole plan in one call and one lookup."""

import numpy as np
import pytest

from metadata import Metadata
from refresh import CrawlQueue
from xyleme.crawler import Crawler, Level, Scope


@pytest.fixture
def md(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as database:
        yield database


async def test_a_plan_is_queued_by_level_and_score_with_one_url_lookup(md, monkeypatch):
    ids = md.ids_for([f"http://in.example/{n}" for n in range(4)] + ["http://out.example/"])
    crawler = Crawler(md, scope=Scope(hosts=frozenset({"in.example"})))
    queue: CrawlQueue = crawler  # the protocol the refresh pass hands its plan to
    lookups = []
    monkeypatch.setattr(md, "url_of", lambda url_id: pytest.fail("one query per URL-Id"))
    urls_of = md.urls_of
    monkeypatch.setattr(md, "urls_of", lambda wanted: lookups.append(wanted) or urls_of(wanted))
    queued = await queue.submit_plan(
        [
            (np.array(ids[:2]), Level.REFRESH, np.array([1.0, 5.0])),
            (np.array([], dtype=np.int64), Level.REFRESH, np.array([])),
            (np.array(ids[2:]), Level.DISCOVERY, np.zeros(3)),
        ]
    )
    assert queued == 4 and lookups == [ids]
    assert crawler.frontier.sizes() == {0: 0, 1: 2, 2: 2, 3: 0, 4: 0}
    first = crawler.frontier.pop_ready(0.0)
    assert (first.url_id, first.level, first.score) == (ids[1], Level.REFRESH, 5.0)
    refused = md.rejected()
    assert [(link.url, link.reason.split(":")[0]) for link in refused] == [
        ("http://out.example/", "out of scope")
    ]


async def test_an_empty_plan_queues_nothing(md):
    assert await Crawler(md).submit_plan([]) == 0
