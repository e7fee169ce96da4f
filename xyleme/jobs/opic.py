"""The OPIC job: OPIC restored from the store, and fed by the crawler's events
(docs/interfaces.md, "Named events").

A fetch result does not always carry the page's links: a 304 or a document whose links the
loader extracts later leaves ``children`` unset. OPIC must still credit the read and hand the
page's cash on (§2), so the listener falls back on the links stored for the page — those of
its last version, possibly none yet for a new XML document, whose cash then goes to the
virtual page. A failed or dead fetch hands all its cash to the virtual page, so unreachable
pages do not hoard cash; a redirect passes it to its target.

Focused crawling (OPIC paper §3.3: "we may use this strategy to focus our crawling on XML
pages"): a child OPIC meets for the first time whose URL suggests XML
(:func:`ranking.opic.suspect_xml`; the link's context does not outlive the crawler's parse)
gets ``OPICSettings.xml_weight`` as its weight in the
virtual page's payments, so it collects more cash and Greedy reads it sooner. The weight is
given once, when the page becomes known (OPIC's checkpoint keeps it); with the default weight
1 no URL is even looked up.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from metadata import FetchResult, Metadata, PageType
from ranking.opic import OPIC, OPICSettings, suspect_xml
from xyleme import signals

CREDITED = (signals.page_fetched, signals.page_failed, signals.page_dead)
"""The events OPIC is credited on: every committed fetch, failures included."""


class LinkSource(Protocol):
    """Where the stored children of a page and the URLs of new pages come from
    (``metadata.Metadata`` is one)."""

    def children(self, url_id: int) -> np.ndarray: ...

    def urls_of(self, ids: list[int]) -> list[str]: ...


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
        self,
        opic: OPIC,
        links: LinkSource,
        events: signals.SignalManager | None = None,
        *,
        xml_weight: float = 1.0,
    ) -> None:
        if not xml_weight > 0:
            raise ValueError(f"xml_weight must be positive, got {xml_weight!r}")
        self.opic = opic
        self.links = links
        self.xml_weight = xml_weight
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

    def focus(self, children: np.ndarray) -> dict[int, float]:
        """The weights of the children OPIC does not know yet whose URL suggests XML."""
        if self.xml_weight == 1.0:
            return {}
        new = sorted({int(child) for child in children if not self.opic.is_known(int(child))})
        if not new:
            return {}
        urls = self.links.urls_of(new)
        return {
            child: self.xml_weight for child, url in zip(new, urls, strict=True) if suspect_xml(url)
        }

    def __call__(self, result: FetchResult) -> None:
        children = self.children_of(result)
        self.opic.on_fetch(result.url_id, children, weights=self.focus(children) or None)
