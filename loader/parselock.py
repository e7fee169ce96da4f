"""One lock around every lxml parse of the process, because libxml2's entity loader is global.

lxml makes a parser's resolvers work by installing its own callback as libxml2's
process-wide external entity loader at the start of each parse (each ``feed`` of a pull
parser too) and putting back the loader it found at the end (lxml's ``parser.pxi``:
``_register_document_loader`` / ``_reset_document_loader``). Two parses in two threads may
interleave so that the first to end puts back libxml2's default loader while the other still
runs: that one's DTD and entity loads then bypass its resolver, and ``no_network`` refuses
them ("failed to load …xhtml-symbol.ent: Attempt to load network entity"; the realistic
site's XHTML pages met it about one crawl in three while the crawler parsed HTML beside the
loader). Parses that hold :data:`PARSE_LOCK` never interleave, so the loader each one puts
back is always the one it found. Every lxml parse made while a loader's resolver-using parse
may run in another thread (the loader's, the crawler's HTML parses, a read-back of a stored
document) holds it; none holds it on an event loop's thread, where waiting for another
thread's parse would stall the loop.

Reentrant: a resolver runs inside a parse, and may parse.
"""

from __future__ import annotations

import threading

PARSE_LOCK = threading.RLock()
"""Held for the length of one lxml parse call (``fromstring``, ``feed``, ``close``…)."""
