"""The metadata store (paper §4): Map-, Refresh-, Link- and Status-Data, scores, the XML
versions and the archive's revisit index — every SQL statement of xyleme.

Its contract, one typed Protocol per subject, is :mod:`metadata.api`; :class:`Metadata` is
the SQLite implementation of :class:`~metadata.api.MetadataAPI`, :class:`VersionStore` of
:class:`~metadata.api.VersionsAPI`, :class:`RevisitIndex` of
:class:`~metadata.api.RevisitsAPI`. Errors are the store's own (:class:`MetadataError` and
its subclasses), never the database driver's.

>>> from metadata import Clock, Metadata, canonicalize_url
"""

from metadata.api import (
    CoreAPI,
    FetchesAPI,
    LinksAPI,
    MetadataAPI,
    PageIdsAPI,
    RanksAPI,
    RevisitsAPI,
    StateAPI,
    StatusAPI,
    VersionsAPI,
)
from metadata.clock import AcceleratedClock, Clock, ManualClock, SystemClock
from metadata.encoding import MAX_CHILDREN
from metadata.errors import (
    DocumentNotFound,
    InvalidURL,
    MetadataError,
    NotARepository,
    RepositoryCorrupt,
    RepositoryExists,
    SchemaTooNew,
    StoreError,
    StoreFull,
    UnknownPage,
    VersionNotFound,
)
from metadata.manager import Metadata
from metadata.revisits import RevisitIndex, Stored
from metadata.settings import MetadataSettings
from metadata.types import (
    PAGE_TYPE_CODE,
    SCORE_COLUMNS,
    FetchResult,
    LoadStatus,
    Observation,
    PageRecord,
    PageType,
    RejectedLink,
)
from metadata.urls import MAX_URL_LENGTH, canonicalize_url
from metadata.version_records import (
    Change,
    Check,
    NewVersion,
    StoredDocument,
    Validity,
    VersionInfo,
)
from metadata.versions import VersionStore

__all__ = [
    "MAX_CHILDREN",
    "MAX_URL_LENGTH",
    "PAGE_TYPE_CODE",
    "SCORE_COLUMNS",
    "AcceleratedClock",
    "Change",
    "Check",
    "Clock",
    "CoreAPI",
    "DocumentNotFound",
    "FetchResult",
    "FetchesAPI",
    "InvalidURL",
    "LinksAPI",
    "LoadStatus",
    "ManualClock",
    "Metadata",
    "MetadataAPI",
    "MetadataError",
    "MetadataSettings",
    "NewVersion",
    "NotARepository",
    "Observation",
    "PageIdsAPI",
    "PageRecord",
    "PageType",
    "RanksAPI",
    "RejectedLink",
    "RepositoryCorrupt",
    "RepositoryExists",
    "RevisitIndex",
    "RevisitsAPI",
    "SchemaTooNew",
    "StateAPI",
    "StatusAPI",
    "StoreError",
    "StoreFull",
    "Stored",
    "StoredDocument",
    "SystemClock",
    "UnknownPage",
    "Validity",
    "VersionInfo",
    "VersionNotFound",
    "VersionStore",
    "VersionsAPI",
    "canonicalize_url",
]
