"""WARC records of one HTTP exchange: request, then response or revisit (WARC 1.1 §6).

The crawler decodes gzip/deflate bodies and aiohttp undoes chunked transfer coding, so a
response record holds the *decoded* payload. Its HTTP headers say so the way Common Crawl's
WARC files do: ``Content-Encoding``, ``Transfer-Encoding`` and ``Content-Length`` are kept
as ``X-Crawler-…`` headers and a true ``Content-Length`` is added, so a replay tool never
tries to gunzip plain bytes. A body the crawler did not read (a redirect's, an error
page's) leaves an empty payload marked ``WARC-Truncated: unspecified``.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders

if TYPE_CHECKING:
    from collections.abc import Iterator

    from warcio.recordbuilder import RecordBuilder

    from xyleme.archive.exchange import Exchange

IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
_RENAMED = ("content-encoding", "transfer-encoding", "content-length")


def warc_date(seconds: float) -> str:
    """A WARC-Date (ISO 8601 UTC, microseconds as WARC 1.1 allows)."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def request_record(builder: RecordBuilder, exchange: Exchange, concurrent_to: str):
    """The request record: the request line and the headers the fetcher sent."""
    parts = urlsplit(exchange.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = StatusAndHeaders(
        f"{exchange.method} {target} {exchange.protocol}",
        exchange.request_headers,
        is_http_request=True,
    )
    return builder.create_warc_record(
        exchange.url,
        "request",
        payload=io.BytesIO(),
        length=0,
        http_headers=headers,
        warc_headers_dict=_common(exchange, {"WARC-Concurrent-To": concurrent_to}),
    )


def response_headers(exchange: Exchange, *, payload: bool) -> StatusAndHeaders:
    """The status line and headers of a response; with a stored ``payload``, the coding
    headers renamed and the decoded length declared (see the module docstring)."""
    headers = list(exchange.response_headers)
    if payload:
        headers = [
            (f"X-Crawler-{name}" if name.lower() in _RENAMED else name, value)
            for name, value in headers
        ]
        headers.append(("Content-Length", str(exchange.size)))
    return StatusAndHeaders(
        f"{exchange.status} {exchange.reason}".rstrip(), headers, protocol=exchange.protocol
    )


@contextmanager
def payload_of(exchange: Exchange) -> Iterator[BinaryIO]:
    """The stored body as a stream (a spooled body is read from its file, never whole)."""
    if isinstance(exchange.body, Path):
        with exchange.body.open("rb") as stream:
            yield stream
    else:
        yield io.BytesIO(exchange.body or b"")


def response_record(builder: RecordBuilder, exchange: Exchange, stream: BinaryIO, record_id: str):
    """The response record; warcio computes its block and payload digests (SHA-1)."""
    read = exchange.body is not None
    extra = {"WARC-Record-ID": record_id}
    if not read and exchange.method != "HEAD" and _declares_body(exchange):
        extra["WARC-Truncated"] = "unspecified"
    return builder.create_warc_record(
        exchange.url,
        "response",
        payload=stream,
        length=exchange.size if read else 0,
        http_headers=response_headers(exchange, payload=read),
        warc_headers_dict=_common(exchange, extra),
    )


def revisit_record(
    builder: RecordBuilder,
    exchange: Exchange,
    record_id: str,
    original: tuple[str, str, str] | None,
):
    """A revisit record: ``original`` is (record id, WARC-Date, payload digest) of the
    response it repeats; a 304 without a known original still says what the server said."""
    profile = NOT_MODIFIED if exchange.status == 304 else IDENTICAL
    extra = {"WARC-Record-ID": record_id, "WARC-Profile": profile}
    if original is not None:
        refers_to, date, digest = original
        extra |= {
            "WARC-Refers-To": refers_to,
            "WARC-Refers-To-Target-URI": exchange.url,
            "WARC-Refers-To-Date": date,
            "WARC-Payload-Digest": digest,
        }
    return builder.create_warc_record(
        exchange.url,
        "revisit",
        http_headers=response_headers(exchange, payload=exchange.body is not None),
        warc_headers_dict=_common(exchange, extra),
    )


def _common(exchange: Exchange, extra: dict[str, str]) -> dict[str, str]:
    headers = {"WARC-Date": warc_date(exchange.at)}
    if exchange.ip:
        headers["WARC-IP-Address"] = exchange.ip
    return headers | extra


def _declares_body(exchange: Exchange) -> bool:
    """Whether the response announced a body (a non-zero length or a chunked one)."""
    for name, value in exchange.response_headers:
        lowered = name.lower()
        if lowered == "transfer-encoding":
            return True
        if lowered == "content-length":
            return value.strip() not in ("", "0")
    return exchange.status not in (204, 304) and exchange.status >= 200
