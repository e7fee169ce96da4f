"""The demo's progress display: a rich live panel on a terminal, plain log lines elsewhere.

Both render the same *progress facts*, a dict the demo samples from the running daemon:
``day``/``days`` (simulated days elapsed / planned), ``known``, ``read``, ``xml``, ``errors``
(pages), ``stored`` (XML versions the loader stored), ``fetch_rate`` (pages per real
second), ``queues`` (level → requests waiting),
``obsolescence`` and ``omega`` (the repository's current obsolescence and the optimum
Ω(G) of the refresh policy, None until the first refresh pass); optionally ``refreshed``
(refreshes so far), ``rankings`` (ranking passes so far) and ``recheck`` (the LiveRank
re-check's progress line, None before it starts).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

LEVEL_NAMES = {0: "dependency", 1: "refresh", 2: "discovery", 3: "scouting", 4: "background"}


def queues_text(queues: dict[Any, int]) -> str:
    """Queue sizes by level name, the empty ones left out."""
    waiting = {int(level): size for level, size in queues.items() if size}
    if not waiting:
        return "empty"
    return "  ".join(
        f"{LEVEL_NAMES.get(level, level)} {size}" for level, size in sorted(waiting.items())
    )


def _obsolescence(facts: dict[str, Any]) -> str:
    if facts.get("obsolescence") is None:
        return "- (before the first refresh pass)"
    text = f"{facts['obsolescence']:.4g}"
    if facts.get("omega") is not None:
        text += f"  (optimum Ω(G) {facts['omega']:.4g})"
    return text


def _passes(facts: dict[str, Any]) -> str:
    """Refreshes and ranking passes so far, when the facts have them."""
    parts = []
    if "refreshed" in facts:
        parts.append(f"{facts['refreshed']} refreshed")
    if "rankings" in facts:
        parts.append(f"{facts['rankings']} ranking passes")
    return ", ".join(parts)


def plain_line(facts: dict[str, Any]) -> str:
    """One log line of progress (when stdout is not a terminal)."""
    passes = _passes(facts)
    return (
        f"day {facts['day']:.1f}/{facts['days']:g}  known {facts['known']}  read {facts['read']}"
        f"  XML {facts['xml']} ({facts['stored']} versions stored)  errors {facts['errors']}"
        f"  {facts['fetch_rate']:.0f} pages/s"
        f"  queues {queues_text(facts['queues'])}  obsolescence {_obsolescence(facts)}"
        + (f"  {passes}" if passes else "")
        + (f"  re-check {facts['recheck']}" if facts.get("recheck") else "")
    )


def live_panel(facts: dict[str, Any]) -> Group:
    """The rich renderable of the live view."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", justify="right")
    table.add_column()
    done = min(facts["day"], facts["days"])
    table.add_row("simulated day", f"{facts['day']:.1f} of {facts['days']:g}")
    table.add_row("", ProgressBar(total=facts["days"], completed=done, width=50))
    table.add_row(
        "pages",
        f"{facts['known']} known, {facts['read']} read, {facts['xml']} XML "
        f"({facts['stored']} versions stored), {facts['errors']} errors",
    )
    table.add_row("fetch rate", f"{facts['fetch_rate']:.0f} pages/s")
    table.add_row("queues", queues_text(facts["queues"]))
    table.add_row("obsolescence", _obsolescence(facts))
    if _passes(facts):
        table.add_row("so far", _passes(facts))
    if facts.get("recheck"):
        table.add_row("LiveRank re-check", facts["recheck"])
    return Group(
        Text("xyleme demo: the acquisition daemon on the simulated web", style="bold"), table
    )
