"""The OPIC job: OPIC restored from the store, and fed by the crawler's events
(docs/interfaces.md, "Named events").

A fetch result does not always carry the page's links: a 304 or a document whose links the
loader extracts later leaves ``children`` unset. OPIC must still credit the read and hand the
page's cash on (§2), so the listener falls back on the links stored for the page — those of
its last version, possibly none yet for a new XML document, whose cash then goes to the
virtual page. A failed or dead fetch hands all its cash to the virtual page, so unreachable
pages do not hoard cash; a redirect passes it to its target.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from metadata import FetchResult, Metadata, PageType
from ranking.opic import OPIC, OPICSettings
from xyleme import signals

CREDITED = (signals.page_fetched, signals.page_failed, signals.page_dead)
"""The events OPIC is credited on: every committed fetch, failures included."""


class LinkSource(Protocol):
    """Where the stored children of a page come from (``metadata.Metadata`` is one)."""

    def children(self, url_id: int) -> np.ndarray: ...


def restore_opic(md: Metadata, settings: OPICSettings) -> OPIC:
    """OPIC from the last checkpoint (or new), knowing every page the metadata knows."""
    opic = OPIC.restore(md, settings.checkpoint_key) or settings.build()
    known = md.max_url_id()
    if known:
        opic.add_pages(np.arange(1, known + 1))  # ids start at 1; known ones are kept
    return opic


class FetchListener:
    """Credit each committed fetch to OPIC; given the crawler's ``events`` it listens to the
    :data:`CREDITED` signals itself.

    Examples
    --------
    >>> class NoLinks:
    ...     def children(self, url_id):
    ...         return np.zeros(0, dtype=np.int32)
    >>> opic = OPIC(pages=3)
    >>> listener = FetchListener(opic, NoLinks())
    >>> listener(FetchResult(url_id=0, fetched_at=0.0, page_type=PageType.HTML, children=[2]))
    >>> int(opic.reads()[0])
    1
    """

    def __init__(
        self, opic: OPIC, links: LinkSource, events: signals.SignalManager | None = None
    ) -> None:
        self.opic = opic
        self.links = links
        for signal in CREDITED if events is not None else ():
            events.connect(signal, lambda event: self(event.result))

    def children_of(self, result: FetchResult) -> np.ndarray:
        """The links OPIC hands the page's cash to, for this fetch."""
        if result.page_type in (PageType.ERROR, PageType.DEAD):
            return np.zeros(0, dtype=np.int64)
        if result.children is not None:
            return np.asarray(result.children, dtype=np.int64)
        if result.redirect_to is not None:
            return np.array([result.redirect_to], dtype=np.int64)
        return np.asarray(self.links.children(result.url_id), dtype=np.int64)

    def __call__(self, result: FetchResult) -> None:
        self.opic.on_fetch(result.url_id, self.children_of(result))
