"""The checkpoint job: what lives only in the daemon's memory, saved in the store.

The simulated clock, OPIC (its snapshot and its two score columns), the figures of
``xyleme status`` and the crawler's per-host facts of ``xyleme hosts``. After a kill -9 the
next start resumes from the database and the last checkpoint (:mod:`xyleme.status`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from metadata import Metadata
from metadata.clock import Clock
from metadata.reports import write_host_stats
from ranking.opic import OPIC
from xyleme.crawler import Crawler
from xyleme.status import save_clock, save_live_status


class Checkpoint:
    """Saves the daemon's memory: :meth:`write` at start and stop, :meth:`periodic` between.

    ``live_status`` gives the figures of ``xyleme status`` (the daemon's ``live_status``).
    """

    def __init__(
        self,
        md: Metadata,
        clock: Clock,
        opic: OPIC,
        opic_key: str,
        crawler: Crawler,
        live_status: Callable[[], dict[str, Any]],
    ) -> None:
        self.md = md
        self.clock = clock
        self.opic = opic
        self.opic_key = opic_key
        self.crawler = crawler
        self.live_status = live_status

    def write(self) -> None:
        """A checkpoint now, on the calling thread (the start and the stop)."""
        self._write(*self._capture())

    async def periodic(self) -> None:
        """The periodic checkpoint: state captured on the loop in milliseconds (OPIC is fed
        there and is not thread-safe), written in a thread so fetching never waits for it."""
        await asyncio.to_thread(self._write, *self._capture())

    def _capture(self) -> tuple[bytes, dict[str, Any], list[dict[str, Any]]]:
        return self.opic.snapshot(), self.live_status(), self.crawler.host_snapshot()

    def _write(
        self, opic_snapshot: bytes, live: dict[str, Any], hosts: list[dict[str, Any]]
    ) -> None:
        """Write a checkpoint taken on the loop (may run in a thread: it owns its copies)."""
        save_clock(self.md, self.clock)
        OPIC.from_snapshot(opic_snapshot).checkpoint(self.md, self.opic_key)
        save_live_status(self.md, live)
        write_host_stats(self.md, hosts, live["at"])
