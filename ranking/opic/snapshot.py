"""OPIC's checkpoint format: the whole state as one ``.npz`` archive of bytes.

A header (JSON: format version, scalars, the window policies and their parameters) and the
per-page arrays of OPIC and of each window (``window<k>.<name>``). :func:`unpack` refuses
anything else with :class:`~ranking.opic.errors.CorruptSnapshot`, so a damaged checkpoint
is reported, never half-loaded.
"""

from __future__ import annotations

import io
import json
from typing import Protocol

import numpy as np

from ranking.opic.errors import CorruptSnapshot
from ranking.opic.windows import WINDOW_KINDS, HistoryWindow

SNAPSHOT_VERSION = 1


class StateStore(Protocol):
    """The part of the metadata manager OPIC checkpoints through (docs/interfaces.md)."""

    def put_state(self, key: str, value: bytes) -> None: ...

    def get_state(self, key: str) -> bytes | None: ...

    def set_scores(self, column: str, ids: np.ndarray, values: np.ndarray) -> None: ...


def pack(header: dict[str, object], arrays: dict[str, np.ndarray]) -> bytes:
    """The archive of ``header`` (stamped with the format version) and ``arrays``."""
    buffer = io.BytesIO()
    stamped = {"version": SNAPSHOT_VERSION, **header}
    np.savez(buffer, header=np.array(json.dumps(stamped)), **arrays)
    return buffer.getvalue()


def unpack(data: bytes) -> tuple[dict, dict[str, np.ndarray], list[HistoryWindow]]:
    """(header, arrays, the window policies rebuilt empty) of an archive :func:`pack` made."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            header = json.loads(str(archive["header"]))
            arrays = {name: archive[name] for name in archive.files if name != "header"}
        if header.get("version") != SNAPSHOT_VERSION:
            raise CorruptSnapshot(f"unsupported OPIC snapshot version {header.get('version')}")
        windows = [WINDOW_KINDS[spec["kind"]](**spec["params"]) for spec in header["windows"]]
    except CorruptSnapshot:
        raise
    except Exception as error:
        raise CorruptSnapshot(f"not an OPIC snapshot: {error}") from error
    return header, arrays, windows
