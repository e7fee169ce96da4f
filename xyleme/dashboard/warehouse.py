"""What the dashboard reads of the XML warehouse: stored versions, and XPath query pages.

The loader owns the warehouse (``loader.Warehouse``) and its query engine
(``loader.query.run_query``: the latest version of every stored document, in a child process
killed at a time limit). This module only pages through the query's answer and turns every
failure into a :class:`QueryFailed` whose message the view shows: a bad expression is the
user's mistake, never a 500.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from loader import LoaderError, Warehouse
from loader.errors import DocumentNotFound
from loader.query import run_query

DOCUMENTS = "documents"


class QueryFailed(ValueError):
    """The expression is not XPath 1.0, could not be evaluated, or ran out of time."""


def run_xpath(
    repo_dir: Path, xpath: str, offset: int, limit: int, time_limit: float
) -> tuple[list[dict[str, Any]], bool]:
    """Results ``offset`` to ``offset + limit`` of ``xpath`` and whether more follow.

    Each result is ``{url_id, url, version, value}`` (an element serialised as XML).
    """
    folder = Path(repo_dir) / DOCUMENTS
    if not folder.is_dir():
        return [], False
    try:
        matches = run_query(folder, xpath, limit=offset + limit + 1, time_limit=time_limit)
    except LoaderError as error:
        raise QueryFailed(str(error)) from None
    page = [asdict(match) for match in matches[offset : offset + limit]]
    return page, len(matches) > offset + limit


def stored_versions(repo_dir: Path, url_id: int) -> list[dict[str, Any]] | None:
    """Every kept version of a document with its validity, oldest first; None if not stored."""
    try:
        document = Warehouse(Path(repo_dir) / DOCUMENTS).repository.document(url_id)
    except DocumentNotFound:
        return None
    return [version.as_dict() for version in document.versions]
