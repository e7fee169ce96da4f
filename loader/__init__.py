"""The XML loader: parse, validate and store XML documents and their versions (paper §2–3).

Entry points: :class:`Loader` (the crawler's ``DocumentSink``), :class:`Warehouse` (read
side: documents, versions, queries), :class:`LoaderSettings`; the crawler implements
:class:`DependencyFetcher`.
"""

from loader.errors import DocumentRejected, LoaderError
from loader.interfaces import DependencyFetcher, DocumentSink
from loader.loading import Loader
from loader.reading import Warehouse
from loader.records import Check, LoadOutcome, LoadResult, Validity, VersionInfo
from loader.settings import LoaderSettings

__all__ = [
    "Check",
    "DependencyFetcher",
    "DocumentRejected",
    "DocumentSink",
    "LoadOutcome",
    "LoadResult",
    "Loader",
    "LoaderError",
    "LoaderSettings",
    "Validity",
    "VersionInfo",
    "Warehouse",
]
