"""The loader's settings: one typed dataclass of documented defaults and ranges.

Built from plain values (the daemon composes it into ``xyleme.toml``), in the convention of
every package's settings (``conventions``); every limit is on by default so a hostile
or broken document costs bounded time and memory.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated

from pydantic import Field
from pydantic.dataclasses import dataclass

from conventions import SETTINGS

MIB = 1 << 20
GIB = 1 << 30
LIBXML2_MAX_DEPTH = 256
DAY_S = 86_400.0
CatalogPath = Annotated[str, Field(min_length=1, max_length=4096)]
Namespace = Annotated[str, Field(max_length=4096)]
AttributeName = Annotated[str, Field(min_length=1, max_length=4096)]


@dataclass(frozen=True, slots=True, config=SETTINGS)
class LoaderSettings:
    """Limits and choices of the XML loader."""

    max_document_bytes: Annotated[int, Field(ge=1, le=16 * GIB)] = 256 * MIB
    """Documents larger than this are refused (ERROR, "document too large")."""
    stream_threshold_bytes: Annotated[int, Field(ge=1, le=GIB)] = 8 * MIB
    """Documents larger than this are parsed incrementally (a pull parser fed in chunks whose
    processed elements are freed), so memory does not grow with the document."""
    stream_chunk_bytes: Annotated[int, Field(ge=1, le=64 * MIB)] = 256 * 1024
    """Size of the chunks a streamed document is read and fed in."""
    max_depth: Annotated[int, Field(ge=1, le=LIBXML2_MAX_DEPTH)] = LIBXML2_MAX_DEPTH
    """Deepest element nesting accepted. libxml2 itself refuses deeper than 256 without its
    "huge" option (which the loader never sets), so the default costs nothing; a lower
    value adds one XPath check per document."""
    max_entity_expansion_bytes: Annotated[int, Field(ge=0, le=GIB)] = 1 * MIB
    """Largest replacement text any one declared entity may expand to. libxml2 also refuses
    documents whose entity amplification factor is excessive (billion laughs, quadratic
    blowup); this is the loader's own, configurable bound on top of it."""
    max_entity_declarations: Annotated[int, Field(ge=0, le=10_000_000)] = 10_000
    """Most entities one document (internal and external DTD) may declare."""
    versions_kept: Annotated[int, Field(ge=1, le=10_000)] = 10
    """Versions of each document kept in the repository; the oldest are pruned."""
    compress_versions: bool = True
    """Compress stored bodies with zstd (about half the size, ~20 us per 5 KB document)."""
    dependency_timeout_seconds: Annotated[float, Field(gt=0.0, le=366 * DAY_S)] = DAY_S
    """Simulated seconds a document may wait for its DTD, entities or schema before it is
    loaded without them (not validated); also how long a dependency that could not be had
    counts as unavailable before it is asked for again."""
    max_links: Annotated[int, Field(ge=1, le=10_000_000)] = 65_534
    """Most links kept per document (the paper's Link-Data keeps at most 65,534 children)."""
    sitemap_max_urls: Annotated[int, Field(ge=0, le=10_000_000)] = 50_000
    """URLs after this many in one sitemap are ignored, and the truncation is reported (the
    sitemap protocol's cap is 50,000)."""
    sitemap_max_bytes: Annotated[int, Field(ge=0, le=GIB)] = 50 * MIB
    """Bytes of a sitemap read; the rest is ignored and the truncation reported (the sitemap
    protocol's cap is 50 MB)."""
    max_validation_errors: Annotated[int, Field(ge=0, le=10_000)] = 5
    """How many validity errors are kept with a stored version."""
    query_time_limit_seconds: Annotated[float, Field(gt=0.0, le=DAY_S)] = 10.0
    """Default of ``xyleme query``: a hard wall-clock limit, in seconds."""
    query_max_results: Annotated[int, Field(ge=1, le=10_000_000)] = 1000
    """Default of ``xyleme query``: the most results printed."""
    system_catalog: bool = True
    """Look public DTDs and entities up in the system's XML catalog (``XML_CATALOG_FILES``,
    else ``/etc/xml/catalog``) before asking the crawler for them."""
    catalog_files: Annotated[tuple[CatalogPath, ...], Field(max_length=100)] = ()
    """The user's XML catalogs (paths), consulted first; each must be readable."""
    links: Annotated[dict[Namespace, tuple[AttributeName, ...]], Field(max_length=1000)] = field(
        default_factory=dict
    )
    """More linking attributes by namespace (``""`` for none), named plainly or as
    ``{namespace}name``: their values are links (``[loader.links]`` in ``xyleme.toml``)."""
