"""The archive (issue 17): every HTTP exchange in WARC 1.1 files and every fetch in the
crawl log, written off the event loop; ``xyleme export warc|documents`` reads them back.

See docs/archive.md. The writer (:class:`xyleme.archive.writer.Archive`) and warcio are
imported by those who write, not by the crawler, which only needs the protocol.
"""

from xyleme.archive.exchange import Exchange, ExchangeSink, Fetch
from xyleme.archive.settings import ArchiveSettings

__all__ = ["ArchiveSettings", "Exchange", "ExchangeSink", "Fetch"]
