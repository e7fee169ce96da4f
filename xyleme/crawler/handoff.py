"""What the crawler hands on, and what it offers: the loader's two small interfaces.

XML documents, DTDs, feeds and sitemaps go to a :class:`DocumentSink` (the loader) after the
fetch is committed; the loader asks for DTDs and external entities through a
:class:`DependencyFetcher`, which the crawler implements by queueing them at level 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class DocumentSink(Protocol):
    """Receives each new or changed XML/DTD body the crawler fetched (the loader).

    ``body_or_path`` is the decoded body; ``fetched_at`` simulated time. It may be a
    coroutine function; the crawler awaits it then. It is not called for a 304 or an
    unchanged MD5: the loader already has that version.
    """

    def load(
        self,
        url_id: int,
        url: str,
        body_or_path: bytes,
        headers: Mapping[str, str],
        fetched_at: float,
    ) -> Any: ...


@runtime_checkable
class DependencyFetcher(Protocol):
    """What the loader needs of the crawler: fetch this DTD or entity now (level 0)."""

    def request(self, url: str, referrer_id: int | None) -> bool: ...
