"""The XML loader: parse, validate and store XML documents and their versions (paper §2–3).

Entry points: :class:`Loader` (the crawler's ``DocumentSink``), :class:`Warehouse` (read
side: documents, versions, queries), :class:`LoaderSettings`; the crawler implements
:class:`DependencyFetcher`.
"""

from loader.bodies import md5_of
from loader.changes import diff_versions, iso
from loader.errors import (
    DocumentNotFound,
    DocumentRejected,
    LoaderError,
    QueryError,
    QueryTimeout,
)
from loader.interfaces import Body, DependencyFetcher, DocumentSink, FetchedBody
from loader.loading import Loader
from loader.parselock import PARSE_LOCK
from loader.parsing import parse_tree, safe_parser
from loader.query import compile_query, parse_namespaces, query_documents, run_query
from loader.reading import Warehouse
from loader.records import Check, LoadOutcome, LoadResult, Validity, VersionInfo
from loader.settings import LoaderSettings

__all__ = [
    "PARSE_LOCK",
    "Body",
    "Check",
    "DependencyFetcher",
    "DocumentNotFound",
    "DocumentRejected",
    "DocumentSink",
    "FetchedBody",
    "LoadOutcome",
    "LoadResult",
    "Loader",
    "LoaderError",
    "LoaderSettings",
    "QueryError",
    "QueryTimeout",
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
