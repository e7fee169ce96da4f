"""The typed keys under which the dashboard application keeps its parts.

A module of their own so that the application factory (:mod:`.app`) and the request handlers
(:mod:`.views`, :mod:`.admin`) can share them without importing each other.
"""

from __future__ import annotations

import jinja2
from aiohttp import web

from xyleme.dashboard.cache import Refreshed
from xyleme.dashboard.figures import RepositoryFigures
from xyleme.dashboard.live import AdminActions, LiveHistory
from xyleme.dashboard.queries import QueryPool
from xyleme.dashboard.settings import DashboardSettings
from xyleme.dashboard.statusprocess import StatusProcess

FIGURES = web.AppKey("figures", RepositoryFigures)
SETTINGS = web.AppKey("settings", DashboardSettings)
HISTORY = web.AppKey("history", LiveHistory)
ADMIN_TOKEN = web.AppKey("admin_token", str)
ACTIONS = web.AppKey("actions", AdminActions)
TEMPLATES = web.AppKey("templates", jinja2.Environment)
QUERIES = web.AppKey("queries", QueryPool)
STATUS = web.AppKey("status", Refreshed)
STATUS_PROCESS = web.AppKey("status_process", StatusProcess)
