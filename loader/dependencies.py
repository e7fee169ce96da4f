"""DTDs, external entities and schemas: the local cache and the only resolver lxml gets.

The parser never opens a file or a socket by itself. Every external reference libxml2 wants
(the DOCTYPE's DTD, an external entity, a schema import) goes to :class:`CacheResolver`,
which

* refuses anything that is not an absolute http(s) URL (``file:``, bare paths, ``ftp:``...):
  that is how XXE against local files is stopped, with a recorded reason;
* refuses http(s) URLs outside the crawl scope;
* answers from :class:`DependencyCache` (bodies the crawler fetched for the loader), or
  records the URL as missing and answers with nothing, so the loader can park the document
  and ask the crawler for it (paper §3: loading sub-tasks go first, at priority 0).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from loader.errors import UnsafeReference

_BODIES_IN_MEMORY = 256


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
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._cached = {int(body.stem) for body in self.folder.glob("*.body")}
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
        self.generation += 1
        return md5

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
        return url_id in self._cached

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
    """An lxml resolver that serves dependencies from the cache and nothing else.

    Parameters
    ----------
    cache
        Where fetched dependency bodies are.
    lookup_id
        Maps a URL to its URL-Id, or None when the metadata does not know it (then it cannot
        be in the cache).
    in_scope
        The crawl scope; references outside it are refused.
    """

    def __init__(
        self,
        cache: DependencyCache,
        lookup_id: Callable[[str], int | None],
        in_scope: Callable[[str], bool] = http_scope,
    ) -> None:
        super().__init__()
        self.cache = cache
        self.lookup_id = lookup_id
        self.in_scope = in_scope
        self.missing: list[str] = []
        self.used: list[str] = []
        # the parsers built on this resolver, by (validate, encoding): a parser used again
        # saves ~6 us per document over a new one (libxml2's parser context is kept)
        self.parsers: dict[tuple[bool, str | None], etree.XMLParser] = {}

    def reset(self) -> None:
        """Forget what the last parse found (before this resolver serves another one)."""
        self.missing = []
        self.used = []

    def resolve(self, system_url, public_id, context):
        if not system_url:
            raise UnsafeReference(f"reference with public id {public_id!r} but no system URL")
        scheme = urlsplit(system_url).scheme.lower()
        if scheme not in ("http", "https"):
            raise UnsafeReference(
                f"external reference {system_url!r} refused: only http(s) URLs are fetched"
            )
        if not self.in_scope(system_url):
            raise UnsafeReference(f"external reference {system_url!r} is outside the crawl scope")
        url_id = self.lookup_id(system_url)
        body = None if url_id is None else self.cache.get(url_id)
        if body is None:
            if system_url not in self.missing:
                self.missing.append(system_url)
            return self.resolve_string(b"", context, base_url=system_url)
        if system_url not in self.used:
            self.used.append(system_url)
        return self.resolve_string(body, context, base_url=system_url)
