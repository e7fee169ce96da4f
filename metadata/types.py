"""The typed records that cross the metadata manager's API (paper §4).

These are the only shapes other modules hand to, or get from, the metadata manager: the
crawler writes a :class:`FetchResult` per fetch, the loader sets children and statuses, the
ranking and refresh modules read and write score arrays. None of them sees a table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class PageType(enum.StrEnum):
    """The type of a page as the paper's Refresh-Data lists it, plus UNKNOWN and RESOURCE.

    UNKNOWN is a URL discovered (it has a URL-Id) but never read; ERROR a page whose last
    read failed (the reason says why; it is retried with back-off); DEAD a page Xyleme
    believes gone from the web (404/410, DNS failure, too many errors), re-checked only in the
    background. RESOURCE is a body read but not a document (an image, a script, a style
    sheet…, by its Content-Type or sniffed): recorded with its type, size and MD5, never
    loaded, never refreshed, and left out of the link matrix of the rankings (§5: a link to
    an image is no vote for a page of the warehouse).
    """

    HTML = "HTML"
    XML = "XML"
    DTD = "DTD"
    ERROR = "ERROR"
    DEAD = "DEAD"
    UNKNOWN = "UNKNOWN"
    RESOURCE = "RESOURCE"  # appended: the codes of the others never change


PAGE_TYPE_CODE: dict[PageType, int] = {page_type: code for code, page_type in enumerate(PageType)}
"""The small integer of each type in :meth:`Metadata.refresh_view`'s ``type`` column.

>>> PAGE_TYPE_CODE[PageType.XML]
1
"""

PAGE_TYPE_NAMES = tuple(page_type.value for page_type in PAGE_TYPE_CODE)
"""Each code's name, for the modules that read types by name (a tuple, so that readers of
the store such as ``xyleme status`` load without numpy; index an array of codes with
``numpy.asarray(PAGE_TYPE_NAMES, dtype=object)[codes]``).

>>> PAGE_TYPE_NAMES[1], PAGE_TYPE_NAMES[0]
('XML', 'HTML')
"""

SCORE_COLUMNS = (
    "importance",
    "interest",
    "opic_cash",
    "opic_importance",
    "change_rate",
    "next_refresh",
)
"""The per-page numbers that ranking, OPIC and refresh write in bulk (``Metadata.set_scores``)."""


class LoadStatus(enum.StrEnum):
    """The loading status of an XML document (the paper's Status-Data)."""

    WAITING_DTD = "WAITING_DTD"
    WAITING_ENTITY = "WAITING_ENTITY"
    WAITING_SCHEMA = "WAITING_SCHEMA"
    LOADED = "LOADED"
    FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class Observation:
    """One access to a page, as the change-rate estimators of §6.1 need it.

    ``at`` is the simulated time of the access; ``changed`` is None for the first access
    (nothing to compare with), True when the body's MD5 differs from the previous one, and
    False for a 304 or an identical MD5 (a 304 is never a change). ``last_modified`` is the
    server's Last-Modified header as a simulated timestamp, when it sent one.
    """

    at: float
    changed: bool | None
    last_modified: float | None = None


@dataclass(slots=True)
class FetchResult:
    """Everything one fetch of one page produced: committed in one transaction.

    ``children`` replaces the page's stored children when it is a list (possibly empty) and
    leaves them alone when it is None (a 304, an error, or a document whose links the loader
    will set later). ``md5`` is the hex MD5 of the body (None for a 304 or a failure).
    ``status`` is the HTTP status (None when no response came: DNS failure, timeout…), and
    ``reason`` says why a page is ERROR or DEAD. ``redirect_to`` is the URL-Id of a redirect's
    target, recorded so the target has its own record. ``changed`` may stay None: the
    metadata manager then decides it from the MD5 it stored last time (and returns it).
    ``robots`` is an HTML page's robots meta directives (sorted, comma-joined, e.g.
    ``"noarchive,noindex"``) and ``canonical_to`` the URL-Id of its ``rel=canonical`` URL
    when that is another page; a read states both afresh, a 304 keeps the stored ones.
    """

    url_id: int
    fetched_at: float
    page_type: PageType
    status: int | None = None
    reason: str | None = None
    md5: str | None = None
    changed: bool | None = None
    last_modified: float | None = None
    etag: str | None = None
    content_type: str | None = None
    size: int | None = None
    children: list[int] | None = None
    redirect_to: int | None = None
    robots: str | None = None
    canonical_to: int | None = None


@dataclass(slots=True)
class PageRecord:
    """A page's whole Refresh-Data record, as :meth:`Metadata.page` returns it."""

    url_id: int
    url: str
    page_type: PageType = PageType.UNKNOWN
    status: int | None = None
    reason: str | None = None
    first_access: float | None = None
    last_access: float | None = None
    last_change: float | None = None
    last_modified: float | None = None
    etag: str | None = None
    md5: str | None = None
    content_type: str | None = None
    size: int | None = None
    refreshes: int = 0
    unchanged_accesses: int = 0
    failures: int = 0
    importance: float | None = None
    interest: float | None = None
    opic_cash: float | None = None
    opic_importance: float | None = None
    change_rate: float | None = None
    change_rate_method: str | None = None
    next_refresh: float | None = None
    redirect_to: int | None = None
    robots: str | None = None
    canonical_to: int | None = None
    discovered_at: float | None = None
    observations: list[Observation] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RejectedLink:
    """A URL refused a URL-Id (invalid, out of scope, a spider trap), kept so none vanishes.

    ``referrer`` is the URL-Id of the page the link was found in (None for seeds);
    ``at`` the simulated time of the refusal.
    """

    url: str
    reason: str
    referrer: int | None = None
    at: float | None = None
