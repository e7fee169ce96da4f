"""Focused crawling (paper §3.3): guessing XML pages, and OPIC reading them sooner."""

import numpy as np
import pytest

from ranking.opic import OPIC, Greedy, suspect_xml


@pytest.mark.parametrize(
    ("url", "context", "expected"),
    [
        ("http://a.test/data/items.xml", None, True),
        ("http://a.test/feed.RSS", None, True),
        ("http://a.test/logo.svg", None, True),
        ("http://a.test/blog/feed/", None, True),
        ("http://a.test/export?format=xml", None, True),
        ("http://a.test/page", "Download the Atom feed", True),
        ("http://a.test/page", 'type="application/xhtml+xml"', True),
        ("http://a.test/index.html", "our products", False),
        ("http://a.test/xmlfiles.html", None, False),
        ("http://a.test/page.xml.html", None, False),
    ],
)
def test_suspect_xml(url, context, expected):
    assert suspect_xml(url, context) is expected


def test_suspected_children_get_more_cash_and_are_read_first():
    opic = OPIC(pages=1, damping=0.85)
    greedy = Greedy(opic)
    opic.on_fetch(0, [1, 2, 3], weights={2: 4.0})
    cash = opic.cash()
    assert cash[2] > cash[1] == pytest.approx(cash[3])
    assert greedy.next_page() == 2
    assert opic.total_cash() == pytest.approx(1.0)
    assert np.isclose(opic.weights()[2], 4.0)


def test_weights_must_name_children_and_be_positive():
    opic = OPIC(pages=2)
    with pytest.raises(ValueError, match="children"):
        opic.on_fetch(0, [1], weights={7: 2.0})
    with pytest.raises(ValueError, match="positive"):
        opic.on_fetch(0, [1], weights={1: 0.0})
    assert opic.pages == 2
    assert opic.reads().sum() == 0
