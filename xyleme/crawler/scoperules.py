"""One rule of the crawl scope: what it names, how it is written, and which URLs it matches.

A rule is written as one string (``[crawler] scope`` in ``xyleme.toml``, ``xyleme crawl
--scope``, ``xyleme scope test``), and says which kind it is:

=============================  ===========================================================
``http://127.0.0.1:8000/docs/``  origin (scheme, host, port; default port implied) and a
                                 path prefix (``/`` or none: the whole origin)
``host:www.example.org``         that host only, over http and https on their default ports
``domain:example.org``           the domain and its subdomains (``*.example.org`` and a bare
                                 ``example.org`` say the same), default ports
``host:a.test:8080``             a host or domain rule on one port (``:*``: on every port)
``glob:*/feeds/*.xml``           URLs matching a shell pattern (``fnmatch``, whole URL)
``regex:^https://[^/]+/v[0-9]+/``  URLs a regular expression finds (``re.search``)
``net:10.0.0.0/8``               lets the crawler connect to these addresses (SSRF guard)
``deny:`` + any of the above     refuses what it matches, wherever it stands
=============================  ===========================================================

A bare IP address is a ``host:`` rule. URLs are matched in their canonical form
(:func:`metadata.canonicalize_url`): lower-case host, IDNA, default port dropped.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from metadata import InvalidURL, canonicalize_url

DEFAULT_PORTS = {"http": 80, "https": 443}
_URL = re.compile(
    r"(https?)://(?:[^@/?#]*@)?(?:\[([^\]/?#]*)\]|([^:/?#\[\]]*))(?::([0-9]*))?([^?#]*)",
    re.IGNORECASE,
)
ANY_PORT = -1

SPECIAL_USE_DOMAINS = frozenset(
    {"test", "localhost", "invalid", "local", "home.arpa", "internal", "lan", "intranet"}
)
"""Names that are never on the public Internet (RFC 6761, RFC 6762, RFC 8375, ICANN's
``internal``): a ``domain:`` rule for one of them vouches for its hosts' private addresses."""


class ScopeError(ValueError):
    """A scope rule that cannot be read; the message names the rule and the accepted forms."""


class Kind(StrEnum):
    """What a rule names."""

    ORIGIN = "origin"
    HOST = "host"
    DOMAIN = "domain"
    GLOB = "glob"
    REGEX = "regex"
    NET = "net"


_PREFIXED = {f"{kind.value}:": kind for kind in (Kind.HOST, Kind.DOMAIN, Kind.GLOB, Kind.REGEX)}
_FORMS = (
    "an origin URL (http://host:port/path/), host:NAME, domain:NAME (or *.NAME), "
    "glob:PATTERN, regex:PATTERN, net:CIDR, each optionally after deny:"
)


@dataclass(frozen=True, slots=True)
class URLParts:
    """What the rules look at in a canonical URL: scheme, host (no brackets), port, path."""

    url: str
    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def of(cls, url: str) -> URLParts:
        """Split ``url``; raises ValueError when it has no http(s) scheme, host or valid port.

        One regular expression rather than ``urlsplit``: it runs for every link of every page.
        """
        match = _URL.match(url)
        if match is None:
            raise ValueError(f"not an http(s) URL with a host: {url!r}")
        scheme, bracketed, name, port_text, path = match.groups()
        scheme = scheme.lower()
        host = (bracketed or name).lower().rstrip(".")
        if not host or (port_text and not 0 < int(port_text) < 65536):
            raise ValueError(f"no host or a bad port in {url!r}")
        port = int(port_text) if port_text else DEFAULT_PORTS[scheme]
        return cls(url, scheme, host, port, path or "/")

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule. ``source`` says where it came from (a config key, ``seed``, an option).

    >>> rule = parse_rule("http://127.0.0.1:8000/docs/")
    >>> rule.kind, rule.host, rule.port, rule.prefix
    (<Kind.ORIGIN: 'origin'>, '127.0.0.1', 8000, '/docs/')
    >>> rule.matches(URLParts.of("http://127.0.0.1:8000/docs/a.html"))
    True
    >>> rule.matches(URLParts.of("http://127.0.0.1:8001/docs/a.html"))
    False
    """

    kind: Kind
    deny: bool = False
    value: str = ""
    """The pattern (glob, regex), domain, host or network as written after its prefix."""
    scheme: str = ""
    host: str = ""
    port: int = 0
    """An origin's port; for host and domain rules 0 means the default ports, ANY_PORT all."""
    prefix: str = "/"
    source: str = ""
    _compiled: re.Pattern[str] | None = None
    _network: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None

    def __str__(self) -> str:
        if self.kind is Kind.ORIGIN:
            parts = URLParts("", self.scheme, self.host, self.port, self.prefix)
            text = parts.origin + self.prefix
        elif self.kind in (Kind.HOST, Kind.DOMAIN):
            port = {0: "", ANY_PORT: ":*"}.get(self.port, f":{self.port}")
            text = f"{self.kind.value}:{_bracketed(self.host)}{port}"
        else:
            text = f"{self.kind.value}:{self.value}"
        return f"deny:{text}" if self.deny else text

    def matches(self, parts: URLParts) -> bool:
        """Whether the URL falls under the rule. Host and domain rules ask for a default port
        unless they name one (another port is another service), except deny rules: those
        refuse the host on every port."""
        kind = self.kind
        if kind is Kind.ORIGIN:
            if (parts.scheme, parts.host, parts.port) != (self.scheme, self.host, self.port):
                return False
            prefix = self.prefix
            # "/docs/" also admits "/docs", the folder asked for without its slash.
            return parts.path.startswith(prefix) or parts.path + "/" == prefix
        if kind in (Kind.HOST, Kind.DOMAIN):
            if self.port == 0 and not self.deny and DEFAULT_PORTS[parts.scheme] != parts.port:
                return False
            if self.port > 0 and parts.port != self.port:
                return False
            return self.covers_host(parts.host)
        if kind is Kind.GLOB:
            return self._compiled.match(parts.url) is not None  # the whole URL
        if kind is Kind.REGEX:
            return self._compiled.search(parts.url) is not None
        return False  # net: rules say where one may connect, not what one may fetch

    def covers_host(self, host: str) -> bool:
        """Whether the rule names ``host`` (a lower-case name, or an IP without brackets)."""
        if self.kind is Kind.DOMAIN:
            return host == self.host or host.endswith("." + self.host)
        return self.kind in (Kind.ORIGIN, Kind.HOST) and host == self.host

    def vouches_for(self, host: str, address: str) -> bool:
        """Whether this admitting rule lets ``host`` be reached at the private ``address``:
        it names the host exactly (origin, host), covers the address (net), or is a domain
        rule over a name that is never public (:data:`SPECIAL_USE_DOMAINS`)."""
        if self.deny:
            return False
        if self.kind is Kind.NET:
            return ipaddress.ip_address(address) in self._network
        if self.kind is Kind.DOMAIN:
            return self.covers_host(host) and _special_use(self.host)
        return self.covers_host(host)


def parse_rule(text: str, source: str = "") -> Rule:
    """The :class:`Rule` a string writes, or :class:`ScopeError` saying what is wrong.

    >>> str(parse_rule("*.Example.ORG")), str(parse_rule("deny:glob:*.pdf"))
    ('domain:example.org', 'deny:glob:*.pdf')
    >>> str(parse_rule("127.0.0.1:8000")), str(parse_rule("*.test:*"))
    ('host:127.0.0.1:8000', 'domain:test:*')
    >>> parse_rule("ftp:x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    xyleme.crawler.scoperules.ScopeError: scope rule 'ftp:x': unknown kind 'ftp' (expected ...)
    """
    if not isinstance(text, str) or not text.strip():
        raise ScopeError(f"scope rule {text!r}: empty (expected {_FORMS})")
    body = text.strip()
    deny = body.lower().startswith("deny:")
    if deny:
        body = body[5:].strip()
    try:
        return _parse_body(body, deny, source)
    except ScopeError as error:
        raise ScopeError(f"scope rule {text!r}: {error}") from None


def _parse_body(body: str, deny: bool, source: str) -> Rule:
    lowered = body.lower()
    if lowered.startswith("net:"):
        try:
            network = ipaddress.ip_network(body[4:].strip(), strict=False)
        except ValueError as error:
            raise ScopeError(f"not a network ({error})") from None
        if deny:
            raise ScopeError("net: rules allow connections; deny what to fetch with the others")
        return Rule(Kind.NET, value=str(network), source=source, _network=network)
    for prefix, kind in _PREFIXED.items():
        if lowered.startswith(prefix):
            value = body[len(prefix) :].strip()
            if kind in (Kind.GLOB, Kind.REGEX):
                return _pattern_rule(kind, value, deny, source)
            return _host_rule(kind, value, deny, source)
    if "://" in body:
        return _origin_rule(body, deny, source)
    if body.startswith("*."):
        return _host_rule(Kind.DOMAIN, body[2:], deny, source)
    head = body.split(":", 1)[0]
    named = body.startswith("[") or _is_ip(body) or "." in head or head.lower() == "localhost"
    if ":" in body and not named:
        raise ScopeError(f"unknown kind {head!r} (expected {_FORMS})")
    if _is_ip(_split_port(body)[0]):
        return _host_rule(Kind.HOST, body, deny, source)
    return _host_rule(Kind.DOMAIN, body, deny, source)  # a bare name: [daemon] scope's domains


def _origin_rule(body: str, deny: bool, source: str) -> Rule:
    try:
        canonical = canonicalize_url(body)
    except InvalidURL as error:
        raise ScopeError(f"not a usable origin URL ({error.reason})") from None
    split = urlsplit(canonical)
    if split.query or "#" in body:
        raise ScopeError("an origin rule takes no query or fragment (use regex: for those)")
    if split.username or split.password:
        raise ScopeError("an origin rule takes no user name or password")
    parts = URLParts.of(canonical)
    return Rule(
        Kind.ORIGIN,
        deny,
        canonical,
        parts.scheme,
        parts.host,
        parts.port,
        parts.path,
        source,
    )


def _split_port(text: str) -> tuple[str, int]:
    """``name[:port]`` or ``[v6][:port]`` as (name without brackets, port: 0 none, -1 ``*``)."""
    text = text.strip()
    if text.startswith("["):
        name, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else rest
    elif text.count(":") == 1:
        name, _, port = text.partition(":")
    else:
        name, port = text, ""  # no port, or a bare IPv6 address
    if port in ("", "*"):
        return name, ANY_PORT if port == "*" else 0
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ScopeError(f"port {port!r} is not a number from 1 to 65535 (or *)")
    return name, int(port)


def _host_rule(kind: Kind, text: str, deny: bool, source: str) -> Rule:
    name, port = _split_port(text)
    name = name.rstrip(".")
    if not name or any(mark in name for mark in "/?#@*[]") or (":" in name and not _is_ip(name)):
        raise ScopeError(f"{text!r} is not a host name (a path needs an origin URL)")
    try:
        host = URLParts.of(canonicalize_url(f"http://{_bracketed(name)}/")).host
    except (InvalidURL, ValueError) as error:
        reason = getattr(error, "reason", str(error))
        raise ScopeError(f"{name!r} is not a host name ({reason})") from None
    if kind is Kind.DOMAIN and _is_ip(host):
        kind = Kind.HOST  # an address has no subdomains
    return Rule(kind, deny, host, host=host, port=port, source=source)


def _pattern_rule(kind: Kind, pattern: str, deny: bool, source: str) -> Rule:
    if not pattern:
        raise ScopeError(f"{kind.value}: needs a pattern")
    if kind is Kind.GLOB:
        compiled = re.compile(fnmatch.translate(pattern))
    else:
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            raise ScopeError(f"not a regular expression ({error})") from None
    return Rule(kind, deny, pattern, source=source, _compiled=compiled)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _bracketed(name: str) -> str:
    bare = name.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


def _special_use(domain: str) -> bool:
    return any(domain == name or domain.endswith("." + name) for name in SPECIAL_USE_DOMAINS)
