"""The loader's settings: one typed dataclass of documented defaults.

Built from plain values (the daemon composes it into ``xyleme.toml``); every limit is on by
default so a hostile or broken document costs bounded time and memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MIB = 1 << 20
LIBXML2_MAX_DEPTH = 256


@dataclass(frozen=True, slots=True)
class LoaderSettings:
    """Limits and choices of the XML loader.

    Attributes
    ----------
    max_document_bytes
        Documents larger than this are refused (ERROR, "document too large").
    stream_threshold_bytes
        Documents larger than this are parsed incrementally (a pull parser fed in chunks whose
        processed elements are freed), so memory does not grow with the document.
    stream_chunk_bytes
        Size of the chunks a streamed document is read and fed in.
    max_depth
        Deepest element nesting accepted. libxml2 itself refuses deeper than 256 without its
        "huge" option (which the loader never sets), so the default costs nothing; a lower
        value adds one XPath check per document.
    max_entity_expansion_bytes
        Largest replacement text any one declared entity may expand to. libxml2 also refuses
        documents whose entity amplification factor is excessive (billion laughs, quadratic
        blowup); this is the loader's own, configurable bound on top of it.
    max_entity_declarations
        Most entities one document (internal and external DTD) may declare.
    versions_kept
        Versions of each document kept in the repository; the oldest are pruned.
    compress_versions
        Compress stored bodies with zstd (about half the size, ~20 us per 5 KB document).
    dependency_timeout_seconds
        Simulated seconds a document may wait for its DTD, entities or schema before it is
        loaded without them (not validated); also how long a dependency that could not be
        had counts as unavailable before it is asked for again.
    max_links
        Most links kept per document (the paper's Link-Data keeps at most 65,534 children).
    sitemap_max_urls, sitemap_max_bytes
        The sitemap protocol's caps: URLs after the 50,000th, or past the first 50 MB of a
        sitemap, are ignored (and the truncation is reported).
    max_validation_errors
        How many validity errors are kept with a stored version.
    query_time_limit_seconds, query_max_results
        Defaults of ``xyleme query``: a hard wall-clock limit and a result cap.
    system_catalog
        Look public DTDs and entities up in the system's XML catalog (``XML_CATALOG_FILES``,
        else ``/etc/xml/catalog``) before asking the crawler for them.
    catalog_files
        The user's XML catalogs (paths), consulted first; each must be readable.
    links
        More linking attributes, by namespace (``""`` for none): ``{namespace: (attribute,
        ...)}``, an attribute named in Clark notation (``{ns}name``) or plainly. Their values
        are links, resolved against the element's base URI (``[loader.links]`` in
        ``xyleme.toml``).
    """

    max_document_bytes: int = 256 * MIB
    stream_threshold_bytes: int = 8 * MIB
    stream_chunk_bytes: int = 256 * 1024
    max_depth: int = LIBXML2_MAX_DEPTH
    max_entity_expansion_bytes: int = 1 * MIB
    max_entity_declarations: int = 10_000
    versions_kept: int = 10
    compress_versions: bool = True
    dependency_timeout_seconds: float = 24 * 3600.0
    max_links: int = 65_534
    sitemap_max_urls: int = 50_000
    sitemap_max_bytes: int = 50 * MIB
    max_validation_errors: int = 5
    query_time_limit_seconds: float = 10.0
    query_max_results: int = 1000
    system_catalog: bool = True
    catalog_files: tuple[str, ...] = ()
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        positive = {
            "max_document_bytes": self.max_document_bytes,
            "stream_threshold_bytes": self.stream_threshold_bytes,
            "stream_chunk_bytes": self.stream_chunk_bytes,
            "max_depth": self.max_depth,
            "versions_kept": self.versions_kept,
            "dependency_timeout_seconds": self.dependency_timeout_seconds,
            "max_links": self.max_links,
            "query_time_limit_seconds": self.query_time_limit_seconds,
            "query_max_results": self.query_max_results,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"loader setting {name} must be positive, got {value!r}")
        if self.max_depth > LIBXML2_MAX_DEPTH:
            raise ValueError(
                f"loader setting max_depth cannot exceed libxml2's limit of {LIBXML2_MAX_DEPTH}"
            )
