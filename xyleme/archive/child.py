"""The archive's writer process: ``python -m xyleme.archive.child FOLDER SETTINGS INFO``.

A process, not a thread, because building records is Python work that holds the GIL: in a
thread it made the event loop wait for the GIL at every switch (bench_daemon measured the
crawl at 57 % of its speed), in a process it runs beside it. It reads frames from stdin (an
8-byte length, then a pickled item; an empty frame asks it to stop), writes each item, and
after each batch flushes and writes the batch's size to stdout as a line: the parent frees
that many queue places. It is the only writer of its folder.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import select
import signal
import struct
import sys
from pathlib import Path

from xyleme.archive.settings import ArchiveSettings

FRAME = struct.Struct(">Q")
BATCH = 64  # items written between two flushes and acknowledgements

log = logging.getLogger("xyleme.archive")


def _read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from a file descriptor (unbuffered: ``select`` then tells the truth);
    None if the stream ends first."""
    pieces, left = [], size
    while left:
        piece = os.read(fd, min(left, 1 << 20))
        if not piece:
            return None
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def read_frame(fd: int) -> bytes | None:
    """The next frame's payload; None at the end of the stream."""
    header = _read_exact(fd, FRAME.size)
    if header is None:
        return None
    size = FRAME.unpack(header)[0]
    return _read_exact(fd, size) if size else b""


def _ready(fd: int) -> bool:
    """Whether more input is waiting (so the batch goes on before a flush)."""
    return bool(select.select([fd], [], [], 0)[0])


def main(folder: Path, settings: ArchiveSettings, info: dict[str, str]) -> None:
    from xyleme.archive.files import ArchiveFiles, discard  # warcio, after the arguments

    source, acks = sys.stdin.fileno(), sys.stdout
    try:
        files = ArchiveFiles(folder, settings, info)
    except Exception:
        log.exception("archive: cannot open %s: nothing will be archived", folder)
        files = None
    stopping = False
    while not stopping:
        count = 0
        while count < BATCH:
            frame = read_frame(source)
            if not frame:  # the end, or the parent's stop
                stopping = True
                break
            item = pickle.loads(frame)
            if files is None:
                discard(item)
            else:
                files.write(item)
            count += 1
            if not _ready(source):
                break
        try:
            if files is not None:
                files.flush(closing=stopping)
        except Exception:
            log.exception("archive: could not flush %s", folder)
        if count:
            acks.write(f"{count}\n")
            acks.flush()


if __name__ == "__main__":
    # Ctrl-C or a SIGTERM to the whole group is the daemon's to handle: it stops cleanly
    # and then closes our input, the one way we stop (after writing what was queued).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    main(Path(sys.argv[1]), ArchiveSettings(**json.loads(sys.argv[2])), json.loads(sys.argv[3]))
