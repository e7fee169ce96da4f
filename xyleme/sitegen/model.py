"""What the realistic site is made of: responses, the links each page declares, the site.

The generators write each page's bytes *and* declare, next to every reference they write,
the absolute URL it means and what kind of reference it is. The ground truth
(:mod:`xyleme.sitegen.truth`) is computed from these declarations, never by parsing the
pages, so it is independent of the crawler's and the loader's link extraction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from yarl import URL

XML_TYPES = ("application/xml", "text/xml")
"""Content types that are XML besides ``*/*+xml`` (what a page is: ARCHITECTURE.md)."""


def is_xml_type(content_type: str | None) -> bool:
    """Whether a (parameter-free, lower-case) Content-Type says XML."""
    return content_type is not None and (content_type in XML_TYPES or content_type.endswith("+xml"))


def canonical(url: str) -> str:
    """The canonical spelling of an absolute URL (yarl's, the metadata's rule): the key of
    every truth table, so it compares with the URLs the metadata stores."""
    parsed = URL(url).with_fragment(None)
    if parsed.raw_path in ("", "/"):
        parsed = parsed.with_path("/", encoded=True, keep_query=True)
    return str(parsed)


@dataclass(frozen=True, slots=True)
class Response:
    """What the server answers for one URL."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    """The Content-Type header as sent (``None``: no header at all)."""
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def media_type(self) -> str | None:
        """The Content-Type without parameters, lower-cased."""
        if self.content_type is None:
            return None
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def location(self) -> str | None:
        """The redirect target of a 3xx answer."""
        return dict(self.headers).get("Location")


@dataclass(frozen=True, slots=True)
class Link:
    """One reference a page makes: its absolute canonical target and how it was written."""

    target: str
    kind: str
    """e.g. ``html:a``, ``html:link-next``, ``docbook4:ulink``, ``sitemap:loc``."""


@dataclass(frozen=True, slots=True)
class Document:
    """The truth about one URL the generator made a document: its type and its style."""

    is_xml: bool
    style: str
    """The generator that wrote it (``sphinx``, ``javadoc``, ``docbook4``, ``encoding`` …)."""


@dataclass
class Site:
    """A generated site: every response by canonical URL, and what the generator declared."""

    origin: str
    """The in-scope origin, ``http://127.0.0.1:PORT``."""
    idna_origin: str
    """A second in-scope origin whose host is an IDNA name (punycode), same server."""
    offsite_origin: str
    """An origin the scope does NOT name (another port of 127.0.0.1): never to be fetched."""
    seeds: list[str]
    responses: dict[str, Response] = field(default_factory=dict)
    documents: dict[str, Document] = field(default_factory=dict)
    links: dict[str, list[Link]] = field(default_factory=dict)
    disallowed: tuple[str, ...] = ()
    """Path prefixes robots.txt disallows on the main origin."""
    sitemaps: list[str] = field(default_factory=list)
    """Sitemap URLs robots.txt names (reachable without a link)."""

    @property
    def scope_origins(self) -> tuple[str, ...]:
        """The origins a crawl of this site may fetch."""
        return (self.origin, self.idna_origin)

    def in_scope(self, url: str) -> bool:
        """Whether ``url`` (canonical) lies on one of the scope's origins."""
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" in self.scope_origins

    def robots_allows(self, url: str) -> bool:
        """Whether the main origin's robots.txt lets a crawler fetch ``url``."""
        if not url.startswith(self.origin + "/"):
            return True
        path = url[len(self.origin) :]
        return not any(path.startswith(prefix) for prefix in self.disallowed)

    def add(
        self,
        url: str,
        response: Response,
        *,
        document: Document | None = None,
        links: list[Link] | None = None,
    ) -> None:
        """Serve ``response`` at ``url``; a document brings its declared links."""
        key = canonical(url)
        if key in self.responses:
            raise ValueError(f"two responses for {key}")
        self.responses[key] = response
        if document is not None:
            self.documents[key] = document
            self.links[key] = list(links or [])
