"""The archive (issue 17): every HTTP exchange in WARC 1.1 files and every fetch in the
crawl log, written off the event loop; ``xyleme export warc|documents`` reads them back.

See docs/archive.md. The crawler needs only the protocol (:class:`ExchangeSink`); the daemon
and ``xyleme crawl`` build the writer (:class:`Archive`); the CLI's exports read back.
:class:`Archive` is read lazily: its module imports the writer child's, which the writer runs
as ``python -m xyleme.archive.child``, and a child module imported by its package's
``__init__`` before it runs as ``__main__`` makes Python warn on the child's stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xyleme.archive.exchange import Exchange, ExchangeSink, Fetch
from xyleme.archive.export_documents import write_folder, write_jsonl
from xyleme.archive.export_warc import RecordFilter, export_warc
from xyleme.archive.settings import ArchiveSettings
from xyleme.archive.warcfiles import OPEN_SUFFIX, WARC_SUFFIX

if TYPE_CHECKING:
    from xyleme.archive.writer import Archive

__all__ = [
    "OPEN_SUFFIX",
    "WARC_SUFFIX",
    "Archive",
    "ArchiveSettings",
    "Exchange",
    "ExchangeSink",
    "Fetch",
    "RecordFilter",
    "export_warc",
    "write_folder",
    "write_jsonl",
]


def __getattr__(name: str) -> Any:
    """:class:`Archive`, imported on first use (see the module's docstring)."""
    if name == "Archive":
        from xyleme.archive.writer import Archive

        return Archive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
