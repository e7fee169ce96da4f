"""Named, deterministic random streams: the only source of randomness in the simulated web.

A stream is keyed by the web's seed, a purpose ("links", "changes", …) and integers (a page
id, a version). Keys are hashed with BLAKE2b, never with Python's salted ``hash()``, so two
processes with the same seed draw the same numbers, and a page's change times can be drawn
lazily, page by page, in any order.
"""

from __future__ import annotations

import hashlib
import random
import struct

import numpy as np

_MASK = (1 << 64) - 1


def stream_key(seed: int, purpose: str, *keys: int) -> int:
    """A 128-bit integer naming one stream (stable across processes and platforms)."""
    digest = hashlib.blake2b(
        purpose.encode() + struct.pack(f"<{len(keys) + 1}q", seed, *keys), digest_size=16
    ).digest()
    return int.from_bytes(digest, "little")


class FastStream:
    """A SplitMix64 sequence: much cheaper to start than :class:`random.Random`.

    Rendering draws a couple of dozen small integers per body; starting a Mersenne Twister
    for each would cost more than the drawing. SplitMix64 (Steele, Lea, Flood, OOPSLA 2014)
    is plenty for choosing paragraphs and words.
    """

    __slots__ = ("_state",)

    def __init__(self, key: int) -> None:
        self._state = key & _MASK

    def below(self, n: int) -> int:
        """A uniform-ish integer in ``[0, n)``."""
        self._state = z = (self._state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return (z ^ (z >> 31)) % n

    def uniform(self) -> float:
        """A float in ``[0, 1)`` with 53 random bits."""
        return self.below(1 << 53) / 9007199254740992.0


def fast_stream(seed: int, purpose: str, *keys: int) -> FastStream:
    """A :class:`FastStream` for the per-body draws of the renderer."""
    return FastStream(stream_key(seed, purpose, *keys))


def python_stream(seed: int, purpose: str, *keys: int) -> random.Random:
    """A :class:`random.Random` for small per-page draws (cheap to create, a few µs)."""
    return random.Random(stream_key(seed, purpose, *keys))


def numpy_stream(seed: int, purpose: str) -> np.random.Generator:
    """A numpy generator for the vectorised draws that build the whole web at once."""
    return np.random.default_rng(stream_key(seed, purpose))
