"""robots.txt: fetched once per host, parsed by Protego, cached with an expiry (RFC 9309).

Error semantics of RFC 9309 §2.3.1: a 4xx (or a robots.txt that cannot be had after 5
redirects) means "no rules": everything is allowed; a 5xx, a timeout or a refused connection
means "unreachable": everything is disallowed until the file is tried again, which happens
after ``robots_error_ttl`` seconds instead of ``robots_ttl``. A redirected robots.txt is
cached for the host that was asked, whose rules it is (§2.3.1.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from protego import Protego

from metadata import InvalidURL, canonicalize_url
from xyleme.crawler.fetcher import FetchError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from xyleme.crawler.fetcher import Response
    from xyleme.crawler.settings import CrawlerSettings

MAX_ROBOTS_REDIRECTS = 5
"""Redirects followed to reach a robots.txt (RFC 9309 §2.3.1.2: at least five)."""


@dataclass(slots=True)
class RobotsRules:
    """What one host's robots.txt says to us, until ``expires`` (loop time)."""

    expires: float
    parser: Protego | None = None
    disallow_reason: str | None = None
    """Set when everything is disallowed because robots.txt was unreachable."""
    dead: bool = False
    """The failure says the host is gone (it does not resolve): its pages are DEAD."""
    note: str = "fetched"

    def refusal(self, url: str, agent: str) -> str | None:
        """Why ``url`` may not be fetched by ``agent``, or None when it may."""
        if self.disallow_reason is not None:
            return self.disallow_reason
        if self.parser is not None and not self.parser.can_fetch(url, agent):
            return "robots.txt disallows"
        return None

    @property
    def refusal_kind(self) -> str:
        """The failure kind of a page these rules refuse: ``robots_unreachable`` when
        robots.txt could not be had, else ``robots``. Never the robots.txt fetch's own kind
        (a timeout...): that fetch has its line and its count; the page was not tried (the
        crawl log's -61 and -9998, docs/archive.md)."""
        return "robots" if self.disallow_reason is None else "robots_unreachable"

    def crawl_delay(self, agent: str) -> float | None:
        """The Crawl-delay robots.txt asks of ``agent`` (None when it asks none)."""
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(agent)
        return float(delay) if delay is not None else None


class RobotsCache:
    """robots.txt rules per host key (``scheme://host:port``), each with its expiry.

    >>> cache = RobotsCache(agent="xyleme", ttl=60.0, error_ttl=5.0)
    >>> cache.store("http://a.example", cache.parse("User-agent: *\\nDisallow: /private", 0.0))
    >>> cache.lookup("http://a.example", now=1.0).refusal("http://a.example/private/x", "xyleme")
    'robots.txt disallows'
    >>> cache.lookup("http://a.example", now=61.0) is None  # expired
    True
    """

    def __init__(self, agent: str, ttl: float, error_ttl: float, max_bytes: int = 512 * 1024):
        self.agent = agent
        self.ttl = ttl
        self.error_ttl = error_ttl
        self.max_bytes = max_bytes
        self._rules: dict[str, RobotsRules] = {}

    @classmethod
    def from_settings(cls, settings: CrawlerSettings) -> RobotsCache:
        """The cache a crawler (or a probe) builds from its settings."""
        return cls(
            settings.robots_agent,
            settings.robots_ttl,
            settings.robots_error_ttl,
            settings.robots_max_bytes,
        )

    def __len__(self) -> int:
        return len(self._rules)

    def hosts(self) -> list[str]:
        """The host keys whose rules are cached (some may have expired)."""
        return list(self._rules)

    def lookup(self, host_key: str, now: float) -> RobotsRules | None:
        """The cached rules of a host, or None when they are missing or expired."""
        rules = self._rules.get(host_key)
        if rules is None:
            return None
        if rules.expires <= now:
            del self._rules[host_key]
            return None
        return rules

    def store(self, host_key: str, rules: RobotsRules) -> None:
        """Cache ``rules`` for ``host_key`` (the host that was asked)."""
        self._rules[host_key] = rules

    def parse(self, text: str, now: float) -> RobotsRules:
        """Rules from a robots.txt body (Protego is lenient with broken files)."""
        return RobotsRules(expires=now + self.ttl, parser=Protego.parse(text[: self.max_bytes]))

    def allow_all(self, now: float, note: str) -> RobotsRules:
        """No rules (a 4xx robots.txt or one lost in redirects)."""
        return RobotsRules(expires=now + self.ttl, note=note)

    def disallow_all(self, now: float, reason: str, dead: bool = False) -> RobotsRules:
        """Everything disallowed until the file is retried (5xx, timeout, unreachable)."""
        return RobotsRules(
            expires=now + self.error_ttl,
            disallow_reason=f"robots.txt unreachable ({reason}): disallowed, retried later",
            dead=dead,
            note=reason,
        )

    async def fetch(
        self,
        host_key: str,
        get: Callable[[str], Awaitable[Response]],
        in_scope: Callable[[str], bool],
        now: Callable[[], float],
    ) -> RobotsRules:
        """Fetch, parse and cache the robots.txt of ``host_key``, following RFC 9309.

        ``get`` performs one GET without following redirects; ``in_scope`` says whether a
        redirect target may be fetched at all (one outside the scope counts as unavailable).
        """
        url = host_key + "/robots.txt"
        rules: RobotsRules | None = None
        for _ in range(MAX_ROBOTS_REDIRECTS + 1):
            try:
                response = await get(url)
            except FetchError as error:
                rules = self.disallow_all(now(), error.reason, error.dead)
                break
            status = response.status
            if 300 <= status < 400 and "Location" in response.headers:
                try:
                    url = canonicalize_url(urljoin(url, response.headers["Location"]))
                except InvalidURL:
                    rules = self.allow_all(now(), "robots.txt redirects to an invalid URL")
                    break
                if not in_scope(url):
                    rules = self.allow_all(now(), "robots.txt redirects out of scope")
                    break
                continue
            if 200 <= status < 300:
                text = response.body[: self.max_bytes].decode("utf-8", errors="replace")
                rules = self.parse(text, now())
            elif 400 <= status < 500:
                rules = self.allow_all(now(), f"HTTP {status}: no rules")
            else:
                rules = self.disallow_all(now(), f"HTTP {status}")
            break
        if rules is None:
            rules = self.allow_all(now(), "robots.txt lost in redirects: no rules")
        self.store(host_key, rules)
        return rules
