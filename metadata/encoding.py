"""The compact byte forms of per-page lists: children (int32) and observations (float64).

Both are stored as BLOBs so that bulk readers (the link export, the estimators) turn many
pages into numpy arrays by concatenating bytes, with no Python object per edge or access.
"""

from __future__ import annotations

import math
import struct
import sys
from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from metadata.types import Observation

MAX_CHILDREN = 65_534
"""Children stored per page (paper §4, footnote 3); further links are only counted."""

LINK_DTYPE = np.dtype("<i4")
_OBSERVATION = struct.Struct("<3d")
OBSERVATION_BYTES = _OBSERVATION.size


def encode_ids(ids: Iterable[int] | np.ndarray, limit: int = MAX_CHILDREN) -> tuple[bytes, int]:
    """``(blob, extra)``: the distinct ids in first-seen order, at most ``limit`` of them.

    ``extra`` is how many distinct ids did not fit. A page linking twice to the same child
    has one edge: the paper's children are a set. Ids outside 1 .. 2**31 - 1 raise
    ValueError. This runs once per fetched page, so the list path stays lean.
    """
    if isinstance(ids, np.ndarray):
        ids = ids.ravel().tolist()
    distinct = list(dict.fromkeys(ids))
    try:
        packed = array("i", distinct[:limit])
    except OverflowError:
        packed = None
    if packed is None or (distinct and min(distinct) < 1):
        raise ValueError(f"URL-Ids run from 1 to 2**31 - 1, got {min(distinct)}..{max(distinct)}")
    if sys.byteorder == "big":  # pragma: no cover - the blobs are little-endian everywhere
        packed.byteswap()
    return packed.tobytes(), max(0, len(distinct) - limit)


def decode_ids(blob: bytes | None) -> np.ndarray:
    """The int32 array a blob of :func:`encode_ids` holds (empty for None)."""
    if not blob:
        return np.empty(0, dtype=np.int32)
    return np.frombuffer(blob, dtype=LINK_DTYPE).astype(np.int32)


def encode_observation(at: float, changed: bool | None, last_modified: float | None) -> bytes:
    """24 bytes: when, changed (NaN for unknown, 0 or 1), Last-Modified (NaN if none)."""
    return _OBSERVATION.pack(
        at,
        math.nan if changed is None else changed,
        math.nan if last_modified is None else last_modified,
    )


def decode_observations(blob: bytes | None) -> list[Observation]:
    """The observations of a history blob, oldest first."""
    if not blob:
        return []
    return [
        Observation(
            at,
            None if math.isnan(changed) else bool(changed),
            None if math.isnan(seen) else seen,
        )
        for at, changed, seen in _OBSERVATION.iter_unpack(blob)
    ]


def history_arrays(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, table)`` for many history blobs: page k's rows are
    ``table[offsets[k]:offsets[k + 1]]``, columns at, changed, last_modified."""
    counts = np.fromiter((len(blob) for blob in blobs), dtype=np.int64, count=len(blobs))
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum(counts // OBSERVATION_BYTES, out=offsets[1:])
    table = np.frombuffer(b"".join(blobs), dtype="<f8").reshape(-1, 3)
    return offsets, table
