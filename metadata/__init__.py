"""The metadata manager (paper §4): Map-, Refresh-, Link- and Status-Data on SQLite.

>>> from metadata import Metadata, canonicalize_url
"""

from metadata.encoding import MAX_CHILDREN
from metadata.errors import (
    InvalidURL,
    MetadataError,
    NotARepository,
    RepositoryExists,
    SchemaTooNew,
    UnknownPage,
)
from metadata.manager import Metadata
from metadata.settings import MetadataSettings
from metadata.types import (
    PAGE_TYPE_CODE,
    PAGE_TYPE_NAMES,
    SCORE_COLUMNS,
    FetchResult,
    LoadStatus,
    Observation,
    PageRecord,
    PageType,
    RejectedLink,
)
from metadata.urls import MAX_URL_LENGTH, canonicalize_url

__all__ = [
    "MAX_CHILDREN",
    "MAX_URL_LENGTH",
    "PAGE_TYPE_CODE",
    "PAGE_TYPE_NAMES",
    "SCORE_COLUMNS",
    "FetchResult",
    "InvalidURL",
    "LoadStatus",
    "Metadata",
    "MetadataError",
    "MetadataSettings",
    "NotARepository",
    "Observation",
    "PageRecord",
    "PageType",
    "RejectedLink",
    "RepositoryExists",
    "SchemaTooNew",
    "UnknownPage",
    "canonicalize_url",
]
