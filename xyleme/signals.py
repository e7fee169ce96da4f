"""The named events of xyleme, and the dispatcher that fires them.

Modules listen to what happened without importing who made it happen (Scrapy's
``signals.py`` + ``SignalManager``): OPIC, the refresh policy and the statistics connect to
the crawler's events; the crawler fires them *after* the metadata transaction that recorded
the fetch has committed, so a listener always reads a database that already holds the page.

Every listener is called with one argument, the event (for the crawler's signals a
:class:`xyleme.crawler.CrawlEvent`: the committed ``FetchResult``, the URL, the level it was
queued at and what the HTML said about itself).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

page_fetched = object()
"""Fired for every page read (any type but ERROR/DEAD), changed or not, 304s included."""

page_changed = object()
"""Fired for a page read whose MD5 differs from the stored one (never for a 304)."""

page_dead = object()
"""Fired when a fetch ends as DEAD (404/410, DNS failure): the page is gone from the web."""

page_failed = object()
"""Fired when a fetch ends as ERROR (timeout, 5xx, over-size body, robots disallow…)."""

SIGNAL_NAMES: dict[object, str] = {
    page_fetched: "page_fetched",
    page_changed: "page_changed",
    page_dead: "page_dead",
    page_failed: "page_failed",
}

Listener = Callable[..., Any]


class SignalManager:
    """Listeners per signal; :meth:`send_catch_log` calls them and never lets one break us.

    >>> signals = SignalManager()
    >>> seen = []
    >>> signals.connect(page_fetched, seen.append)
    >>> signals.send_catch_log(page_fetched, "page 1")
    >>> seen
    ['page 1']
    """

    def __init__(self) -> None:
        self._listeners: dict[object, list[Listener]] = {}

    def connect(self, signal: object, listener: Listener) -> None:
        """Call ``listener(event)`` each time ``signal`` is sent."""
        if signal not in SIGNAL_NAMES:
            raise ValueError(f"unknown signal {signal!r}: use one of xyleme.signals' sentinels")
        self._listeners.setdefault(signal, []).append(listener)

    def has_listeners(self, signal: object) -> bool:
        """Whether anybody listens (lets the sender skip building an event nobody reads)."""
        return bool(self._listeners.get(signal))

    def send_catch_log(self, signal: object, event: Any) -> None:
        """Call every listener of ``signal``; a listener that raises is logged and skipped."""
        for listener in tuple(self._listeners.get(signal, ())):
            try:
                listener(event)
            except Exception:
                log.exception("listener %r of %s failed (ignored)", listener, SIGNAL_NAMES[signal])
