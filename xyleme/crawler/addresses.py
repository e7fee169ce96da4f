"""The SSRF guard: the crawler connects to a loopback, private, link-local, multicast or
reserved address only when the scope names it.

A page can link anywhere, and a name can resolve anywhere (``localtest.me`` is 127.0.0.1; a
name can even change its answer between a check and the connection: DNS rebinding). So the
guard sits where the connection is made: it wraps the connector's resolver, whose answers
are exactly the addresses aiohttp connects to, and checks URLs whose host is an address
(aiohttp does not resolve those). Which private addresses the scope vouches for is its call
(:meth:`xyleme.crawler.scope.Scope.vouches_for`).
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp.abc import AbstractResolver

if TYPE_CHECKING:
    from aiohttp.abc import ResolveResult

Vouch = Callable[[str, str], bool]
"""``vouch(host, address)``: whether the scope lets ``host`` be reached at a private address."""

_KINDS = (
    ("is_loopback", "loopback"),
    ("is_unspecified", "unspecified"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_reserved", "reserved"),
    ("is_private", "private"),
)


class AddressRefused(OSError):
    """A name or URL that leads to an address the scope does not vouch for."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def vouch_for_nothing(host: str, address: str) -> bool:
    """The default: no private address is reachable."""
    return False


def non_public(address: str) -> str | None:
    """What kind of non-public address ``address`` is (loopback, private…), None if public.

    >>> non_public("127.0.0.1"), non_public("::ffff:10.0.0.1"), non_public("93.184.216.34")
    ('loopback', 'private', None)
    """
    ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for attribute, kind in _KINDS:
        if getattr(ip, attribute):
            return kind
    return None if ip.is_global else "non-global"


def _refusal(host: str, address: str, kind: str) -> str:
    shown = address if host == address else f"{host} resolves to {address}, which"
    return f"out of scope: {shown} is a {kind} address the scope does not name (SSRF guard)"


def literal_refusal(host: str, vouch: Vouch) -> str | None:
    """Why a URL whose host is an IP address may not be connected to (None: it may, or the
    host is a name, left to :class:`GuardedResolver`)."""
    literal, kind = _literal_kind(host)
    if not literal or kind is None or vouch(host, host):
        return None  # a name, a public address, or one the scope vouches for
    return _refusal(host, host, kind)


@functools.lru_cache(maxsize=4096)
def _literal_kind(host: str) -> tuple[bool, str | None]:
    """Whether ``host`` is an IP address, and its :func:`non_public` kind; remembered, as
    every request asks and ``ipaddress`` parses slowly (a name fails two parses)."""
    try:
        return True, non_public(host)
    except ValueError:
        return False, None


class GuardedResolver(AbstractResolver):
    """Wraps a resolver and keeps only the addresses the crawler may connect to.

    Public addresses always pass; a non-public one passes when ``vouch(host, address)``.
    A name left with no address raises :class:`AddressRefused`, which the fetcher records
    as an out-of-scope failure (not as a dead host).
    """

    def __init__(self, inner: AbstractResolver, vouch: Vouch) -> None:
        self.inner = inner
        self._vouch = vouch

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        kept = []
        refused: tuple[str, str] | None = None
        for entry in found:
            kind = non_public(entry["host"])
            if kind is None or self._vouch(host, entry["host"]):
                kept.append(entry)
            elif refused is None:
                refused = (entry["host"], kind)
        if not kept and refused is not None:
            raise AddressRefused(_refusal(host, *refused))
        return kept

    async def close(self) -> None:
        await self.inner.close()
