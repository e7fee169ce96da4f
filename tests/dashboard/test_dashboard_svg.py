"""The dashboard's SVG charts: well-formed, escaped, honest about empty data."""

from __future__ import annotations

import numpy as np
import pytest
from lxml import etree

from xyleme.dashboard import svg

HOSTILE = '<script>alert("x")</script>&'


def parse(markup: str) -> etree._Element:
    return etree.fromstring(markup.encode())  # raises if not well-formed XML


@pytest.mark.parametrize(
    "chart",
    [
        lambda: svg.bar_chart(
            HOSTILE, [HOSTILE, "b"], [1, 2], reference=1.5, reference_label=HOSTILE
        ),
        lambda: svg.log_histogram(
            HOSTILE, svg.log_bins(np.array([0.1, 1.0, 10.0])), x_label=HOSTILE
        ),
        lambda: svg.rank_plot(HOSTILE, {HOSTILE: ([1, 2, 3], [3.0, 2.0, 1.0])}),
        lambda: svg.line_chart(
            HOSTILE, np.array([0.0, 1.0]), {HOSTILE: np.array([1.0, 2.0])}, x_label=HOSTILE
        ),
    ],
)
def test_charts_are_well_formed_and_escape_every_text(chart):
    markup = chart()
    root = parse(markup)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "<script" not in markup
    assert root.findtext("{http://www.w3.org/2000/svg}title").startswith(HOSTILE)
    assert not root.xpath("//@style")  # presentation attributes only (the CSP forbids style)


@pytest.mark.parametrize(
    "chart",
    [
        lambda: svg.bar_chart("t", [], []),
        lambda: svg.log_histogram("t", svg.log_bins(np.array([0.0, -1.0, np.nan]))),
        lambda: svg.rank_plot("t", {"a": ([], [])}),
        lambda: svg.line_chart("t", np.array([1.0]), {"a": np.array([1.0])}),
    ],
)
def test_empty_data_says_so(chart):
    markup = chart()
    parse(markup)
    assert "no data yet" in markup


def test_histogram_counts_every_positive_value_once():
    values = np.geomspace(1e-3, 1e3, 500)
    root = parse(
        svg.log_histogram("λ", svg.log_bins(np.concatenate([values, [0.0, np.inf]]), bins=10))
    )
    titles = [
        r.findtext("{http://www.w3.org/2000/svg}title")
        for r in root.iter("{http://www.w3.org/2000/svg}rect")
    ]
    assert sum(int(t.rsplit(": ", 1)[1]) for t in titles) == 500
    assert "(500 pages)" in root.findtext("{http://www.w3.org/2000/svg}title")


def test_bar_heights_are_proportional():
    root = parse(svg.bar_chart("t", ["a", "b"], [2, 4]))
    heights = [float(r.get("height")) for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert heights[1] == pytest.approx(2 * heights[0], rel=1e-3)


def test_rank_sample_keeps_at_most_200_log_spaced_points_per_series():
    values = np.sort(np.random.default_rng(1).pareto(1.5, 100_000) + 1)[::-1]
    ranks, sampled = svg.rank_sample(values)
    assert ranks[0] == 1 and ranks[-1] == values.size and ranks == sorted(set(ranks))
    assert sampled == values[np.array(ranks) - 1].tolist()
    root = parse(svg.rank_plot("t", {"a": (ranks, sampled)}))
    points = root.find("{http://www.w3.org/2000/svg}polyline").get("points").split()
    assert 50 < len(points) <= 200
