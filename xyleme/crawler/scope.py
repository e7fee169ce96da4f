"""What the crawler may fetch: the operator's scope, a list of rules.

Each check answers with the *reason* a URL is refused (or None), because a refused URL is
recorded with its reason (``Metadata.reject``), never dropped silently. The checks work on
the URL's text: an out-of-scope URL is never fetched and never even resolved. Where the
connection goes is checked again when it is made (:mod:`xyleme.crawler.addresses`), against
the hosts and networks the scope names. The rules themselves are :mod:`.scoperules`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from metadata import InvalidURL, canonicalize_url
from xyleme.crawler.scoperules import DEFAULT_PORTS, Kind, Rule, URLParts, parse_rule


@dataclass(frozen=True, slots=True)
class Decision:
    """A scope's verdict on a URL: admitted or not, the rule that decided (None when no rule
    matched), and for a refused URL the refusal (what ``Metadata.reject`` records)."""

    admitted: bool
    rule: Rule | None
    refusal: str | None = None

    @property
    def reason(self) -> str:
        """The verdict in words (built on demand: admitting is the hot path)."""
        if self.refusal is not None:
            return self.refusal
        if self.rule is None:
            return "admitted: no admitting rule, every http(s) URL is"
        return f"admitted by {self.rule}"


class _Index:
    """Rules by host (origin, host), by domain and the patterns, with their positions, so a
    verdict costs a few dict look-ups however many rules (a seed list may imply thousands)."""

    def __init__(self, rules: list[tuple[int, Rule]]) -> None:
        self.by_host: dict[str, list[tuple[int, Rule]]] = {}
        self.by_domain: dict[str, list[tuple[int, Rule]]] = {}
        self.patterns: list[tuple[int, Rule]] = []
        for item in rules:
            rule = item[1]
            if rule.kind is Kind.DOMAIN:
                self.by_domain.setdefault(rule.host, []).append(item)
            elif rule.kind in (Kind.ORIGIN, Kind.HOST):
                self.by_host.setdefault(rule.host, []).append(item)
            else:
                self.patterns.append(item)

    def naming(self, host: str) -> list[tuple[int, Rule]]:
        """The rules that name ``host``: exactly, or as a subdomain of theirs."""
        found = list(self.by_host.get(host, ()))
        if self.by_domain:
            start = 0
            while start >= 0:  # the host, then each parent domain: a.b.c, b.c, c
                found.extend(self.by_domain.get(host[start:], ()))
                start = host.find(".", start) + 1 or -1
        return found

    def first_match(self, parts: URLParts) -> Rule | None:
        """The earliest rule (in the operator's order) that matches the URL."""
        best: tuple[int, Rule] | None = None
        for item in self.naming(parts.host) + self.patterns:
            if (best is None or item[0] < best[0]) and item[1].matches(parts):
                best = item
        return None if best is None else best[1]


class Scope:
    """The part of the web the operator lets the crawler fetch: an ordered list of rules.

    A URL is refused when a deny rule matches it (wherever the rule stands); otherwise it is
    admitted by the first admitting rule that matches it, or refused when none does. With no
    admitting rule at all (``Scope()``) every http(s) URL is admitted — but no private address
    is named, so the SSRF guard still refuses loopback and private networks.

    The keywords are the older spelling: ``hosts`` are ``host:`` rules, ``domains``
    ``domain:`` rules, ``prefixes`` origin URLs, ``denied`` domains or URL prefixes to refuse.

    >>> scope = Scope(["http://127.0.0.1:8000/docs/", "domain:example.org", "deny:glob:*.pdf"])
    >>> scope.refusal("http://127.0.0.1:8000/docs/a.html") is None
    True
    >>> scope.refusal("http://127.0.0.1:8001/docs/a.html")
    'out of scope: http://127.0.0.1:8001 (the scope names 127.0.0.1 on other ports)'
    >>> scope.decide("https://www.example.org/a.pdf").reason
    'out of scope: denied by deny:glob:*.pdf'
    """

    __slots__ = ("_admit", "_deny", "_nets", "admits_anything", "rules")

    def __init__(
        self,
        rules: Iterable[Rule | str] = (),
        *,
        hosts: Iterable[str] = (),
        domains: Iterable[str] = (),
        prefixes: Iterable[str] = (),
        denied: Iterable[str] = (),
    ) -> None:
        written = [
            *rules,
            *(f"host:{host}" for host in sorted(hosts)),
            *(f"domain:{domain}" for domain in sorted(domains)),
            *prefixes,
            *(f"deny:{d}" if "://" in d else f"deny:domain:{d}" for d in sorted(denied)),
        ]
        self.rules: tuple[Rule, ...] = tuple(
            rule if isinstance(rule, Rule) else parse_rule(rule) for rule in written
        )
        numbered = list(enumerate(self.rules))
        self._deny = _Index([item for item in numbered if item[1].deny])
        self._admit = _Index(
            [item for item in numbered if not item[1].deny and item[1].kind is not Kind.NET]
        )
        self._nets = [rule for rule in self.rules if rule.kind is Kind.NET]
        index = self._admit
        self.admits_anything = bool(index.by_host or index.by_domain or index.patterns)
        """Whether some rule admits URLs (False: every http(s) URL is admitted)."""

    @classmethod
    def configured(cls, rules: Iterable[Rule | str], seeds: Iterable[str]) -> Scope:
        """The scope of a repository: its configured rules, and when none of them admits
        anything, one rule per seed (:func:`seed_rule`), so the seeds' sites are the scope."""
        scope = cls(rules)
        if scope.admits_anything:
            return scope
        implied = dict.fromkeys(rule for seed in seeds if (rule := seed_rule(seed)) is not None)
        return cls([*scope.rules, *implied])

    def __repr__(self) -> str:
        return f"Scope({[str(rule) for rule in self.rules]!r})"

    def decide(self, url: str) -> Decision:
        """Whether the canonical ``url`` is in scope, and which rule says so."""
        try:
            parts = URLParts.of(url)
        except ValueError:
            return Decision(False, None, "out of scope: not an http(s) URL with a host")
        denied = self._deny.first_match(parts)
        if denied is not None:
            return Decision(False, denied, f"out of scope: denied by {denied}")
        if not self.admits_anything:
            return Decision(True, None)
        rule = self._admit.first_match(parts)
        if rule is not None:
            return Decision(True, rule)
        return Decision(False, None, self._missed(parts))

    def _missed(self, parts: URLParts) -> str:
        """Why no rule admits a URL: its host, its port (or scheme), or its path."""
        naming = [rule for _, rule in self._admit.naming(parts.host)]
        if not naming:
            return f"out of scope: host {parts.host} is not in the scope"
        if any(rule.kind is Kind.ORIGIN and rule.port == parts.port for rule in naming):
            return f"out of scope: path {parts.path} is outside the prefixes of {parts.origin}"
        return f"out of scope: {parts.origin} (the scope names {parts.host} on other ports)"

    def refusal(self, url: str) -> str | None:
        """Why the canonical ``url`` is out of scope, or None when it may be fetched."""
        return self.decide(url).refusal

    def refused_seeds(self, seeds: Iterable[str]) -> list[tuple[str, str]]:
        """The seeds this scope refuses, with the reason (invalid URLs are left to whoever
        records them: they are not the scope's to judge)."""
        refused = []
        for seed in seeds:
            try:
                refusal = self.refusal(canonicalize_url(seed))
            except InvalidURL:
                continue
            if refusal is not None:
                refused.append((seed, refusal))
        return refused

    def robots_refusal(self, url: str) -> str | None:
        """Why a robots.txt redirect target may not be read: one on an origin the scope names
        is fine whatever its path (a path prefix does not keep a site's robots.txt out)."""
        refusal = self.refusal(url)
        if refusal is None:
            return None
        try:
            parts = URLParts.of(url)
        except ValueError:
            return refusal
        for _, rule in self._admit.by_host.get(parts.host, ()):
            if rule.kind is Kind.ORIGIN and (rule.scheme, rule.port) == (parts.scheme, parts.port):
                denied = self._deny.first_match(parts)
                return None if denied is None else f"out of scope: denied by {denied}"
        return refusal

    def vouches_for(self, host: str, address: str) -> bool:
        """Whether the scope names ``host`` (or ``address``) explicitly enough for the crawler
        to connect to the private ``address`` it resolved to (:meth:`Rule.vouches_for`)."""
        host = host.lower().rstrip(".").strip("[]")
        candidates = [rule for _, rule in self._admit.naming(host)]
        if address != host:
            candidates += [rule for _, rule in self._admit.by_host.get(address, ())]
        return any(rule.vouches_for(host, address) for rule in [*candidates, *self._nets])


def seed_rule(seed: str) -> Rule | None:
    """The rule a seed implies when no rule is configured: its host (http and https, default
    ports) for a seed on a default port, else its origin. None for an invalid URL.

    >>> str(seed_rule("http://www.example.org/start")), str(seed_rule("http://127.0.0.1:8000/d/"))
    ('host:www.example.org', 'http://127.0.0.1:8000/')
    """
    try:
        parts = URLParts.of(canonicalize_url(seed))
    except (InvalidURL, ValueError):
        return None
    if DEFAULT_PORTS[parts.scheme] == parts.port:
        return parse_rule(f"host:{parts.host}", "seed")
    return parse_rule(parts.origin + "/", "seed")
