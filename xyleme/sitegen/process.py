"""The realistic site served by a process of its own, as a real site is by another machine.

Why: a crawl measured against a server in its own process pays for the server too (its
request handling, compression and access log run on the crawler's event loop and take its
GIL: about half the loop's busy time in ``benchmarks/bench_site.py``), which no crawl of a
real site does. :class:`RealSiteProcess` runs :class:`~xyleme.sitegen.server.RealSiteServer`
in a child process and builds the same site for the child's ports here (generation is
deterministic from the spec), so the crawler and the ground truth see one site; the access
log is asked of the child when read.

    async with RealSiteProcess(SiteSpec(size=300)) as served:
        ...  # crawl served.site.seeds with served.resolver(), then served.out_of_scope()
"""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.connection import Connection

from xyleme.sitegen.build import SiteSpec, build_site
from xyleme.sitegen.model import Site
from xyleme.sitegen.server import Access, RealSiteServer, ServedSite

START_TIMEOUT_S = 120.0
"""Real seconds for the child to import, build the site and bind (a loaded machine is slow)."""
_ACCESSES, _STOP = "accesses", "stop"


def _serve(spec: SiteSpec, channel: Connection) -> None:
    """The child: serve the site, tell its ports, answer for its access log until stopped."""

    async def serve() -> None:
        async with RealSiteServer(spec) as served:
            channel.send((served.port, served.offsite_port))
            while True:
                command = await asyncio.to_thread(channel.recv)
                channel.send(served.accesses)
                if command == _STOP:
                    return

    asyncio.run(serve())


class RealSiteProcess(ServedSite):
    """The site of ``spec`` served by a child process (see the module docstring)."""

    def __init__(self, spec: SiteSpec | None = None) -> None:
        self.spec = spec or SiteSpec()
        self.site: Site | None = None
        self.port = self.offsite_port = 0
        self._channel: Connection | None = None
        self._process: multiprocessing.process.BaseProcess | None = None
        self._stopped: list[Access] | None = None  # the log as it was at the stop

    @property
    def accesses(self) -> list[Access]:  # type: ignore[override]
        """The child's access log, as of now (or of its stop)."""
        return self._ask(_ACCESSES) if self._stopped is None else self._stopped

    def _ask(self, command: str) -> list[Access]:
        assert self._channel is not None, "the site is not served"
        self._channel.send(command)
        return self._channel.recv()

    async def start(self) -> None:
        """Start the child; build the site for the ports it bound."""
        spawn = multiprocessing.get_context("spawn")  # the parent may run threads: no fork
        self._channel, child_end = spawn.Pipe()
        self._process = spawn.Process(
            target=_serve, args=(self.spec, child_end), name="realsite", daemon=True
        )
        self._process.start()
        child_end.close()
        if not await asyncio.to_thread(self._channel.poll, START_TIMEOUT_S):
            self._process.kill()
            raise RuntimeError(f"the site's server did not start within {START_TIMEOUT_S:g} s")
        self.port, self.offsite_port = self._channel.recv()
        self.site = build_site(self.spec, self.port, self.offsite_port)

    async def stop(self) -> None:
        """Stop the child; :attr:`accesses` keeps its last log."""
        assert self._process is not None and self._channel is not None
        self._stopped = []
        if self._process.is_alive():
            self._stopped = await asyncio.to_thread(self._ask, _STOP)
        await asyncio.to_thread(self._process.join, 10.0)
        if self._process.is_alive():
            self._process.kill()
        self._channel.close()
