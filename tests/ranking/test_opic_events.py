"""The page_fetched listener: which links a fetch result hands OPIC's cash to."""

import numpy as np
import pytest

from metadata import FetchResult, Metadata, PageType
from ranking.opic import OPIC
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
