"""Documents waiting for their DTD, entities or schema (the body side of Status-Data).

The metadata manager records *that* a document waits and on which URL-Ids
(``set_status(..., waiting_for=...)``, ``waiting_on(dependency)``); the parking lot keeps the
body itself under ``DIR/documents/pending/`` until the loader can finish it, across restarts.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from loader.dependencies import write_atomically


@dataclass(frozen=True, slots=True)
class ParkedDocument:
    """A document waiting for dependencies, and what it needs to be loaded later."""

    url_id: int
    url: str
    body_path: Path
    content_type: str | None
    fetched_at: float
    parked_at: float
    waiting_for: tuple[str, ...]
    requested: tuple[str, ...]
    md5: str | None = None  # the body's, as fetched (None: parked by an older xyleme)


class ParkingLot:
    """Parked bodies and their loading context, one pair of files per URL-Id.

    The URL-Ids parked are also kept in memory (listed from the folder when it is opened),
    so that finishing a document that was never parked, the common case, touches no file.
    Another process parking in the same folder is seen through Status-Data instead: its
    documents have a waiting status (see :meth:`Loader._load_document`).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._parked = {int(info.stem) for info in self.folder.glob("*.json")}

    def __contains__(self, url_id: int) -> bool:
        return url_id in self._parked

    def park(
        self,
        url_id: int,
        url: str,
        body: bytes | Path,
        content_type: str | None,
        fetched_at: float,
        parked_at: float,
        waiting_for: list[str],
        md5: str | None = None,
    ) -> ParkedDocument:
        """Keep a body until ``waiting_for`` arrive; returns what was recorded.

        Parking a document already parked keeps its first ``parked_at`` (the timeout counts
        from the first wait) and remembers every URL already requested of the crawler.
        """
        body_path = self.folder / f"{url_id}.body"
        earlier = self.get(url_id)
        if isinstance(body, bytes):
            write_atomically(body_path, body)
        elif Path(body) != body_path:
            temporary = body_path.with_suffix(".tmp")
            shutil.copyfile(body, temporary)
            temporary.replace(body_path)
        requested = dict.fromkeys(earlier.requested if earlier else ())
        requested.update(dict.fromkeys(waiting_for))
        parked = ParkedDocument(
            url_id,
            url,
            body_path,
            content_type,
            fetched_at,
            earlier.parked_at if earlier else parked_at,
            tuple(waiting_for),
            tuple(requested),
            md5,
        )
        info = {
            "md5": md5,
            "url": url,
            "content_type": content_type,
            "fetched_at": fetched_at,
            "parked_at": parked.parked_at,
            "waiting_for": list(parked.waiting_for),
            "requested": list(parked.requested),
        }
        write_atomically(self.folder / f"{url_id}.json", json.dumps(info).encode())
        self._parked.add(url_id)
        return parked

    def get(self, url_id: int) -> ParkedDocument | None:
        try:
            info = json.loads((self.folder / f"{url_id}.json").read_bytes())
        except FileNotFoundError:
            return None
        return ParkedDocument(
            url_id,
            info["url"],
            self.folder / f"{url_id}.body",
            info["content_type"],
            info["fetched_at"],
            info["parked_at"],
            tuple(info["waiting_for"]),
            tuple(info["requested"]),
            info.get("md5"),
        )

    def remove(self, url_id: int) -> None:
        """Forget a parked document (nothing happens if it was not parked)."""
        self._parked.discard(url_id)
        for suffix in (".json", ".body"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.folder / f"{url_id}{suffix}")

    def __iter__(self) -> Iterator[ParkedDocument]:
        for info in sorted(self.folder.glob("*.json")):
            parked = self.get(int(info.stem))
            if parked is not None:
                yield parked
