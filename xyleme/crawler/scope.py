"""What the crawler may fetch: the operator's scope and the spider-trap guards.

Each check answers with the *reason* a URL is refused (or None), because a refused URL is
recorded with its reason (``Metadata.reject``), never dropped silently. Every check works on
the URL's text alone: an out-of-scope URL is never fetched and never even resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit


def url_host(url: str) -> str:
    """The lower-cased host of an absolute URL, without user info or port.

    String slicing rather than ``urlsplit``: it runs for every link of every page.

    >>> url_host("http://user@WWW.Example.com:8080/a?b"), url_host("http://[::1]:80/")
    ('www.example.com', '[::1]')
    """
    start = url.find("//") + 2
    end = len(url)
    for stop in "/?#":
        found = url.find(stop, start)
        if 0 <= found < end:
            end = found
    netloc = url[start:end].rpartition("@")[2]
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1].lower()
    return netloc.partition(":")[0].lower()


def _host_matches_domain(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


@dataclass(frozen=True)
class Scope:
    """The part of the web the operator lets the crawler fetch.

    A URL is in scope when it matches one of ``hosts`` (exact host names), ``domains`` (a
    domain and its subdomains) or ``prefixes`` (URL prefixes) — or when all three are empty —
    and matches nothing in ``denied`` (domains or URL prefixes, those with a ``://``).

    >>> scope = Scope(domains=frozenset({"simweb.test"}), denied=frozenset({"bad.simweb.test"}))
    >>> scope.refusal("http://a.simweb.test/x") is None
    True
    >>> scope.refusal("http://bad.simweb.test/")
    'out of scope: denied by bad.simweb.test'
    >>> scope.refusal("http://example.com/")
    'out of scope: host example.com is not allowed'
    """

    hosts: frozenset[str] = field(default_factory=frozenset)
    domains: frozenset[str] = field(default_factory=frozenset)
    prefixes: tuple[str, ...] = ()
    denied: frozenset[str] = field(default_factory=frozenset)

    def refusal(self, url: str) -> str | None:
        """Why the canonical ``url`` is out of scope, or None when it may be fetched."""
        host = url_host(url)
        for rule in self.denied:
            if ("://" in rule and url.startswith(rule)) or (
                "://" not in rule and _host_matches_domain(host, rule)
            ):
                return f"out of scope: denied by {rule}"
        if not (self.hosts or self.domains or self.prefixes):
            return None
        if host in self.hosts or any(_host_matches_domain(host, d) for d in self.domains):
            return None
        if any(url.startswith(prefix) for prefix in self.prefixes):
            return None
        return f"out of scope: host {host} is not allowed"


@dataclass(frozen=True)
class TrapGuard:
    """Spider-trap guards on a URL's shape (its length and path depth).

    >>> TrapGuard(max_url_length=30, max_path_segments=3).refusal("http://a.example/a/a/a/a")
    'spider trap: 4 path segments (max 3)'
    """

    max_url_length: int
    max_path_segments: int

    def refusal(self, url: str) -> str | None:
        """Why ``url`` looks like a trap, or None."""
        if len(url) > self.max_url_length:
            return f"spider trap: URL of {len(url)} characters (max {self.max_url_length})"
        segments = urlsplit(url).path.count("/")
        if segments > self.max_path_segments:
            return f"spider trap: {segments} path segments (max {self.max_path_segments})"
        return None
