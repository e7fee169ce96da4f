"""Name resolution for the simulated web: ``siteN.simweb.test`` → the server on 127.0.0.1.

The URLs of the simulated web carry no port (``http://site3.simweb.test/``), so a
repository keeps its URL-Ids whatever port the server got. The crawler's aiohttp connector
asks this resolver for the address of a host; the answer is 127.0.0.1 and the server's real
port, whatever port the URL implied (aiohttp connects to the port the resolver returns).
Any other name fails like a DNS failure (:class:`socket.gaierror`, an :class:`OSError`), so
links to vanished hosts exercise the crawler's DNS-error path, and nothing reaches the
internet. So does a simulated host that has died by the current simulated time (an aged web,
:mod:`xyleme.simweb.aging`), when the resolver is given an ``is_down`` predicate.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterable

from aiohttp.abc import AbstractResolver, ResolveResult

LOOPBACK = "127.0.0.1"
_SIMULATED_HOST = re.compile(r"site\d+\.simweb\.test")


class SimWebResolver(AbstractResolver):
    """Resolves the simulated hosts to ``127.0.0.1:port``; every other name fails.

    Parameters
    ----------
    port
        The port the simulated web's server listens on.
    hosts
        The host names that exist (e.g. ``SimWeb.host_names``); None accepts every
        ``siteN.simweb.test`` (a process that knows only the port, e.g. the daemon of the demo).
    is_down
        Says whether a (lower-case) host name has died by now: such a host fails to resolve,
        as the dead hosts of an old crawl do (LiveRank paper §3.1). The server's
        :meth:`~xyleme.simweb.server.SimWebServer.resolver` asks its web at its clock's time.

    Examples
    --------
    >>> import asyncio
    >>> resolver = SimWebResolver(8123, ["site0.simweb.test"])
    >>> asyncio.run(resolver.resolve("site0.simweb.test", 80))[0]["port"]
    8123
    """

    def __init__(
        self,
        port: int,
        hosts: Iterable[str] | None = None,
        is_down: Callable[[str], bool] | None = None,
    ) -> None:
        self.port = port
        self.hosts = None if hosts is None else frozenset(name.lower() for name in hosts)
        self.is_down = is_down

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        name = host.lower().rstrip(".")
        known = _SIMULATED_HOST.fullmatch(name) if self.hosts is None else name in self.hosts
        if not known:
            raise socket.gaierror(socket.EAI_NONAME, f"simweb: no such host {host!r}")
        if self.is_down is not None and self.is_down(name):
            raise socket.gaierror(socket.EAI_NONAME, f"simweb: host {host!r} is dead")
        return [
            {
                "hostname": host,
                "host": LOOPBACK,
                "port": self.port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        """Nothing to release."""
