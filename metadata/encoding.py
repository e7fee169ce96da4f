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
    has one edge: the paper's children are a set.
    """
    if isinstance(ids, np.ndarray):
        values = ids.astype(np.int64, copy=False).ravel()
        _, first = np.unique(values, return_index=True)
        distinct = values[np.sort(first)]
        _check_ids(distinct.min() if distinct.size else 1, distinct.max() if distinct.size else 1)
        kept = distinct[:limit].astype(LINK_DTYPE)
        return kept.tobytes(), max(0, distinct.size - limit)
    distinct_list = list(dict.fromkeys(ids))
    if distinct_list:
        _check_ids(min(distinct_list), max(distinct_list))
    packed = array("i", distinct_list[:limit])
    if sys.byteorder == "big":  # pragma: no cover - the blobs are little-endian everywhere
        packed.byteswap()
    return packed.tobytes(), max(0, len(distinct_list) - limit)


def _check_ids(smallest: int, largest: int) -> None:
    if smallest < 1 or largest > np.iinfo(LINK_DTYPE).max:
        raise ValueError(f"URL-Ids run from 1 to 2**31 - 1, got {smallest}..{largest}")


def decode_ids(blob: bytes | None) -> np.ndarray:
    """The int32 array a blob of :func:`encode_ids` holds (empty for None)."""
    if not blob:
        return np.empty(0, dtype=np.int32)
    return np.frombuffer(blob, dtype=LINK_DTYPE).astype(np.int32)


def encode_observation(observation: Observation) -> bytes:
    """24 bytes: when, changed (NaN for unknown, 0 or 1), Last-Modified (NaN if none)."""
    changed = math.nan if observation.changed is None else float(observation.changed)
    seen = math.nan if observation.last_modified is None else observation.last_modified
    return _OBSERVATION.pack(observation.at, changed, seen)


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
