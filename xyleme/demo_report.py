"""The demo's closing report: a summary scored against the simulated web's truth, and plots.

The summary names every part of the mission at work in the run: the crawl (pages by type),
the loader (XML documents and their versions), the refresh policy (freshness, obsolescence
against its optimum Ω(G), refreshes per day against G_r, λ learnt against the truth), the
ranking (importance of XML, interest of HTML), OPIC (its on-line estimate against the last
ranking pass) and the LiveRank re-check. The plots show the same over the run, as SVG files
(the dashboard's own charts, :mod:`xyleme.dashboard.svg`: no plotting library needed) and
one HTML page that holds them all.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import numpy as np

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from metadata.versions import VersionStore
from xyleme.dashboard.svg import bar_chart, line_chart, rank_plot, rank_sample
from xyleme.demo import DemoPlan, DemoRun
from xyleme.jobs.recheck_request import summary_text
from xyleme.simweb import GroundTruth

PLOTS = "plots"
"""Folder of the plots, in the repository."""


def freshness(md: Metadata, truth: GroundTruth, at: float) -> tuple[float, int]:
    """Share of the read pages whose stored version is still the web's one at ``at``.

    A page is fresh when it has not changed since we last read it (paper §6: freshness is
    the complement of obsolescence).
    """
    view = md.refresh_view()
    read = np.isin(view["type"], [PAGE_TYPE_CODE[PageType.HTML], PAGE_TYPE_CODE[PageType.XML]])
    ids, last = view["id"][read], view["last_access"][read]
    fresh = total = 0
    for url, seen in zip(md.urls_of(ids.tolist()), last.tolist(), strict=True):
        try:
            page = truth.page_id(url)
        except KeyError:
            continue
        changes = truth.change_times(page, at)
        total += 1
        fresh += not changes or changes[-1] <= seen
    return (fresh / total if total else float("nan")), total


def rate_error(md: Metadata, truth: GroundTruth) -> float | None:
    """Median relative error of the estimated λ against the true one (None: no estimate)."""
    ids, estimated = md.scores("change_rate")
    true_rates = truth.change_rates()
    errors = []
    for url, rate in zip(md.urls_of(ids.tolist()), estimated.tolist(), strict=True):
        try:
            true_rate = true_rates[truth.page_id(url)]
        except KeyError:
            continue
        if true_rate > 0:
            errors.append(abs(rate - true_rate) / true_rate)
    return float(np.median(errors)) if errors else None


def top_pages(md: Metadata, column: str, page_type: PageType, count: int = 5) -> list[tuple]:
    """The ``count`` pages of a type with the highest score in ``column``: (score, URL)."""
    view = md.refresh_view()
    of_type = (view["type"] == PAGE_TYPE_CODE[page_type]) & ~np.isnan(view[column])
    ids, values = view["id"][of_type], view[column][of_type]
    best = np.argsort(-values, kind="stable")[:count]
    urls = md.urls_of(ids[best].tolist())
    return list(zip(values[best].tolist(), urls, strict=True))


def opic_agreement(md: Metadata) -> tuple[float, int] | None:
    """Spearman's ρ between OPIC's on-line importance and the ranking's, over the XML pages
    both scored (OPIC's fixpoint is the ranking's PageRank: §3 of the OPIC paper)."""
    view = md.refresh_view()
    both = (
        (view["type"] == PAGE_TYPE_CODE[PageType.XML])
        & np.isfinite(view["importance"])
        & np.isfinite(view["opic_importance"])
    )
    if both.sum() < 3:
        return None
    ranks = [_ranks(view[column][both]) for column in ("importance", "opic_importance")]
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = float(np.corrcoef(*ranks)[0, 1])
    return (rho, int(both.sum())) if math.isfinite(rho) else None


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given their mean rank (Spearman's convention). Numpy's: scipy.stats
    alone would add 70 MB to the demo's memory."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2)[inverse]


def versions(repository: Path) -> tuple[int, int, int]:
    """Documents stored, versions stored, documents with more than one version."""
    store = VersionStore(repository / "documents")
    try:
        counts = [len(document.versions) for document in store.documents()]
    finally:
        store.close()
    return len(counts), sum(counts), sum(count > 1 for count in counts)


def policy_lines(run: DemoRun, plan: DemoPlan) -> list[str]:
    """Obsolescence against Ω(G) and refreshes per unit against G_r, over the run's second half
    (the first one is the discovery of the web). Each refresh pass records the obsolescence
    averaged over the unit before it, so their mean is the second half's time average: the
    quantity Ω(G) is the optimum of (paper §6.4)."""
    late = run.obsolescence[len(run.obsolescence) // 2 :]
    if not late:
        return ["  obsolescence: no refresh pass ran (the run was shorter than a time unit)"]
    measured = float(np.mean([obsolescence for _, obsolescence, _ in late]))
    optimum = float(np.mean([omega for _, _, omega in late]))
    refreshes = run.refreshes_per_unit[len(run.refreshes_per_unit) // 2 :]
    g_r = plan.G * (1 - plan.theta)
    return [
        f"  refresh: {sum(run.refreshes_per_unit)} refreshes in {len(run.obsolescence)} passes;"
        f" {np.mean(refreshes):.0f} per day in the second half for G_r = {g_r:.0f}",
        f"  obsolescence (Σ r·λ·age, time average over the second half): {measured:.4g},"
        f" optimum Ω(G) = S²/(2·G_r) = {optimum:.4g} (ratio {measured / optimum:.2f})",
    ]


def recheck_lines(run: DemoRun) -> list[str]:
    """The LiveRank re-check's outcome, or why there was none."""
    if run.recheck_refused is not None:
        return [f"  LiveRank re-check (day {run.recheck_day:.1f}) refused: {run.recheck_refused}"]
    if run.recheck is None:
        return ["  LiveRank re-check: not started (the run ended before its day)"]
    if run.recheck.get("state") != "done":
        return [f"  LiveRank re-check ({run.recheck.get('state')}): {run.recheck.get('line')}"]
    text = summary_text(run.recheck).splitlines()
    return [f"  LiveRank re-check (day {run.recheck_day:.1f}), {text[0]}", *text[1:]]


def summary(repository: Path, plan: DemoPlan, truth: GroundTruth, run: DemoRun) -> str:
    """The closing report: every part of the mission, scored where the truth allows."""
    documents, stored, changed = versions(repository)
    with Metadata.open(repository / "metadata.db", readonly=True) as md:
        counts = md.count_by_type()
        fresh, scored = freshness(md, truth, run.end)
        error = rate_error(md, truth)
        top_xml = top_pages(md, "importance", PageType.XML)
        top_html = top_pages(md, "interest", PageType.HTML)
        top_opic = top_pages(md, "opic_importance", PageType.XML)
        agreement = opic_agreement(md)
    lines = [
        "",
        "Summary",
        "  crawl: " + ", ".join(f"{count} {kind.value}" for kind, count in counts.items() if count),
        f"  load: {stored} versions of {documents} XML documents stored,"
        f" {changed} documents with several versions",
        f"  freshness: {fresh:.1%} of {scored} pages read are current"
        f" (G = {plan.G:.0f}/day for {plan.pages} pages)",
        *policy_lines(run, plan),
        "  λ estimates: "
        + (
            f"median relative error {error:.0%} against the simulated web's truth"
            if error is not None
            else "none yet (no refresh pass has estimated a change rate)"
        ),
        f"  ranking: {run.rankings} pass{'' if run.rankings == 1 else 'es'}"
        " (importance of XML, interest of HTML)",
        "  OPIC: "
        + (
            f"its on-line importance agrees with the last ranking pass at Spearman ρ ="
            f" {agreement[0]:.2f} over {agreement[1]} XML pages"
            if agreement
            else "no ranking pass to compare its on-line importance with"
        ),
        *recheck_lines(run),
    ]
    for title, rows in (
        ("top XML by importance", top_xml),
        ("top HTML by interest", top_html),
        ("top XML by OPIC's on-line importance", top_opic),
    ):
        lines.append(f"  {title}:" + ("" if rows else " none yet"))
        lines += [f"    {score:.4g}  {url}" for score, url in rows]
    lines += [
        "",
        f"Plots: {repository / PLOTS / 'index.html'}",
        f"The repository stays in {repository}; explore it with:",
        f"  xyleme --repo {repository} status",
        f"  xyleme --repo {repository} export pages --format csv",
        f"  xyleme --repo {repository} config show",
        f"  xyleme --repo {repository} page URL",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------- plots


def charts(repository: Path, plan: DemoPlan, run: DemoRun) -> dict[str, str]:
    """The plots of the run, by file name: one SVG element each."""
    day = np.array([facts["day"] for facts in run.timeline])

    def series(key: str) -> np.ndarray:
        return np.array([facts[key] for facts in run.timeline], dtype=np.float64)

    passes = np.array([(at - run.start) / 86_400.0 for at, _, _ in run.obsolescence])
    with Metadata.open(repository / "metadata.db", readonly=True) as md:
        _, importance = md.scores("importance")
        _, interest = md.scores("interest")
        _, opic = md.scores("opic_importance")
    recheck = run.recheck if run.recheck and run.recheck.get("state") == "done" else {}
    return {
        "crawl.svg": line_chart(
            "Crawl and load: pages and XML versions over the run",
            day,
            {
                "known": series("known"),
                "read": series("read"),
                "XML read": series("xml"),
                "XML versions stored": series("stored"),
            },
            x_label="simulated day",
            y_label="pages",
        ),
        "obsolescence.svg": line_chart(
            "Refresh: obsolescence Σ r·λ·age against its optimum Ω(G)",
            passes,
            {
                "obsolescence": np.array([value for _, value, _ in run.obsolescence]),
                "Ω(G)": np.array([omega for _, _, omega in run.obsolescence]),
            },
            x_label="simulated day (refresh passes)",
        ),
        "refreshes.svg": bar_chart(
            "Refresh cycles: pages refreshed per day",
            _pass_days(passes, len(run.refreshes_per_unit)),
            run.refreshes_per_unit,
            x_label="simulated day of the refresh pass",
            y_label="refreshes",
            reference=plan.G * (1 - plan.theta),
            reference_label="G_r",
        ),
        "ranks.svg": rank_plot(
            "Importance (XML), interest (HTML) and OPIC's on-line importance",
            {
                name: rank_sample(np.sort(values[np.isfinite(values)])[::-1])
                for name, values in (
                    ("importance", importance),
                    ("interest", interest),
                    ("OPIC", opic),
                )
            },
        ),
        "recheck.svg": bar_chart(
            f"LiveRank re-check: {recheck.get('fetches', 0)} pages probed",
            ["alive", "dead", "unknown"],
            [recheck.get(key, 0) for key in ("alive", "dead", "unknown")],
            y_label="pages",
        ),
    }


def _pass_days(passes: np.ndarray, count: int) -> list[str]:
    """The bars' labels: the simulated day of each refresh pass (its index if unknown)."""
    if len(passes) == count:
        return [f"{day:.0f}" for day in passes.tolist()]
    return [str(index) for index in range(count)]


def write_plots(repository: Path, plan: DemoPlan, run: DemoRun) -> Path:
    """Write the plots and a page holding them all into ``PLOTS``; the page's path."""
    folder = repository / PLOTS
    folder.mkdir(exist_ok=True)
    drawn = charts(repository, plan, run)
    for name, svg in drawn.items():
        (folder / name).write_text(svg, encoding="utf-8")
    page = folder / "index.html"
    page.write_text(
        "<!doctype html><meta charset='utf-8'><title>xyleme demo</title>"
        f"<h1>xyleme demo: {escape(str(repository))}</h1>"
        f"<p>{escape(plan.describe())}</p>" + "".join(f"<p>{svg}</p>" for svg in drawn.values()),
        encoding="utf-8",
    )
    return page
