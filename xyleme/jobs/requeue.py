"""What the daemon queues again at start: the work a stop or a kill -9 left undone.

Only what was in flight or queued is lost by a kill -9: the database knows every discovered
page, and every read committed before its body reached the loader.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from metadata import PAGE_TYPE_CODE, Metadata, PageType
from xyleme import commands
from xyleme.crawler import Crawler, Level

if TYPE_CHECKING:
    from loader import Loader

log = logging.getLogger(__name__)


def queue_unread(md: Metadata, crawler: Crawler) -> int:
    """Queue the seeds and every known page never read, at the scouting level."""
    view = md.refresh_view()
    unread = view["id"][view["type"] == PAGE_TYPE_CODE[PageType.UNKNOWN]]
    urls = [*commands.stored_seeds(md), *md.urls_of(unread.tolist())]
    queued = sum(crawler.submit(url, Level.SCOUTING) for url in dict.fromkeys(urls))
    if queued:
        log.info("queued %d unread pages", queued)
    return queued


async def queue_not_loaded(md: Metadata, crawler: Crawler, loader: Loader) -> int:
    """Read again the XML pages whose last read the loader never stored (after a kill -9).

    The crawler commits a read before it hands the body to the loader: a crash between the
    two leaves a page whose MD5 is recorded but not in the loader's repository, and its next
    refresh, seeing that MD5 again, would not load it. Such pages (unless parked waiting for
    a DTD) are queued at the refresh level, read unconditionally and handed to the loader
    whatever their MD5.
    """
    read = await asyncio.to_thread(md.content_md5s, PageType.XML)
    url_ids = await crawler.lane.call(not_loaded, loader, read)  # never beside a load
    queued = sum(crawler.submit(url_id, Level.REFRESH, reload=True) for url_id in url_ids)
    if queued:
        log.info("queued %d XML pages read but never loaded (a crash cut them off)", queued)
    return queued


def not_loaded(loader: Loader, read: Mapping[int, str]) -> list[int]:
    """Of documents read (URL-Id -> MD5 of the content read), those the loader has neither
    stored as their latest version nor parked waiting for a dependency."""
    latest = {change.url_id: change.md5 for change in loader.repository.changes()}
    parked = {document.url_id for document in loader.parking}
    return [
        url_id for url_id, md5 in read.items() if latest.get(url_id) != md5 and url_id not in parked
    ]
