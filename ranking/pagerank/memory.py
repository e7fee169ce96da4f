"""The memory budget: parsing it, and placing vectors in RAM or on disk to respect it.

The budget bounds the *anonymous* resident set (the process's own heap: slices, in-RAM
vectors, temporaries). Vectors too big for it live in memory-mapped files, whose pages
belong to the page cache and the disk, as §5.3 keeps destPR and sourcePR on disk.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str | int) -> int:
    """Bytes in a size such as ``256MB``, ``1.5G``, ``64m`` or a plain integer (binary units).

    Examples
    --------
    >>> parse_size("256MB"), parse_size("1k"), parse_size(42)
    (268435456, 1024, 42)
    """
    if isinstance(text, int):
        size = text
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text.upper())
        if match is None:
            raise ValueError(f"not a memory size: {text!r} (say e.g. 256MB or 2G)")
        size = int(float(match[1]) * _UNITS[match[2]])
    if size <= 0:
        raise ValueError(f"a memory size must be positive, not {text!r}")
    return size


def allocate(
    shape: int, dtype: np.dtype | type, *, on_disk: Path | None, fill: float = 0
) -> np.ndarray:
    """A vector of ``shape`` elements, in RAM, or memory-mapped at ``on_disk`` when given.

    A mapped vector is returned as a plain ndarray view of the mapping (the compiled kernels
    take ndarrays, not ``np.memmap``); the mapping is shared, so its file is always current.
    """
    if on_disk is None:
        return np.full(shape, fill, dtype=dtype)
    on_disk.unlink(missing_ok=True)  # a fresh file: earlier results may still map the old one
    vector = np.lib.format.open_memmap(on_disk, mode="w+", dtype=dtype, shape=(shape,))
    if fill:
        vector[:] = fill
    return np.asarray(vector)


def anon_rss_bytes() -> tuple[int, int]:
    """(current, peak) anonymous resident set of this process, from /proc/self/status.

    Linux reports the peak only for the whole RSS (VmHWM); the anonymous peak is what a
    sampler of ``RssAnon`` sees, so callers wanting it sample :func:`anon_rss_bytes`.
    Returns (RssAnon, VmHWM).
    """
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields["RssAnon"], fields["VmHWM"]
