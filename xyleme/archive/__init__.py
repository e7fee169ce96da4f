"""The archive (issue 17): every HTTP exchange in WARC 1.1 files and every fetch in the
crawl log, written off the event loop; ``xyleme export warc|documents`` reads them back.

See docs/archive.md. The crawler needs only the protocol (:class:`ExchangeSink`); the daemon
and ``xyleme crawl`` build the writer (:class:`Archive`); the CLI's exports read back.
:class:`Archive` and the document exports are read lazily. The writer runs as
``python -m xyleme.archive.child``, which imports this package first: the exports would cost
that child the loader's and the store's imports (0.4 s of CPU at every daemon start, while the
crawl begins), and a child module imported by its package's ``__init__`` before it runs as
``__main__`` makes Python warn on the child's stderr.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from xyleme.archive.exchange import Exchange, ExchangeSink, Fetch
from xyleme.archive.export_warc import RecordFilter, export_warc
from xyleme.archive.settings import ArchiveSettings
from xyleme.archive.warcfiles import OPEN_SUFFIX, WARC_SUFFIX

if TYPE_CHECKING:
    from xyleme.archive.export_documents import write_folder, write_jsonl
    from xyleme.archive.writer import Archive

_LAZY = {
    "Archive": "xyleme.archive.writer",
    "write_folder": "xyleme.archive.export_documents",
    "write_jsonl": "xyleme.archive.export_documents",
}

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
    """The names of :data:`_LAZY`, imported on first use (see the module's docstring)."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
