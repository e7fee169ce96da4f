"""What the dashboard reads of the XML warehouse: a document's stored versions.

The loader owns the warehouse (``loader.Warehouse``); XPath queries over it run in the
dashboard's pool of worker processes (:mod:`.queries`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loader import DocumentNotFound, Warehouse

DOCUMENTS = "documents"


def stored_versions(repo_dir: Path, url_id: int) -> list[dict[str, Any]] | None:
    """Every kept version of a document with its validity, oldest first; None if not stored."""
    try:
        document = Warehouse(Path(repo_dir) / DOCUMENTS).repository.document(url_id)
    except DocumentNotFound:
        return None
    return [version.as_dict() for version in document.versions]
