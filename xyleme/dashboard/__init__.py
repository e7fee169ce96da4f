"""The web dashboard and JSON API of a repository (issue 10); see ``docs/dashboard.md``.

:func:`create_app` builds the aiohttp application, standalone (``xyleme dashboard``) or
mounted in the daemon, which passes its live figures (:class:`LiveFigures`) and admin
actions (:class:`AdminActions`).
"""

from xyleme.dashboard.app import create_app
from xyleme.dashboard.live import AdminActions, LiveFigures
from xyleme.dashboard.serving import DaemonFigures, run_with_dashboard, serving
from xyleme.dashboard.settings import DashboardSettings
from xyleme.dashboard.svg import bar_chart, line_chart, rank_plot, rank_sample

__all__ = [
    "AdminActions",
    "DaemonFigures",
    "DashboardSettings",
    "LiveFigures",
    "bar_chart",
    "create_app",
    "line_chart",
    "rank_plot",
    "rank_sample",
    "run_with_dashboard",
    "serving",
]
