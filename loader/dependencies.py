"""DTDs, external entities and schemas: the local cache and the only resolver lxml gets.

The parser never opens a file or a socket by itself. Every external reference libxml2 wants
(the DOCTYPE's DTD, an external entity, a schema import) goes to :class:`CacheResolver`,
which answers, in this order:

* from the XML catalogs (:mod:`loader.catalog`): well-known public DTDs are local files and
  never fetched from their publishers;
* nothing, for what cannot be had: a reference that is not an absolute http(s) URL
  (``file:``, bare paths, ``ftp:``...: that is how XXE against local files is stopped), one
  outside the crawl scope, or one the crawler could not fetch (404, robots.txt, timeout, too
  large: :meth:`DependencyCache.fail`). The reference is recorded as *unavailable* with its
  reason, and the document is kept, parsed for well-formedness without it and stored
  ``not validated`` with that reason. An XHTML DTD that cannot be had is answered with the
  XHTML named character entities (from :mod:`html.entities`: one character each, so nothing
  to expand), so ``&nbsp;`` still parses;
* from :class:`DependencyCache` (bodies the crawler fetched for the loader);
* otherwise nothing, recording the URL as *missing*, so the loader can park the document and
  ask the crawler for it (paper §3: loading sub-tasks go first, at priority 0).

It never raises: lxml keeps an exception raised in a resolver on the parser and raises it at
that parser's next use, i.e. against another document (issue 18, fault 2).
"""

from __future__ import annotations

import hashlib
import html.entities
import json
import logging
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from loader.catalog import Catalog
from loader.dtdreuse import DtdReuse
from loader.dtds import DtdFacts

log = logging.getLogger(__name__)

_BODIES_IN_MEMORY = 256
_XHTML_PUBLIC = re.compile(r"-//W3C//(DTD|ENTITIES) XHTML", re.I)
_XHTML_SYSTEM = re.compile(r"/xhtml[^/]*\.(dtd|ent)$", re.I)
XHTML_ENTITIES = "".join(
    f'<!ENTITY {name} "&#{code};">'
    for name, code in sorted(html.entities.name2codepoint.items())
    if name not in ("amp", "lt", "gt", "quot")
).encode()
"""The XHTML 1.0 named character entities (the HTML 4 set), declared one character each."""


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a crash leaves the old file or the new one, never half."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)


class DependencyCache:
    """Fetched DTDs, entities and schemas, stored by URL-Id under ``DIR/documents/dependencies``.

    Their metadata (type DTD, MD5, refresh data) lives in the metadata manager like any page's;
    this cache only keeps the bodies the resolver serves. The URL-Ids cached are listed once
    and kept in memory (asked for every document loaded), like the bodies read: the loader
    of a repository is its only writer.

    It also remembers the dependencies that could not be had (:meth:`fail`); such a failure
    holds for ``retry_after`` seconds of ``now``'s clock, after which the dependency may be
    asked for again (a timeout or a 503 need not be final).
    """

    def __init__(
        self,
        folder: Path,
        now: Callable[[], float] | None = None,
        retry_after: float = math.inf,
    ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._cached = {int(body.stem) for body in self.folder.glob("*.body")}
        self._failures: dict[int, tuple[str, float]] = {}
        for path in self.folder.glob("*.failed"):
            info = json.loads(path.read_bytes())
            self._failures[int(path.stem)] = (info["reason"], info["at"])
        self._now = now
        self._retry_after = retry_after
        self._ids_by_url: dict[str, int] | None = None
        self._bodies: dict[int, bytes] = {}
        self.generation = 0  # bumped by every put: what was compiled from the cache is stale

    def _body_path(self, url_id: int) -> Path:
        return self.folder / f"{url_id}.body"

    def put(self, url_id: int, url: str, body: bytes, fetched_at: float) -> str:
        """Keep (or replace) a dependency's body; return its MD5."""
        md5 = hashlib.md5(body).hexdigest()
        write_atomically(self._body_path(url_id), body)
        info = {"url": url, "md5": md5, "fetched_at": fetched_at, "size": len(body)}
        write_atomically(self.folder / f"{url_id}.json", json.dumps(info).encode())
        self._ids_by_url = None
        self._cached.add(url_id)
        self._bodies.pop(url_id, None)
        if self._failures.pop(url_id, None) is not None:
            (self.folder / f"{url_id}.failed").unlink(missing_ok=True)
        self.generation += 1
        return md5

    def fail(self, url_id: int, url: str, reason: str, at: float) -> None:
        """Remember that a dependency could not be had, and why: documents that need it are
        then loaded without it (``not validated``) instead of waiting. A body that arrives
        later replaces the failure (:meth:`put`)."""
        info = {"url": url, "reason": reason, "at": at}
        write_atomically(self.folder / f"{url_id}.failed", json.dumps(info).encode())
        self._failures[url_id] = (reason, at)
        self.generation += 1

    def failure(self, url_id: int) -> str | None:
        """Why a dependency could not be had (None if it was not known to fail, or if its
        failure is old enough to ask for it again)."""
        failed = self._failures.get(url_id)
        if failed is None:
            return None
        reason, at = failed
        if self._now is not None and self._now() - at >= self._retry_after:
            return None
        return reason

    def md5(self, url_id: int) -> str | None:
        """The MD5 of a cached dependency's body (None when it is not cached)."""
        if url_id not in self._cached:
            return None
        try:
            return json.loads((self.folder / f"{url_id}.json").read_bytes())["md5"]
        except FileNotFoundError:
            return None

    def get(self, url_id: int) -> bytes | None:
        """A dependency's body (kept in memory after the first read: DTDs are shared)."""
        body = self._bodies.get(url_id)
        if body is not None:
            return body
        try:
            body = self._body_path(url_id).read_bytes()
        except FileNotFoundError:
            return None
        if len(self._bodies) >= _BODIES_IN_MEMORY:
            self._bodies.clear()
        self._bodies[url_id] = body
        return body

    def __contains__(self, url_id: int) -> bool:
        """Whether the URL-Id is a dependency the cache knows: held, or known to fail."""
        return url_id in self._cached or url_id in self._failures

    def id_of(self, url: str) -> int | None:
        """The URL-Id a cached dependency was stored under, found by its exact URL.

        Readers of the repository (queries, diffs) use it to resolve DTDs without the
        metadata manager; the loader itself asks the metadata manager.
        """
        if self._ids_by_url is None:
            self._ids_by_url = {
                json.loads(info.read_bytes())["url"]: int(info.stem)
                for info in self.folder.glob("*.json")
            }
        return self._ids_by_url.get(url)


def http_scope(url: str) -> bool:
    """The default crawl scope: every http(s) URL."""
    return urlsplit(url).scheme in ("http", "https")


class CacheResolver(etree.Resolver):
    """An lxml resolver that serves dependencies from the catalogs and the cache only.

    Parameters
    ----------
    cache
        Where fetched dependency bodies (and known failures) are.
    lookup_id
        Maps a URL to its URL-Id, or None when the metadata does not know it (then it cannot
        be in the cache).
    in_scope
        The crawl scope; references outside it are unavailable.
    catalog
        The XML catalogs consulted first.
    dtd_facts
        What external DTDs declare, shared by the loader's resolvers (read once per DTD).
    dtd_reuse
        The external DTDs kept for validating later documents, shared likewise.
    """

    def __init__(
        self,
        cache: DependencyCache,
        lookup_id: Callable[[str], int | None],
        in_scope: Callable[[str], bool] = http_scope,
        catalog: Catalog | None = None,
        dtd_facts: DtdFacts | None = None,
        dtd_reuse: DtdReuse | None = None,
    ) -> None:
        super().__init__()
        self.cache = cache
        self.lookup_id = lookup_id
        self.in_scope = in_scope
        self.catalog = catalog or Catalog()
        self.missing: list[str] = []
        self.used: list[str] = []
        self.unavailable: dict[str, str] = {}  # reference -> why it cannot be had
        self.catalogued: set[str] = set()
        # the parsers built on this resolver, by (validate, encoding, entities): a parser used
        # again saves ~6 us per document over a new one (libxml2's parser context is kept)
        self.parsers: dict[tuple[bool, str | None, bool], etree.XMLParser] = {}
        self.dtd_facts = dtd_facts or DtdFacts()
        self.dtd_reuse = dtd_reuse if dtd_reuse is not None else DtdReuse()
        self.external_subset: tuple[str, bytes] | None = None
        """(URL, body) answering the DOCTYPE's DTD for one parse (:mod:`loader.dtdreuse`)."""

    def reset(self) -> None:
        """Forget what the last parse found (before this resolver serves another one)."""
        self.missing = []
        self.used = []
        self.unavailable = {}
        self.catalogued = set()

    def served(self) -> tuple:
        """What this parse was served (identifies an external DTD as read)."""
        return (
            self.cache.generation,
            tuple(self.used),
            tuple(sorted(self.catalogued)),
            tuple(sorted(self.unavailable.items())),
        )

    def resolve(self, system_url, public_id, context):
        try:
            return self._answer(system_url, public_id, context)
        except Exception as error:  # raising here would hit another document (see above)
            log.warning("resolving %s failed: %r", system_url, error)
            reference = system_url or f"public id {public_id!r}"
            self.unavailable.setdefault(reference, f"could not be resolved ({error})")
            return self.resolve_string(b"", context)

    def _answer(self, system_url: str | None, public_id: str | None, context):
        if self.external_subset is not None and system_url == self.external_subset[0]:
            return self.resolve_string(self.external_subset[1], context, base_url=system_url)
        if self.catalog:
            body = self.catalog.body(public_id, system_url)
            if body is not None:
                self.catalogued.add(system_url or public_id)
                return self.resolve_string(body, context, base_url=system_url)
        reason = self._refusal(system_url, public_id)
        if reason is None:
            url_id = self.lookup_id(system_url)
            body = None if url_id is None else self.cache.get(url_id)
            if body is not None:
                if system_url not in self.used:
                    self.used.append(system_url)
                return self.resolve_string(body, context, base_url=system_url)
            reason = None if url_id is None else self.cache.failure(url_id)
            if reason is None:
                if system_url not in self.missing:
                    self.missing.append(system_url)
                return self.resolve_string(b"", context, base_url=system_url)
        self.unavailable.setdefault(system_url or f"public id {public_id!r}", reason)
        return self.resolve_string(self._stand_in(system_url, public_id), context)

    def _refusal(self, system_url: str | None, public_id: str | None) -> str | None:
        """Why a reference is never fetched (None: it may be)."""
        if not system_url:
            return f"public id {public_id!r} is in no catalog and has no system URL"
        if urlsplit(system_url).scheme.lower() not in ("http", "https"):
            return "only http(s) URLs are fetched"
        if not self.in_scope(system_url):
            return "outside the crawl scope"
        return None

    @staticmethod
    def _stand_in(system_url: str | None, public_id: str | None) -> bytes:
        """What answers a reference that cannot be had: the XHTML entities for an XHTML DTD
        (or its entity sets), else nothing."""
        if (public_id and _XHTML_PUBLIC.match(public_id)) or (
            system_url and _XHTML_SYSTEM.search(system_url.partition("?")[0])
        ):
            return XHTML_ENTITIES
        return b""
