"""The page_fetched listener: which links a fetch result hands OPIC's cash to."""

import numpy as np
import pytest

from metadata import FetchResult, ManualClock, Metadata, PageType
from ranking.opic import OPIC
from tests.daemon_fixtures import make_repository
from xyleme import signals
from xyleme.config import Config
from xyleme.crawler import CrawlEvent, Level
from xyleme.daemon import Daemon
from xyleme.jobs import FetchListener


@pytest.fixture
def md(tmp_path):
    with Metadata.create(tmp_path / "metadata.db") as database:
        yield database


def _result(url_id, **fields):
    return FetchResult(url_id=url_id, fetched_at=1000.0, **fields)


def test_links_come_from_the_result_else_from_the_stored_children(md):
    page, a, b = md.ids_for(["http://a.test/", "http://a.test/a", "http://a.test/b"])
    first = _result(page, page_type=PageType.HTML, status=200, md5="0" * 32, children=[a, b])
    md.record_fetch(first)
    listener = FetchListener(OPIC(), md)
    assert listener.children_of(first).tolist() == [a, b]
    not_modified = _result(page, page_type=PageType.HTML, status=304)
    assert sorted(listener.children_of(not_modified).tolist()) == [a, b]
    redirect = _result(a, page_type=PageType.HTML, status=301, redirect_to=b)
    assert listener.children_of(redirect).tolist() == [b]
    dead = _result(b, page_type=PageType.DEAD, status=404, reason="not found")
    assert listener.children_of(dead).size == 0


def test_listener_credits_the_fetch_and_moves_cash(md):
    page, child = md.ids_for(["http://a.test/", "http://a.test/child.xml"])
    opic = OPIC()
    opic.add_pages([page])
    listener = FetchListener(opic, md)
    listener(_result(page, page_type=PageType.HTML, status=200, children=[child]))
    assert opic.reads()[page] == 1
    assert opic.cash([child])[0] > opic.cash([page])[0]
    assert opic.total_cash() == pytest.approx(1.0)
    np.testing.assert_allclose(opic.estimates().sum(), 1.0)


def test_new_children_suspected_xml_get_the_xml_weight(md):
    """OPIC paper §3.3: a focused crawl weighs the pages it suspects to be XML more, so the
    ``[opic] xml_weight`` setting reaches OPIC through the daemon's listener."""
    page, feed, html, known = md.ids_for(
        ["http://a.test/", "http://a.test/feed.xml", "http://a.test/about", "http://a.test/b.rss"]
    )
    opic = OPIC()
    opic.add_pages([page, known])  # known already: its weight is left alone
    listener = FetchListener(opic, md, xml_weight=3.0)
    listener(_result(page, page_type=PageType.HTML, status=200, children=[feed, html, known]))
    weights = opic.weights()
    assert (weights[feed], weights[html], weights[known]) == (3.0, 1.0, 1.0)
    assert opic.total_cash() == pytest.approx(1.0)


def test_with_the_default_weight_no_url_is_looked_up(md):
    class NoURLs:
        def children(self, url_id):
            return np.zeros(0, dtype=np.int64)

        def urls_of(self, ids):
            raise AssertionError("the default weight needs no URL")

    opic = OPIC()
    FetchListener(opic, NoURLs())(_result(1, page_type=PageType.HTML, status=200, children=[2]))
    assert opic.weights()[2] == 1.0


def test_the_daemon_weighs_suspected_xml_as_its_configuration_says(tmp_path):
    config = Config().replace("opic", xml_weight=4.0)
    daemon = Daemon(make_repository(tmp_path / "repo"), config, clock=ManualClock(0.0))
    daemon.open()
    try:
        page, feed, html = daemon.md.ids_for(
            ["http://a.test/", "http://a.test/sitemap.xml", "http://a.test/about"]
        )
        result = _result(page, page_type=PageType.HTML, status=200, children=[feed, html])
        event = CrawlEvent("http://a.test/", result, Level.DISCOVERY)
        daemon.crawler.signals.send_catch_log(signals.page_fetched, event)
        weights = daemon.opic.weights()
        assert (weights[feed], weights[html]) == (4.0, 1.0)
    finally:
        daemon.close()


def test_a_weight_that_is_not_positive_is_refused(md):
    with pytest.raises(ValueError, match="xml_weight"):
        FetchListener(OPIC(), md, xml_weight=0.0)
