"""Small SVG charts drawn on the server: bars, log-scale histograms, log-log and line plots.

The dashboard must work offline and run no script, so its plots are plain SVG markup made
here. Every text that reaches the markup goes through :func:`html.escape`, and colours are
presentation attributes (not ``style``), which the dashboard's Content-Security-Policy allows.
Each function returns one ``<svg>`` element as a string; an empty input gives a chart saying
"no data" rather than an error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

WIDTH, HEIGHT = 560, 260
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 64, 36, 28, 44
PALETTE = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#4a5568")


def _number(value: float) -> str:
    """A short tick label: 3 significant digits, powers of ten as 1e5."""
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.0e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    return f"{value:.3g}"


class _Frame:
    """The plot area of one chart: maps data coordinates to pixels, draws axes and ticks."""

    def __init__(
        self, title: str, x_range: tuple[float, float], y_range: tuple[float, float]
    ) -> None:
        self.title = title
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1
        self.left, self.right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT
        self.top, self.bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
        self.parts: list[str] = []

    def px(self, x: float) -> float:
        return self.left + (x - self.x0) / (self.x1 - self.x0) * (self.right - self.left)

    def py(self, y: float) -> float:
        return self.bottom - (y - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def axes(
        self,
        x_label: str,
        y_label: str,
        x_ticks: Sequence[tuple[float, str]],
        y_ticks: Sequence[tuple[float, str]],
    ) -> None:
        left, right, top, bottom = self.left, self.right, self.top, self.bottom
        self.add(
            f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#4a5568"/>'
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#4a5568"/>'
        )
        for value, label in x_ticks:
            x = self.px(value)
            self.add(
                f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}"'
                ' stroke="#4a5568"/>'
                f'<text x="{x:.1f}" y="{bottom + 16}" font-size="10" text-anchor="middle"'
                f' fill="#2d3748">{escape(label)}</text>'
            )
        for value, label in y_ticks:
            y = self.py(value)
            self.add(
                f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#edf2f7"/>'
                f'<text x="{left - 6}" y="{y + 3:.1f}" font-size="10" text-anchor="end"'
                f' fill="#2d3748">{escape(label)}</text>'
            )
        middle = (left + right) / 2
        self.add(
            f'<text x="{middle:.1f}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle"'
            f' fill="#2d3748">{escape(x_label)}</text>'
            f'<text x="14" y="{(top + bottom) / 2:.1f}" font-size="11" text-anchor="middle"'
            f' fill="#2d3748" transform="rotate(-90 14 {(top + bottom) / 2:.1f})">'
            f"{escape(y_label)}</text>"
        )

    def svg(self) -> str:
        return _svg(self.title, "".join(self.parts))


def _svg(title: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}"'
        f' height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        f' aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<text x="{MARGIN_LEFT}" y="16" font-size="13" font-weight="bold"'
        f' fill="#1a202c">{escape(title)}</text>{body}</svg>'
    )


def _empty(title: str) -> str:
    return _svg(
        title,
        f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" font-size="12" text-anchor="middle"'
        ' fill="#718096">no data yet</text>',
    )


def _linear_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 5 times a power of ten apart)."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def _log_ticks(low_exp: float, high_exp: float) -> list[tuple[float, str]]:
    """Ticks at the powers of ten between two base-10 exponents (at most about 7 of them);
    at 2 and 5 times them too when the range spans less than two decades."""
    first, last = math.floor(low_exp), math.ceil(high_exp)
    multiples = (1, 2, 5) if high_exp - low_exp < 2 else (1,)
    stride = max(1, math.ceil((last - first + 1) / 7))
    ticks = [
        (math.log10(m) + e, _number(m * 10.0**e))
        for e in range(first, last + 1, stride)
        for m in multiples
    ]
    return [(x, label) for x, label in ticks if low_exp - 1e-9 <= x <= high_exp + 1e-9]


def bar_chart(
    title: str,
    labels: Sequence[str],
    values: Sequence[float],
    *,
    x_label: str = "",
    y_label: str = "",
    reference: float | None = None,
    reference_label: str = "",
) -> str:
    """Vertical bars, one per label, with an optional horizontal reference line (e.g. G).

    >>> svg = bar_chart("due", ["0", "1"], [3, 5], reference=4, reference_label="G")
    >>> svg.count("<rect"), "G = 4" in svg
    (2, True)
    """
    if not len(values):
        return _empty(title)
    top = max([*values, reference or 0.0, 1.0]) * 1.1
    frame = _Frame(title, (0, len(values)), (0, top))
    step = max(1, math.ceil(len(labels) / 14))
    frame.axes(
        x_label,
        y_label,
        [(i + 0.5, str(label)) for i, label in enumerate(labels) if i % step == 0],
        [(t, _number(t)) for t in _linear_ticks(0, top)],
    )
    width = (frame.right - frame.left) / len(values)
    for i, value in enumerate(values):
        y = frame.py(value)
        frame.add(
            f'<rect x="{frame.left + i * width + 2:.1f}" y="{y:.1f}"'
            f' width="{max(width - 4, 1):.1f}"'
            f' height="{frame.bottom - y:.1f}" fill="{PALETTE[0]}">'
            f"<title>{escape(str(labels[i]))}: {_number(value)}</title></rect>"
        )
    if reference is not None:
        y = frame.py(reference)
        frame.add(
            f'<line x1="{frame.left}" y1="{y:.1f}" x2="{frame.right}" y2="{y:.1f}"'
            f' stroke="{PALETTE[1]}" stroke-width="2" stroke-dasharray="6 4"/>'
            f'<line x1="{frame.right - 110}" y1="12" x2="{frame.right - 80}" y2="12"'
            f' stroke="{PALETTE[1]}" stroke-width="2" stroke-dasharray="6 4"/>'
            f'<text x="{frame.right - 74}" y="16" font-size="11"'
            f' fill="{PALETTE[1]}">{escape(reference_label)} = {_number(reference)}</text>'
        )
    return frame.svg()


def log_bins(values: np.ndarray, bins: int = 24) -> dict[str, Any]:
    """A histogram of positive values over ``bins`` logarithmic bins: ``log10_edges``
    (``bins + 1`` of them), ``counts`` and ``values`` (how many were counted). Rates and
    intervals span decades; non-positive and non-finite values are left out. Its size is
    fixed, whatever the number of pages, so the API can answer it whole.

    >>> log_bins(np.array([1.0, 10.0, 10.0]), bins=2)
    {'log10_edges': [0.0, 0.5, 1.0], 'counts': [1, 2], 'values': 3}
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values) & (values > 0)]
    if not values.size:
        return {"log10_edges": [], "counts": [], "values": 0}
    low, high = np.log10(values.min()), np.log10(values.max())
    if high - low < 1e-9:
        low, high = low - 0.5, high + 0.5
    counts, edges = np.histogram(np.log10(values), bins=bins, range=(low, high))
    return {"log10_edges": edges.tolist(), "counts": counts.tolist(), "values": int(values.size)}


def log_histogram(title: str, histogram: Mapping[str, Any], *, x_label: str = "") -> str:
    """Draw a histogram made by :func:`log_bins`; the title says how many pages it counts.

    >>> log_histogram("λ", log_bins(np.array([0.1, 1.0, 10.0, 10.0]))).count("<rect")
    24
    """
    counts, edges = histogram["counts"], np.asarray(histogram["log10_edges"], dtype=np.float64)
    if not counts:
        return _empty(title)
    low, high = float(edges[0]), float(edges[-1])
    top = max(max(counts), 1) * 1.1
    frame = _Frame(f"{title} ({histogram['values']:,} pages)", (low, high), (0, top))
    frame.axes(
        x_label + " (log scale)",
        "pages",
        _log_ticks(low, high) or [(low, _number(10**low)), (high, _number(10**high))],
        [(t, _number(t)) for t in _linear_ticks(0, top)],
    )
    for count, left, right in zip(counts, edges[:-1], edges[1:], strict=True):
        x0, x1, y = frame.px(left), frame.px(right), frame.py(count)
        frame.add(
            f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 1, 0.5):.1f}"'
            f' height="{frame.bottom - y:.1f}" fill="{PALETTE[2]}">'
            f"<title>{_number(10**left)} to {_number(10**right)}: {count}</title></rect>"
        )
    return frame.svg()


def _legend(frame: _Frame, names: Sequence[str]) -> None:
    for i, name in enumerate(names):
        y = frame.top + 4 + 14 * i
        colour = PALETTE[i % len(PALETTE)]
        frame.add(
            f'<rect x="{frame.right - 150}" y="{y}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{frame.right - 136}" y="{y + 9}" font-size="10" fill="#2d3748">'
            f"{escape(name)}</text>"
        )


def _polyline(frame: _Frame, xs: np.ndarray, ys: np.ndarray, colour: str) -> None:
    points = " ".join(f"{frame.px(x):.1f},{frame.py(y):.1f}" for x, y in zip(xs, ys, strict=True))
    frame.add(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')


def rank_sample(decreasing: np.ndarray, points: int = 200) -> tuple[list[int], list[float]]:
    """At most ``points`` log-spaced ranks (1 = largest) of values sorted decreasingly, and
    their values: a rank distribution of a million pages in a small, fixed size.

    >>> rank_sample(np.array([0.5, 0.3, 0.2, 0.1]), points=3)
    ([1, 2, 4], [0.5, 0.3, 0.1])
    """
    values = np.asarray(decreasing, dtype=np.float64)
    if not values.size:
        return [], []
    ranks = np.unique(np.geomspace(1, values.size, num=min(values.size, points)).round())
    ranks = ranks.astype(np.int64)
    return ranks.tolist(), values[ranks - 1].tolist()


def rank_plot(
    title: str, series: Mapping[str, tuple[Sequence[int], Sequence[float]]], *, y_label="score"
) -> str:
    """Log-log rank distributions: for each series, its values against their ranks (1 =
    largest), as :func:`rank_sample` gives them; non-positive values are left out.

    >>> rank_plot("ranks", {"a": ([1, 2, 3], [0.5, 0.3, 0.2])}).count("<polyline")
    1
    """
    curves = {}
    for name, (ranks, values) in series.items():
        ranks_, values_ = np.asarray(ranks, dtype=np.float64), np.asarray(values, np.float64)
        keep = np.isfinite(values_) & (values_ > 0)
        if keep.any():
            curves[name] = (np.log10(ranks_[keep]), np.log10(values_[keep]))
    if not curves:
        return _empty(title)
    x_high = max(float(xs.max()) for xs, _ in curves.values())
    y_low = min(float(ys.min()) for _, ys in curves.values())
    y_high = max(float(ys.max()) for _, ys in curves.values())
    if y_high - y_low < 1e-9:
        y_low, y_high = y_low - 0.5, y_high + 0.5
    frame = _Frame(title, (0.0, max(x_high, 1.0)), (y_low, y_high))
    frame.axes(
        "rank (log scale)",
        y_label + " (log scale)",
        _log_ticks(0.0, max(x_high, 1.0)),
        _log_ticks(y_low, y_high),
    )
    for i, (xs, ys) in enumerate(curves.values()):
        _polyline(frame, xs, ys, PALETTE[i % len(PALETTE)])
    _legend(frame, list(curves))
    return frame.svg()


def line_chart(
    title: str,
    x: np.ndarray,
    series: Mapping[str, np.ndarray],
    *,
    x_label: str = "",
    y_label: str = "",
    x_format=_number,
) -> str:
    """Lines sharing one x axis (growth of the repository, fetch rate over time).

    ``x_format`` labels the x ticks (the dashboard passes a date formatter).

    >>> line_chart("t", np.array([0, 1, 2]), {"pages": np.array([1, 4, 9])}).count("<polyline")
    1
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2 or not series:
        return _empty(title)
    y_high = max(float(np.nanmax(values)) for values in series.values())
    top = max(y_high, 1.0) * 1.1
    frame = _Frame(title, (float(x[0]), float(x[-1])), (0.0, top))
    frame.axes(
        x_label,
        y_label,
        [(t, x_format(t)) for t in np.linspace(x[0], x[-1], 4).tolist()],
        [(t, _number(t)) for t in _linear_ticks(0, top)],
    )
    for i, values in enumerate(series.values()):
        _polyline(frame, x, np.nan_to_num(np.asarray(values, dtype=np.float64)), PALETTE[i])
    _legend(frame, list(series))
    return frame.svg()
