"""The XML loader: parse, validate and store XML documents and their versions (paper §2–3).

Entry points: :class:`Loader` (the crawler's ``DocumentSink``), :class:`Warehouse` (read
side: documents, versions, queries), :class:`LoaderSettings`; the crawler implements
:class:`DependencyFetcher`.
"""

from loader.bodies import md5_of
from loader.changes import diff_versions, iso
from loader.errors import DocumentNotFound, DocumentRejected, LoaderError
from loader.interfaces import Body, DependencyFetcher, DocumentSink, FetchedBody
from loader.loading import Loader
from loader.parsing import parse_tree, safe_parser
from loader.query import compile_query, parse_namespaces, query_documents, run_query
from loader.reading import Warehouse
from loader.records import Check, LoadOutcome, LoadResult, Validity, VersionInfo
from loader.repository import DocumentRepository, NewVersion, StoredDocument
from loader.settings import LoaderSettings

__all__ = [
    "Body",
    "Check",
    "DependencyFetcher",
    "DocumentNotFound",
    "DocumentRejected",
    "DocumentRepository",
    "DocumentSink",
    "FetchedBody",
    "LoadOutcome",
    "LoadResult",
    "Loader",
    "LoaderError",
    "LoaderSettings",
    "NewVersion",
    "StoredDocument",
    "Validity",
    "VersionInfo",
    "Warehouse",
    "compile_query",
    "diff_versions",
    "iso",
    "md5_of",
    "parse_namespaces",
    "parse_tree",
    "query_documents",
    "run_query",
    "safe_parser",
]
