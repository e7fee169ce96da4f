"""Which links of a document become its children: those the crawl admits.

A link the loader finds in XML (DocBook ``ulink``, Mallard ``href``, DITA
``scope="external"``…) passes the same admission as an HTML link in the crawler: scope,
spider-trap guards, deny list (issue 16). A refused link gets no URL-Id and no place in
Link-Data, so it never enters the link matrix as an unread page nor reaches the crawler's
queue: it is recorded as a rejected link with its reason, the document as its referrer.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from loader.interfaces import MetadataPort
from metadata import InvalidURL, URLTooLong, canonicalize_url

Refusals = defaultdict[tuple[str, int], list[str]]
"""Refused URLs by (reason, referrer URL-Id), waiting to be recorded."""

_RECORDED_KEPT = 1 << 16
"""Refused URLs remembered as recorded (a link repeated on every page is recorded once)."""


class LinkAdmission:
    """Splits canonical links into admitted ones and refusals, and records the refusals.

    ``refusal(url)`` says why a canonical URL is not to be crawled (None: admitted); the
    daemon passes the crawler's. Without one every link is admitted. The entries of a
    sitemap index (:attr:`sitemaps`, canonical, until the batch is flushed) are asked with
    ``refusal(url, sitemap=True)``: a sitemap the site names is no link to media, whatever
    its suffix (``sitemap.xml.gz``).
    """

    def __init__(self, refusal: Callable[..., str | None] | None = None) -> None:
        self.refusal = refusal
        self.sitemaps: set[str] = set()
        self._recorded: set[str] = set()

    def admitted(self, urls: Iterable[str], referrer: int, refused: Refusals) -> list[str]:
        """The admitted URLs, in order; each refusal not yet recorded is added to
        ``refused`` for :meth:`record`."""
        if self.refusal is None:
            return list(urls)
        kept = []
        for url in urls:
            reason = self.refusal(url, sitemap=True) if url in self.sitemaps else self.refusal(url)
            if reason is None:
                kept.append(url)
            elif url not in self._recorded:
                if len(self._recorded) >= _RECORDED_KEPT:
                    self._recorded.clear()
                self._recorded.add(url)
                refused[reason, referrer].append(url)
        return kept

    def judged(self, invalid: Iterable[str], referrer: int, refused: Refusals) -> list[str]:
        """The URLs of ``invalid`` (no canonical form) left once those refused only for their
        length are judged as links: one the crawl refuses anyway (out of scope, a trap) is
        added to ``refused`` with that reason, since a link's scope comes before the length
        a URL-Id allows. The others are the metadata manager's to record as invalid."""
        if self.refusal is None:
            return list(invalid)
        left = []
        for url in invalid:
            try:
                canonicalize_url(url)
            except URLTooLong as error:
                reason = self.refusal(error.canonical)
                if reason is not None:
                    refused[reason, referrer].append(error.canonical)
                    continue
            except InvalidURL:
                pass
            left.append(url)
        return left

    @staticmethod
    def record(metadata: MetadataPort, refused: Refusals) -> None:
        """Keep the refusals in the metadata's rejected links."""
        for (reason, referrer), urls in refused.items():
            metadata.reject(urls, reason, referrer)
