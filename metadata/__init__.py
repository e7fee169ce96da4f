"""The metadata manager (paper §4): Map-, Refresh-, Link- and Status-Data on SQLite.

>>> from metadata import Metadata, canonicalize_url

The names below are imported when first used (PEP 562), so that a light module of the
package (:mod:`metadata.glance`, :mod:`metadata.clock`) loads without the manager's numpy,
sqlite-utils and pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "MAX_CHILDREN": "encoding",
    "InvalidURL": "errors",
    "MetadataError": "errors",
    "NotARepository": "errors",
    "RepositoryExists": "errors",
    "SchemaTooNew": "errors",
    "UnknownPage": "errors",
    "Metadata": "manager",
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
    "canonicalize_url": "urls",
}
"""Each public name and the module of this package that defines it."""

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


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'metadata' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"metadata.{_HOME[name]}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
