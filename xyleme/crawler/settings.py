"""Every setting of the crawler, with its documented default (Scrapy's ``default_settings``).

The daemon builds :class:`CrawlerSettings` from the ``[crawler]`` table of ``xyleme.toml``;
tests and library users build it directly from plain values. Durations are *real* seconds
(politeness, timeouts and robots.txt expiry run on real time, ARCHITECTURE "Time"). Add a
setting only with its range and its doc line (the convention of ``conventions``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS
from xyleme.crawler.denylist import DEFAULT_DENIED_SUFFIXES, normalize_suffixes
from xyleme.crawler.scoperules import parse_rule

DEFAULT_USER_AGENT = "xyleme-xyro/0.1 (+https://github.com/xyleme/xyleme/blob/main/docs/crawler.md)"


MIB = 1 << 20
GIB = 1 << 30
DAY_S = 86_400.0


def _readable_rule(text: str) -> str:
    parse_rule(text)  # a ScopeError (a ValueError) names the rule and the accepted forms
    return text


ScopeRule = Annotated[str, Field(min_length=1, max_length=4096), AfterValidator(_readable_rule)]
"""One scope rule as written (:func:`xyleme.crawler.scoperules.parse_rule` must read it)."""
ScopeRules = Annotated[tuple[ScopeRule, ...], Field(max_length=100_000)]


@dataclass(frozen=True, slots=True, config=SETTINGS)
class CrawlerSettings:
    """The crawler's knobs. Every field is validated when the object is built.

    >>> CrawlerSettings(concurrency=16).per_host_concurrency
    1
    >>> CrawlerSettings(scope=("http://127.0.0.1:8000/docs/", "deny:glob:*.pdf")).scope[1]
    'deny:glob:*.pdf'
    """

    scope: ScopeRules = ()
    """Scope rules, in order: origin URLs (``http://127.0.0.1:8000/docs/``), ``host:NAME``,
    ``domain:NAME`` (or ``*.NAME``), ``glob:``/``regex:`` patterns, ``net:CIDR``, each
    optionally after ``deny:`` (docs/crawler.md, "Scope"). Empty: the seeds' sites."""
    user_agent: Annotated[str, Field(min_length=1, max_length=512)] = DEFAULT_USER_AGENT
    """Sent on every request; carries a contact URL, as robot etiquette asks."""
    robots_agent: Annotated[str, Field(min_length=1, max_length=64)] = "xyleme"
    """The product token matched against robots.txt ``User-agent`` groups."""
    concurrency: Annotated[int, Field(ge=1, le=1024)] = 64
    """Requests in flight at once, over all hosts (the paper's Xyro used 400 sockets)."""
    per_host_concurrency: Annotated[int, Field(ge=1, le=64)] = 1
    """Requests in flight at once to one host."""
    per_ip_concurrency: Annotated[int, Field(ge=1, le=64)] | None = None
    """Optional cap on requests in flight to one IP address (hosts sharing a server)."""
    min_delay: Annotated[float, Field(ge=0.0, le=3600.0)] = 1.0
    """Real seconds between the end of one request to a host and the start of the next."""
    max_crawl_delay: Annotated[float, Field(ge=0.0, le=DAY_S)] = 30.0
    """robots.txt's Crawl-delay is honoured up to this many seconds."""
    max_retry_after: Annotated[float, Field(ge=0.0, le=7 * DAY_S)] = 3600.0
    """A 429/503 Retry-After backs a host off for at most this many seconds."""
    retry_after_default: Annotated[float, Field(ge=0.0, le=DAY_S)] = 60.0
    """Back-off after a 429/503 that gives no (or an unreadable) Retry-After."""
    max_retries: Annotated[int, Field(ge=0, le=100)] = 2
    """Times a request is re-queued after a 429/503 before it is recorded as ERROR."""
    connect_timeout: Annotated[float, Field(gt=0.0, le=3600.0)] = 10.0
    """Seconds to open a connection (DNS included)."""
    read_timeout: Annotated[float, Field(gt=0.0, le=3600.0)] = 30.0
    """Seconds without a byte from the server before the read is abandoned."""
    total_timeout: Annotated[float, Field(gt=0.0, le=DAY_S)] = 60.0
    """Seconds for a whole request, body included."""
    dns_cache_seconds: Annotated[float, Field(ge=0.0, le=DAY_S)] = 300.0
    """How long a resolved address is reused (the paper: threads blocked for minutes in DNS)."""
    max_redirects: Annotated[int, Field(ge=0, le=30)] = 5
    """Redirect hops followed from one URL before it is recorded as ERROR."""
    max_body_bytes: Annotated[int, Field(ge=1, le=4 * GIB)] = 10 * 1024 * 1024
    """Bytes read from the wire; a longer body is cut, freed and recorded as ERROR."""
    max_decoded_bytes: Annotated[int, Field(ge=1, le=16 * GIB)] = 40 * 1024 * 1024
    """Bytes a gzip/deflate body may decode to (a bigger one is a decompression bomb)."""
    max_resource_bytes: Annotated[int, Field(ge=0, le=4 * GIB)] = 1024 * 1024
    """A resource (a body that is not a document, known from its Content-Type) is hashed up to
    this many bytes; a bigger one is recorded with its declared size and no MD5, and the
    connection dropped (a video is not downloaded to be ignored)."""
    denied_suffixes: Annotated[
        tuple[Annotated[str, Field(min_length=1, max_length=32)], ...], Field(max_length=10_000)
    ] = DEFAULT_DENIED_SUFFIXES
    """URL suffixes never fetched (``jpg``, ``mp4``, ``zip``…: binary media only; a suffix
    never refuses a page the Content-Type would call a document). Empty: fetch everything."""
    spool_over_bytes: Annotated[int, Field(ge=0, le=64 * MIB)] = 1024 * 1024
    """A decoded body over this many bytes streams to a temporary file, handed to the loader
    as a Path and removed after the load (ARCHITECTURE: large bodies as spooled files)."""
    spool_dir: Annotated[str, Field(max_length=4096)] = ""
    """Folder of the spooled bodies (empty: the system's temporary folder). The daemon uses
    the repository's ``[paths] spool`` and empties it at start (files a kill -9 left)."""
    robots_ttl: Annotated[float, Field(ge=0.0, le=30 * DAY_S)] = 24 * 3600.0
    """Real seconds a fetched robots.txt is trusted before it is read again."""
    robots_error_ttl: Annotated[float, Field(ge=0.0, le=7 * DAY_S)] = 300.0
    """After a 5xx or unreachable robots.txt the host is disallowed this long, then retried."""
    robots_max_bytes: Annotated[int, Field(ge=1, le=16 * MIB)] = 512 * 1024
    """robots.txt bytes parsed (RFC 9309 asks for at least 500 KiB)."""
    max_scout_depth: Annotated[int, Field(ge=0, le=1000)] = 8
    """Link hops from a seed that the crawler's own scouting (level 3) follows."""
    host_page_budget: Annotated[int, Field(ge=0, le=1_000_000_000)] = 100_000
    """Pages read per host by scouting in one run (links found do not count): a trap guard."""
    max_url_length: Annotated[int, Field(ge=16, le=65_536)] = 1024
    """Longer URLs are refused as likely traps (session ids, calendars)."""
    max_path_segments: Annotated[int, Field(ge=1, le=1024)] = 24
    """URLs with more path segments are refused as likely traps (``/a/a/a/…``)."""
    max_repeated_segments: Annotated[int, Field(ge=1, le=1000)] = 2
    """A path segment or query parameter name may occur this many times; more is a trap."""
    max_query_params: Annotated[int, Field(ge=1, le=10_000)] = 16
    """URLs with more query parameters are refused as likely traps (ever-growing queries)."""
    first_calendar_year: Annotated[int, Field(ge=0, le=9999)] = 1970
    """A date in a URL (``/1712/05/``, ``?d=1712-05-01``) before this year is a calendar trap."""
    calendar_years_ahead: Annotated[int, Field(ge=0, le=9999)] = 2
    """A date in a URL more than this many years after the current one is a calendar trap."""
    expected_urls: Annotated[int, Field(ge=1, le=1 << 27)] = 1 << 20
    """Size the seen-URL table for this many URLs at first (it grows by doubling)."""
    id_cache_size: Annotated[int, Field(ge=0, le=10_000_000)] = 200_000
    """Recent URL -> URL-Id answers kept in memory (Map-Data is read only for the others)."""
    write_batch: Annotated[int, Field(ge=1, le=10_000)] = 256
    """Fetch results committed to the metadata per transaction, at most."""
    write_interval: Annotated[float, Field(ge=0.0, le=60.0)] = 0.05
    """Seconds a result may wait for others to share its transaction."""
    max_pending_writes: Annotated[int, Field(ge=1, le=1 << 20)] = 1024
    """Finished fetches waiting for the writer, at most: beyond it the workers wait before
    taking another request (backpressure, so fetching never outruns the commits' memory)."""
    max_pending_loads: Annotated[int, Field(ge=1, le=4096)] = 64
    """Bodies waiting for the loader, at most: beyond it the writer waits (and so, through
    ``max_pending_writes``, the workers): the loader's pace bounds the bodies held."""
    commit_slice: Annotated[int, Field(ge=1, le=10_000)] = 32
    """Committed results whose events and hand-offs run before the writer lets the event
    loop serve the fetchers again (a batch's follow-up cut in slices keeps the loop live)."""
    idle_slot_seconds: Annotated[float, Field(ge=0.0, le=DAY_S)] = 60.0
    """A host slot with nothing queued or in flight for this long is forgotten."""
    shutdown_deadline: Annotated[float, Field(ge=0.0, le=3600.0)] = 10.0
    """Seconds in-flight requests get to finish when the crawler stops."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "denied_suffixes", normalize_suffixes(self.denied_suffixes))
        if "http" not in self.user_agent:
            raise ValueError("the user agent must carry a contact URL (http…)")
