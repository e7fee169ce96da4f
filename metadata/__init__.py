"""The metadata store (paper §4): Map-, Refresh-, Link- and Status-Data, scores, the XML
versions and the archive's revisit index — every SQL statement of xyleme.

Its contract, one typed Protocol per subject, is :mod:`metadata.api`; :class:`Metadata` is
the SQLite implementation of :class:`~metadata.api.MetadataAPI`, :class:`VersionStore` of
:class:`~metadata.api.VersionsAPI`, :class:`RevisitIndex` of
:class:`~metadata.api.RevisitsAPI`. Errors are the store's own (:class:`MetadataError` and
its subclasses), never the database driver's.

>>> from metadata import Clock, Metadata, canonicalize_url

The names below are imported when first used (PEP 562), so that a light module of the
package (:mod:`metadata.glance`, :mod:`metadata.clock`) loads without the manager's numpy,
sqlite-utils and pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metadata import reports
    from metadata.api import (
        CashTransfersAPI,
        CoreAPI,
        FetchesAPI,
        LinksAPI,
        MetadataAPI,
        NamedStateAPI,
        PageIdsAPI,
        RanksAPI,
        RevisitsAPI,
        StateAPI,
        StatusAPI,
        VersionsAPI,
        WorkersAPI,
    )
    from metadata.cash_transfers import (
        TOTAL_CASH,
        CashPart,
        CashPartsMismatch,
        CashPartTaken,
        CashTotal,
    )
    from metadata.clock import (
        CLOCK_STATE,
        AcceleratedClock,
        Clock,
        ManualClock,
        SystemClock,
        encode_clock,
    )
    from metadata.encoding import MAX_CHILDREN
    from metadata.engines import target_of
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
        URLTooLong,
        VersionNotFound,
    )
    from metadata.glance import Glance
    from metadata.heartbeats import STALE_AFTER, Heartbeat
    from metadata.leader import CoordinatorLock, LeadLost
    from metadata.manager import Metadata, migrate_store
    from metadata.reports import HOST_FIELDS, host_report, write_host_stats
    from metadata.revisits import RevisitIndex, Stored
    from metadata.settings import MetadataSettings, StoreSettings
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
    from metadata.urls import MAX_URL_LENGTH, URL_TOO_LONG, canonicalize_url
    from metadata.version_records import (
        Change,
        Check,
        NewVersion,
        StoredDocument,
        Validity,
        VersionInfo,
    )
    from metadata.versions import VersionStore

_HOME = {
    "CashTransfersAPI": "api",
    "CoreAPI": "api",
    "TOTAL_CASH": "cash_transfers",
    "CashPart": "cash_transfers",
    "CashPartTaken": "cash_transfers",
    "CashPartsMismatch": "cash_transfers",
    "CashTotal": "cash_transfers",
    "FetchesAPI": "api",
    "LinksAPI": "api",
    "MetadataAPI": "api",
    "NamedStateAPI": "api",
    "PageIdsAPI": "api",
    "RanksAPI": "api",
    "RevisitsAPI": "api",
    "StateAPI": "api",
    "StatusAPI": "api",
    "VersionsAPI": "api",
    "WorkersAPI": "api",
    "Heartbeat": "heartbeats",
    "STALE_AFTER": "heartbeats",
    "CoordinatorLock": "leader",
    "LeadLost": "leader",
    "AcceleratedClock": "clock",
    "Clock": "clock",
    "ManualClock": "clock",
    "SystemClock": "clock",
    "CLOCK_STATE": "clock",
    "encode_clock": "clock",
    "HOST_FIELDS": "reports",
    "host_report": "reports",
    "write_host_stats": "reports",
    "MAX_CHILDREN": "encoding",
    "DocumentNotFound": "errors",
    "InvalidURL": "errors",
    "MetadataError": "errors",
    "NotARepository": "errors",
    "RepositoryCorrupt": "errors",
    "RepositoryExists": "errors",
    "SchemaTooNew": "errors",
    "StoreError": "errors",
    "StoreFull": "errors",
    "UnknownPage": "errors",
    "URLTooLong": "errors",
    "VersionNotFound": "errors",
    "Metadata": "manager",
    "RevisitIndex": "revisits",
    "Stored": "revisits",
    "MetadataSettings": "settings",
    "PAGE_TYPE_CODE": "types",
    "PAGE_TYPE_NAMES": "types",
    "SCORE_COLUMNS": "types",
    "FetchResult": "types",
    "LoadStatus": "types",
    "Observation": "types",
    "PageRecord": "types",
    "PageType": "types",
    "RejectedLink": "types",
    "MAX_URL_LENGTH": "urls",
    "URL_TOO_LONG": "urls",
    "Glance": "glance",
    "target_of": "engines",
    "migrate_store": "manager",
    "StoreSettings": "settings",
    "canonicalize_url": "urls",
    "Change": "version_records",
    "Check": "version_records",
    "NewVersion": "version_records",
    "StoredDocument": "version_records",
    "Validity": "version_records",
    "VersionInfo": "version_records",
    "VersionStore": "versions",
}
"""Each public name and the module of this package that defines it."""

__all__ = [
    "CLOCK_STATE",
    "HOST_FIELDS",
    "MAX_CHILDREN",
    "MAX_URL_LENGTH",
    "PAGE_TYPE_CODE",
    "PAGE_TYPE_NAMES",
    "SCORE_COLUMNS",
    "STALE_AFTER",
    "TOTAL_CASH",
    "URL_TOO_LONG",
    "AcceleratedClock",
    "CashPart",
    "CashPartTaken",
    "CashPartsMismatch",
    "CashTotal",
    "CashTransfersAPI",
    "Change",
    "Check",
    "Clock",
    "CoordinatorLock",
    "CoreAPI",
    "DocumentNotFound",
    "FetchResult",
    "FetchesAPI",
    "Glance",
    "Heartbeat",
    "InvalidURL",
    "LeadLost",
    "LinksAPI",
    "LoadStatus",
    "ManualClock",
    "Metadata",
    "MetadataAPI",
    "MetadataError",
    "MetadataSettings",
    "NamedStateAPI",
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
    "StoreSettings",
    "Stored",
    "StoredDocument",
    "SystemClock",
    "URLTooLong",
    "UnknownPage",
    "Validity",
    "VersionInfo",
    "VersionNotFound",
    "VersionStore",
    "VersionsAPI",
    "WorkersAPI",
    "canonicalize_url",
    "encode_clock",
    "host_report",
    "migrate_store",
    "reports",
    "target_of",
    "write_host_stats",
]


SUBMODULES = ("reports",)
"""Modules of this package that are public as a whole (the host report's helpers)."""


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return importlib.import_module(f"metadata.{name}")
    if name not in _HOME:
        raise AttributeError(f"module 'metadata' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"metadata.{_HOME[name]}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME, *SUBMODULES})
