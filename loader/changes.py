"""Change control: what changed between two versions of a document, on the canonical form.

Both versions are put in canonical form (W3C Canonical XML 2.0, with text trimmed: attribute
order, namespace prefixes' declaration order, empty-element syntax and indentation stop
mattering), pretty-printed one element per line, and compared line by line.
"""

from __future__ import annotations

import difflib
from datetime import UTC, datetime

from lxml import etree

from loader.reading import Warehouse


def canonical_lines(tree: etree._ElementTree) -> list[str]:
    """A document's canonical form (C14N 2.0, text trimmed), one element per line.

    >>> a = etree.fromstring('<r b="2" a="1">  <x/></r>').getroottree()
    >>> canonical_lines(a)
    ['<r a="1" b="2">', '  <x/>', '</r>']
    """
    canonical = etree.canonicalize(tree, strip_text=True)
    flat = etree.fromstring(canonical.encode(), etree.XMLParser(remove_blank_text=True))
    return etree.tostring(flat, pretty_print=True, encoding="unicode").splitlines()


def iso(timestamp: float) -> str:
    """A (simulated) timestamp as ISO 8601 UTC."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def diff_versions(
    warehouse: Warehouse, url_id: int, from_version: int | None, to_version: int | None
) -> list[str]:
    """Unified diff of two stored versions (default: the one before the latest, the latest).

    An empty list means the two versions are the same once canonical.
    """
    versions = warehouse.repository.document(url_id).versions
    if to_version is None:
        to_version = versions[-1].version
    if from_version is None:
        earlier = [v.version for v in versions if v.version < to_version]
        from_version = earlier[-1] if earlier else to_version
    old = warehouse.repository.version(url_id, from_version)
    new = warehouse.repository.version(url_id, to_version)
    return list(
        difflib.unified_diff(
            canonical_lines(warehouse.parse(url_id, from_version)),
            canonical_lines(warehouse.parse(url_id, to_version)),
            f"version {old.version} ({iso(old.fetched_at)})",
            f"version {new.version} ({iso(new.fetched_at)})",
            lineterm="",
        )
    )
