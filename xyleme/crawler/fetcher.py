"""The fetcher: the only code in xyleme that opens a socket.

One aiohttp ``ClientSession`` per crawler (aiohttp: "don't create a session per request"),
opened by :meth:`Fetcher.open` and closed by :meth:`Fetcher.close`. Limits live in the
connector (``limit``, ``limit_per_host``), timeouts in a ``ClientTimeout``, name resolution in
an injectable resolver with a DNS cache, wrapped by the SSRF guard
(:mod:`xyleme.crawler.addresses`): a private address is reached only when the scope vouches
for it. Redirects are *not* followed here: the crawler
records each hop with its own URL-Id. Bodies are streamed under a byte cap, and gzip/deflate
are decoded here (``auto_decompress=False``) under a cap on the decoded size, so neither a
huge page nor a decompression bomb can exhaust memory (the paper's "huge files ... bigger
than the size of main memory").
"""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import tempfile
import zlib
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

import aiohttp
from multidict import CIMultiDictProxy

from xyleme.crawler.addresses import (
    AddressRefused,
    GuardedResolver,
    Vouch,
    literal_refusal,
    vouch_for_nothing,
)
from xyleme.crawler.content import SNIFF_BYTES
from xyleme.crawler.exchanges import exchange_of, peer_address
from xyleme.crawler.settings import CrawlerSettings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Mapping

    from xyleme.archive import ExchangeSink

SPOOL_PREFIX, SPOOL_SUFFIX = "xyro-", ".body"
SPOOLED_BODIES = f"{SPOOL_PREFIX}*{SPOOL_SUFFIX}"
"""The names of spooled bodies' files (a glob pattern), so leftovers can be found."""

_CHUNK = 64 * 1024
_HEAD = SNIFF_BYTES  # bytes of a body kept for sniffing its type
_PIECES_PER_YIELD = 8  # decoded pieces (of _CHUNK bytes) between two turns of the event loop


class FetchError(Exception):
    """A fetch that produced no usable response; ``kind`` names the failure for the stats.

    ``dead`` is True when the failure says the page is gone (the host does not resolve).
    """

    def __init__(self, kind: str, reason: str, *, dead: bool = False) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.dead = dead


@dataclass(slots=True)
class Response:
    """A response whose body (decoded, within the caps) has been read."""

    url: str
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes
    wire_bytes: int


def describe_error(error: BaseException) -> FetchError:
    """The :class:`FetchError` an aiohttp / OS exception stands for (kind and reason)."""
    if isinstance(error, FetchError):
        return error
    if isinstance(error, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return FetchError("timeout", f"timeout: {error or type(error).__name__}")
    if isinstance(error, AddressRefused):
        return FetchError("scope", error.reason)
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        if isinstance(error.os_error, AddressRefused):
            return FetchError("scope", error.os_error.reason)
        return FetchError("dns", f"DNS failure: {error.os_error}", dead=True)
    if isinstance(error, aiohttp.ClientSSLError | ssl.SSLError):
        return FetchError("tls", f"TLS error: {error}")
    if isinstance(error, aiohttp.ClientConnectorError):
        return FetchError("connect", f"connection failed: {error.os_error}")
    if isinstance(error, aiohttp.TooManyRedirects | aiohttp.InvalidURL):
        return FetchError("protocol", f"{type(error).__name__}: {error}")
    if isinstance(error, aiohttp.ClientPayloadError):
        return FetchError("protocol", f"broken body: {error}")
    if isinstance(error, aiohttp.ClientResponseError):
        return FetchError("protocol", f"bad response: {error.message}")
    if isinstance(error, aiohttp.ClientError | OSError):
        return FetchError("connect", f"{type(error).__name__}: {error}")
    return FetchError("internal", f"{type(error).__name__}: {error}")


def decoded_pieces(body: bytes, encoding: str | None, limit: int) -> Iterator[bytes]:
    """Undo a gzip/deflate Content-Encoding piece by piece, refusing more than ``limit`` bytes.

    Pieces are at most 64 KiB, so a big decoded body can go to a file without ever being
    whole in memory.

    >>> import gzip
    >>> b"".join(decoded_pieces(gzip.compress(b"<a/>"), "gzip", 100))
    b'<a/>'
    >>> b"".join(decoded_pieces(gzip.compress(b"0" * 1000), "gzip", 100))
    Traceback (most recent call last):
    ...
    xyleme.crawler.fetcher.FetchError: decoded body over 100 bytes (decompression bomb?)
    """
    coding = (encoding or "identity").strip().lower()
    if coding in ("", "identity"):
        yield body
        return
    if coding in ("gzip", "x-gzip"):
        attempts = [16 + zlib.MAX_WBITS]
    elif coding == "deflate":
        attempts = [zlib.MAX_WBITS, -zlib.MAX_WBITS]  # zlib-wrapped, or raw as some send
    else:
        raise FetchError("encoding", f"unsupported Content-Encoding {coding!r}")
    for wbits in attempts:
        decoder = zlib.decompressobj(wbits)
        try:
            piece = decoder.decompress(body, _CHUNK)
        except zlib.error as error:
            last_error = error  # the wrong wrapping shows on the first piece: try the next
            continue
        produced = 0
        try:
            while piece:
                produced += len(piece)
                if produced > limit:
                    raise FetchError(
                        "too_large", f"decoded body over {limit} bytes (decompression bomb?)"
                    )
                yield piece
                if decoder.eof:  # all of it: another call would return b"" (and wait for
                    break  # the GIL it lets go, as every zlib call does)
                piece = decoder.decompress(decoder.unconsumed_tail, _CHUNK)
        except zlib.error as error:
            raise FetchError("encoding", f"undecodable {coding} body: {error}") from None
        return
    raise FetchError("encoding", f"undecodable {coding} body: {last_error}")


def discard_spooled(content: bytes | Path | None) -> None:
    """Remove the temporary file of a spooled body (no-op for bytes; idempotent)."""
    if isinstance(content, Path):
        content.unlink(missing_ok=True)


@dataclass(slots=True)
class Body:
    """A decoded body: ``content`` is its bytes, or the Path of the temporary file it was
    spooled to (ARCHITECTURE: "large bodies reach [the loader] as spooled files"), which
    whoever holds the body last removes with :meth:`discard`. ``head`` is its first bytes
    (for sniffing), ``md5`` the hex MD5 of all of it.
    """

    content: bytes | Path
    size: int
    md5: str
    head: bytes

    def data(self) -> bytes:
        """The whole body in memory (read back from its file if it was spooled)."""
        return self.content if isinstance(self.content, bytes) else self.content.read_bytes()

    def discard(self) -> None:
        """Remove the spooled file, if any (idempotent)."""
        discard_spooled(self.content)


class _Spool:
    """Collects a body's pieces in memory, then in a temporary file once past ``threshold``.

    The pieces are hashed as they come (unless ``digest`` is off: the encoded bytes of a gzip
    body, whose decoded bytes are hashed), and moved to the file when the threshold is
    crossed, so the body is never held twice (the list of pieces and their join). Without
    ``keep`` (a resource: only its MD5 and size are recorded) nothing but the head is kept.
    """

    def __init__(
        self,
        threshold: int | None,
        folder: str | None = None,
        keep: bool = True,
        *,
        digest: bool = True,
    ) -> None:
        self._threshold = threshold
        self._folder = folder or None
        self._keep = keep
        self._pieces: list[bytes] = []
        self._file: BinaryIO | None = None
        self._md5 = hashlib.md5() if digest else None
        self.size = 0
        self.head = b""

    def write(self, piece: bytes) -> None:
        if self._md5 is not None:
            self._md5.update(piece)
        if len(self.head) < _HEAD:  # the first pieces may be short: fill the head up
            self.head += piece[: _HEAD - len(self.head)]
        self.size += len(piece)
        if not self._keep:
            return
        if self._file is not None:
            self._file.write(piece)
            return
        self._pieces.append(piece)
        if self._threshold is not None and self.size > self._threshold:
            self._file = tempfile.NamedTemporaryFile(  # noqa: SIM115 — closed in finish/discard
                prefix=SPOOL_PREFIX, suffix=SPOOL_SUFFIX, dir=self._folder, delete=False
            )
            self._file.writelines(self._pieces)
            self._pieces.clear()

    def finish(self) -> Body:
        if self._file is None:
            content: bytes | Path = b"".join(self._pieces)
            self._pieces.clear()
        else:
            self._file.close()
            content = Path(self._file.name)
        md5 = "" if self._md5 is None else self._md5.hexdigest()
        return Body(content, self.size, md5, self.head)

    def discard(self) -> None:
        self._pieces.clear()
        if self._file is not None:
            self._file.close()
            Path(self._file.name).unlink(missing_ok=True)


class Fetcher:
    """GET requests with the crawler's identity, limits, timeouts and caps.

    ``vouch(host, address)`` says whether a loopback or private ``address`` may be connected
    to for ``host`` (the scope's :meth:`~xyleme.crawler.scope.Scope.vouches_for`); by default
    none may.

    >>> fetcher = Fetcher(CrawlerSettings())  # then: await fetcher.open() … await fetcher.close()
    """

    def __init__(
        self,
        settings: CrawlerSettings,
        resolver: aiohttp.abc.AbstractResolver | None = None,
        vouch: Vouch = vouch_for_nothing,
        exchanges: ExchangeSink | None = None,
    ) -> None:
        self.settings = settings
        self._resolver = resolver
        self._vouch = vouch
        self._guarded: GuardedResolver | None = None
        self.exchanges = exchanges if exchanges and exchanges.records_exchanges else None
        """Told of every HTTP exchange (the archive), after its response is done with."""
        self._bodies: dict[aiohttp.ClientResponse, Body] = {}  # read, for ``exchanges``
        self._session: aiohttp.ClientSession | None = None
        self._ip_slots: dict[str, asyncio.Semaphore] = {}
        self._addresses: dict[str, tuple[str, float]] = {}

    async def open(self) -> None:
        """Open the session (one per crawler): the connection pool, DNS cache and limits."""
        if self._session is not None:
            return
        settings = self.settings
        if self._resolver is None:
            self._resolver = aiohttp.DefaultResolver()
        self._guarded = GuardedResolver(self._resolver, self._vouch)
        connector = aiohttp.TCPConnector(
            limit=settings.concurrency,
            limit_per_host=settings.per_host_concurrency,
            ttl_dns_cache=int(settings.dns_cache_seconds) or None,
            use_dns_cache=settings.dns_cache_seconds > 0,
            resolver=self._guarded,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=settings.total_timeout or None,
                connect=settings.connect_timeout or None,
                sock_read=settings.read_timeout or None,
            ),
            headers={"User-Agent": settings.user_agent, "Accept-Encoding": "gzip, deflate"},
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
        )

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
            await asyncio.sleep(0)  # let the transports finish closing (aiohttp docs)

    @asynccontextmanager
    async def request(
        self, url: str, headers: Mapping[str, str] | None = None, *, method: str = "GET"
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """A GET (or ``method``: HEAD for a liveness probe) whose headers have arrived; read
        the body with :meth:`read_body`.

        Raises :class:`FetchError` for every failure (DNS, refused, timeout, TLS…), and one
        of kind ``scope`` for an address the SSRF guard refuses.
        """
        if self._session is None:
            raise RuntimeError("Fetcher.open() was not awaited")
        host = urlsplit(url).hostname or ""
        refusal = literal_refusal(host, self._vouch)
        if refusal is not None:
            raise FetchError("scope", refusal)
        slot = await self._ip_slot(url)
        if slot is not None:
            await slot.acquire()
        exchange = None
        try:
            async with self._session.request(
                method, url, headers=headers, allow_redirects=False
            ) as response:
                peer = peer_address(response) if self.exchanges is not None else None
                try:
                    yield response
                    if self.exchanges is not None:
                        exchange = exchange_of(url, response, self._bodies.get(response), peer)
                finally:
                    self._bodies.pop(response, None)
        except FetchError:
            raise
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as error:
            raise describe_error(error) from None
        finally:
            if slot is not None:
                slot.release()
        if exchange is not None:
            await self.exchanges.exchange(exchange)

    async def read_body(
        self,
        response: aiohttp.ClientResponse,
        limit: int,
        *,
        truncate: bool = False,
        spool_over: int | None = None,
        spool_dir: str | None = None,
        keep: bool = True,
    ) -> tuple[Body, int]:
        """The decoded body and the bytes read off the wire, within the crawler's caps.

        A body longer than ``limit`` bytes on the wire is cut: the connection is dropped,
        what was read is freed, and :class:`FetchError` (kind ``too_large``) is raised —
        or, with ``truncate`` (robots.txt: its first 500 KiB count), its first ``limit``
        bytes are kept. A decoded body over ``spool_over`` bytes goes to a temporary file
        (in ``spool_dir``, or the system's temporary folder) as it streams (the caller then
        owns the file: :meth:`Body.discard`). Without ``keep`` the body is only hashed: its
        ``content`` is empty, its ``head``, ``size`` and ``md5`` are those of the whole.
        """
        declared = response.content_length
        if declared is not None and declared > limit and not truncate:
            response.close()
            raise FetchError("too_large", f"body of {declared} bytes over the {limit}-byte cap")
        encoding = response.headers.get("Content-Encoding")
        identity = (encoding or "identity").strip().lower() in ("", "identity")
        # An identity body streams straight into the spool; an encoded one is read whole
        # (it is under the wire cap) and its decoded pieces go to the spool.
        keep = keep or self.exchanges is not None  # the archive wants every body
        spool = _Spool(spool_over, spool_dir, keep)
        wire = spool if identity else _Spool(None, digest=False)  # the decoded body's MD5 counts
        size = 0
        try:
            try:
                async for chunk in response.content.iter_chunked(_CHUNK):
                    size += len(chunk)
                    if size > limit:
                        response.close()
                        if not truncate:
                            raise FetchError("too_large", f"body over the {limit}-byte cap: cut")
                        wire.write(chunk[: len(chunk) - (size - limit)])
                        size = limit
                        break
                    wire.write(chunk)
            except (TimeoutError, aiohttp.ClientError, OSError) as error:
                raise describe_error(error) from None
            if not identity:
                encoded = wire.finish().data()
                pieces = decoded_pieces(encoded, encoding, self.settings.max_decoded_bytes)
                for count, piece in enumerate(pieces, 1):
                    spool.write(piece)
                    if count % _PIECES_PER_YIELD == 0:
                        await asyncio.sleep(0)  # a big body decodes in slices: the loop runs
                del encoded
            body = spool.finish()
            if self.exchanges is not None:
                self._bodies[response] = body
            return body, size
        except BaseException:  # a failure or a cancellation: nothing read may stay behind
            spool.discard()
            wire.discard()
            raise

    async def get(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        limit: int | None = None,
        *,
        truncate: bool = False,
    ) -> Response:
        """A whole GET: status, headers and decoded body (robots.txt, simple callers)."""
        async with self.request(url, headers) as response:
            limit = limit or self.settings.max_body_bytes
            body, wire = await self.read_body(response, limit, truncate=truncate)
            return Response(url, response.status, response.headers, body.data(), wire)

    async def _ip_slot(self, url: str) -> asyncio.Semaphore | None:
        """The per-IP semaphore of the URL's server, when a per-IP limit is set."""
        limit = self.settings.per_ip_concurrency
        if limit is None:
            return None
        parts = urlsplit(url)
        host = parts.hostname or ""
        now = asyncio.get_running_loop().time()
        cached = self._addresses.get(host)
        if cached is None or cached[1] < now:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            try:
                found = await self._guarded.resolve(host, port)
            except AddressRefused as error:
                raise FetchError("scope", error.reason) from None
            except OSError as error:
                raise FetchError("dns", f"DNS failure: {error}", dead=True) from None
            address = found[0]["host"] if found else host
            cached = (address, now + self.settings.dns_cache_seconds)
            self._addresses[host] = cached
        if cached[0] not in self._ip_slots:
            self._ip_slots[cached[0]] = asyncio.Semaphore(limit)
        return self._ip_slots[cached[0]]
