"""The scope of a repository: the rules its configuration writes, else its seeds' sites.

One place that the daemon, ``xyleme seed add``, ``xyleme scope show|test`` and ``xyleme
recheck`` share, so they never disagree on what is in scope. ``[crawler] scope`` holds the
rules; ``[daemon] scope``, the older key (a list of domains), is still read, each entry as a
rule (a bare domain is a ``domain:`` rule, as it always meant), with a warning to move it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from xyleme.crawler import Rule, Scope, parse_rule

if TYPE_CHECKING:
    from xyleme.config import Config

log = logging.getLogger(__name__)

CRAWLER_KEY, DAEMON_KEY = "[crawler] scope", "[daemon] scope"
DEPRECATED = (
    f"{DAEMON_KEY} is deprecated: move its entries to {CRAWLER_KEY} (same meaning: a bare "
    "name is a domain and its subdomains; see docs/crawler.md, Scope)"
)


class NoSeedInScope(ValueError):
    """A daemon start whose seeds all lie outside the scope: it would idle in silence."""


def configured_rules(config: Config) -> list[Rule]:
    """The rules the configuration writes, in order, each tagged with its key."""
    rules = [parse_rule(text, CRAWLER_KEY) for text in config.crawler.scope]
    return rules + [parse_rule(text, DAEMON_KEY) for text in config.daemon.scope]


def repository_scope(config: Config, seeds: Iterable[str]) -> Scope:
    """The scope in force: the configured rules, or, when none admits anything, the seeds'."""
    return Scope.configured(configured_rules(config), seeds)


def seed_refusals(config: Config, urls: Iterable[str]) -> list[tuple[str, str]]:
    """The seeds among ``urls`` the scope refuses, with the reason. Stored seeds play no
    part: with rules configured they decide alone, and without, each seed admits its site."""
    urls = list(urls)
    return repository_scope(config, urls).refused_seeds(urls)


def check_start(config: Config, seeds: list[str]) -> Scope:
    """The scope a daemon starts with; raises :class:`NoSeedInScope` when seeds exist and the
    scope refuses them all, and warns about the rest (a deprecated key, refused seeds)."""
    if config.daemon.scope:
        log.warning(DEPRECATED)
    scope = repository_scope(config, seeds)
    refused = dict(seed_refusals(config, seeds))
    if seeds and len(refused) == len(seeds):
        shown = "; ".join(f"{url} ({reason})" for url, reason in list(refused.items())[:5])
        raise NoSeedInScope(
            f"no seed is in scope, the daemon would have nothing to crawl: {shown}. "
            "Widen [crawler] scope (`xyleme scope show`, `xyleme scope test URL`) "
            "or add a seed inside it"
        )
    for url, reason in refused.items():
        log.warning("seed %s is not crawled: %s", url, reason)
    if not seeds:
        log.warning("no seed yet: nothing to crawl until `xyleme seed add URL`")
    return scope
