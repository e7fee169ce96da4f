"""Reading stored documents back: parse a version safely, find a document by URL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lxml import etree

from loader.dependencies import CacheResolver, DependencyCache
from loader.errors import DocumentNotFound
from loader.parselock import PARSE_LOCK
from loader.parsing import rejection, safe_parser
from loader.settings import LoaderSettings
from metadata import InvalidURL, canonicalize_url
from metadata.versions import VersionStore


class Warehouse:
    """Read access to a repository's ``documents/`` folder (what the CLI and queries use).

    Stored documents are parsed with the same hardened parser as at load time; their DTDs
    and entities come from the dependency cache only.
    """

    def __init__(
        self,
        folder: Path,
        settings: LoaderSettings | None = None,
        lookup_id: Callable[[str], int | None] | None = None,
    ) -> None:
        """``lookup_id`` maps a canonical URL to its URL-Id (the metadata manager's
        ``id_for(url, create=False)``); without it, URLs are found by scanning the index."""
        folder = Path(folder)
        if not folder.is_dir():
            raise DocumentNotFound(f"no document repository at {folder}")
        self.settings = settings or LoaderSettings()
        self.repository = VersionStore(folder, self.settings.versions_kept)
        self.cache = DependencyCache(folder / "dependencies")
        self.lookup_id = lookup_id

    def document_id(self, url_or_id: str) -> int:
        """The URL-Id of a stored document given its URL (canonicalised) or its URL-Id."""
        if url_or_id.isdigit():
            url_id = int(url_or_id)
            self.repository.document(url_id)
            return url_id
        try:
            url = canonicalize_url(url_or_id)
        except InvalidURL as error:
            raise DocumentNotFound(f"no stored document for {url_or_id}: {error}") from None
        if self.lookup_id is not None:
            url_id = self.lookup_id(url)
            if url_id is not None and self.repository.latest(url_id) is not None:
                return url_id
        else:
            for document in self.repository.documents(url):
                if document.url == url:
                    return document.url_id
        raise DocumentNotFound(f"no stored document for {url_or_id}")

    def parse(self, url_id: int, version: int | None = None) -> etree._ElementTree:
        """A stored version as an lxml tree."""
        url = self.repository.document(url_id).url
        parser = safe_parser(CacheResolver(self.cache, self.cache.id_of))
        document = self.repository.read(url_id, version)
        try:
            with PARSE_LOCK:  # the loader may parse in another thread (loader.parselock)
                root = etree.fromstring(document, parser, base_url=url)
        except etree.XMLSyntaxError as error:
            raise rejection(error, parser.error_log) from None
        return root.getroottree()
