"""The metadata manager (paper §4): Map-, Refresh-, Link- and Status-Data on SQLite.

>>> from metadata import Metadata, canonicalize_url
"""

from metadata import reports
from metadata.clock import (
    CLOCK_STATE,
    AcceleratedClock,
    Clock,
    ManualClock,
    SystemClock,
    encode_clock,
)
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
from metadata.reports import HOST_FIELDS, host_report, write_host_stats
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
    "CLOCK_STATE",
    "HOST_FIELDS",
    "MAX_CHILDREN",
    "MAX_URL_LENGTH",
    "PAGE_TYPE_CODE",
    "PAGE_TYPE_NAMES",
    "SCORE_COLUMNS",
    "AcceleratedClock",
    "Clock",
    "FetchResult",
    "InvalidURL",
    "LoadStatus",
    "ManualClock",
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
    "SystemClock",
    "UnknownPage",
    "canonicalize_url",
    "encode_clock",
    "host_report",
    "reports",
    "write_host_stats",
]
