"""Logging of ``xyleme run`` and ``xyleme demo``: one line per record on stderr.

``text`` is for people (time, level, logger, message); ``json`` is one object per line for
log collectors (journald, Loki, a container runtime).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

FORMATS = ("text", "json")


class JSONFormatter(logging.Formatter):
    """A record as ``{"time", "level", "logger", "message"[, "error"]}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(fmt: str = "text", level: int = logging.INFO) -> None:
    """Send every logger's records to stderr in ``fmt`` (replaces earlier handlers)."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JSONFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
