"""The daemon's answers to the CLI's state-changing commands (:mod:`xyleme.commands`).

The CLI queues a command in the command table while a daemon holds the repository; the
daemon's :class:`DaemonControl` (its :class:`~xyleme.commands.CommandTarget`) runs it on the
event loop at the next :meth:`DaemonControl.poll` and writes the answer back. The dashboard's
admin actions call the same methods.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from metadata import Metadata, StoreError
from ranking import RankingError
from xyleme import commands
from xyleme.commands import Answer
from xyleme.config import Config
from xyleme.crawler import Crawler, Level, Scope
from xyleme.jobs.ranking import RankingPass
from xyleme.jobs.recheck_task import RecheckTask
from xyleme.live_status import LiveStatus
from xyleme.scope_config import repository_scope, seed_refusals
from xyleme.workers import Workers

log = logging.getLogger(__name__)


class DaemonControl:
    """Seeds, pause and resume, ``rank compute`` and ``recheck`` run by the daemon."""

    def __init__(
        self,
        md: Metadata,
        config: Config,
        crawler: Crawler,
        workers: Workers,
        ranking: RankingPass,
        rechecks: RecheckTask,
        live: LiveStatus,
    ) -> None:
        self.md = md
        self.config = config
        self.crawler = crawler
        self.workers = workers
        self.ranking = ranking
        self.rechecks = rechecks
        self.live = live
        self.paused = commands.is_paused(md)
        """Whether fetching is paused (the choice survives a restart)."""

    def live_status(self) -> dict[str, Any]:
        """The daemon's in-memory figures of this instant (``xyleme status`` while it runs)."""
        return self.live()

    async def poll(self) -> None:
        """Run the commands the CLI queued while we hold the repository, and answer them."""
        try:
            pending = commands.take_pending(self.md)
        except StoreError as error:
            log.warning("could not read the command table: %s", error)
            return
        for command_id, name, args in pending:
            try:
                reply = commands.execute(self, name, args)
                if inspect.isawaitable(reply):
                    reply = await reply
            except Exception as error:  # a bad command must not take the daemon down
                log.exception("command %r failed", name)
                reply = Answer(f"{name} failed: {error}", ok=False)
            log.info("command %s: %s", name, reply.message)
            commands.answer(self.md, command_id, reply)

    def add_seeds(self, urls: list[str]) -> Answer:
        """``seed add``: store the seeds like the CLI would, widen the scope, queue them.

        A seed the scope refuses refuses the whole command (nothing is added)."""
        refused = seed_refusals(self.config, urls)
        if refused:
            shown = "; ".join(f"seed {url} refused: {reason}" for url, reason in refused)
            return Answer(f"{shown}. Nothing added", {"refused": dict(refused)}, ok=False)
        reply = commands.RepositoryTarget(self.md).add_seeds(urls)
        self.crawler.scope = self.scope()
        for url in reply.data["added"]:
            self.crawler.submit(url, Level.SCOUTING)
        return reply

    def remove_seeds(self, urls: list[str]) -> Answer:
        """``seed remove``: forget the seeds like the CLI would; the scope follows (a scope
        made of the seeds' hosts narrows). Queued requests stay: their pages are known."""
        reply = commands.RepositoryTarget(self.md).remove_seeds(urls)
        self.crawler.scope = self.scope()
        return reply

    async def compute_ranking(self) -> Answer:
        """``rank compute`` handed over by the CLI: a ranking pass now, with [ranking]."""
        try:
            figures = await self.ranking.run()
        except RankingError as error:
            return Answer(f"{error} (no score was written)", ok=False)
        interest = figures["interest_sweeps"]
        return Answer(
            f"ranked {figures['pages']} pages ({figures['xml_pages']} XML) over "
            f"{figures['links']} links by the daemon: importance in "
            f"{figures['importance_sweeps']} sweeps"
            + ("" if interest is None else f", interest in {interest}"),
            figures,
        )

    async def recheck(self, args: dict[str, Any]) -> Answer:
        """``recheck`` handed over by the CLI: a background re-check (:class:`RecheckTask`)."""
        return await self.rechecks.start(args)

    async def set_paused(self, paused: bool) -> Answer:
        """``pause`` / ``resume``: stop or restart the workers; the choice survives a restart."""
        self.paused = paused
        if paused:
            await self.rechecks.cancel()  # it fetches with the crawler's session
            await self.workers.stop()
        else:
            self.workers.start()
        return commands.RepositoryTarget(self.md).set_paused(paused)

    def scope(self) -> Scope:
        """``[crawler] scope`` rules, else the seeds' sites (grows with ``seed add``)."""
        return repository_scope(self.config, commands.stored_seeds(self.md))
