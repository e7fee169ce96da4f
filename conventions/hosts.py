"""The host key: which host a URL belongs to, for every package (one definition).

A host is ``scheme://host[:port]``: the crawler's politeness and robots.txt key (RFC 9309
§2.3: robots.txt rules hold per scheme, host and port), the hosts of ``xyleme hosts``, the
(type, host) groups of the refresh estimators and LiveRank's host partition. It lives at the
bottom of the import graph so the pure algorithms (``refresh``, ``ranking``) use it without
importing the crawler or the store. ``metadata.reports.HOST_SQL`` is the same rule in SQL.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def host_key(url: str) -> str:
    """The host key of a canonical URL: ``scheme://host[:port]``.

    Plain string slicing (canonical URLs always have a path): it runs for every link.

    >>> host_key("http://a.example:8080/x?y")
    'http://a.example:8080'
    """
    end = url.find("/", url.find("//") + 2)
    return url if end < 0 else url[:end]


def host_keys(urls: Sequence[str]) -> np.ndarray:
    """An integer per URL naming its host (:func:`host_key`), numbered in host order.

    >>> host_keys(["http://b.test/", "http://a.test/x", "http://b.test/y", "https://b.test/"])
    array([1, 0, 1, 2])
    """
    import numpy as np  # here: the bottom package stays light for the CLI's quick readers

    keys = np.array([host_key(url) for url in urls], dtype=str)
    return np.unique(keys, return_inverse=True)[1].ravel().astype(np.int64)


_HASH_BYTES = 7  # 56 bits: a non-negative BIGINT and an exact float on every engine


def host_hash(url: str) -> int:
    """The stable hash of a URL's host key (``scheme://host[:port]``): the same on every
    machine and every Python (BLAKE2b, not ``hash()``, which is salted per process).

    >>> host_hash("http://a.test/x") == host_hash("http://a.test/y")
    True
    >>> 0 <= host_hash("https://b.test:8443/") < 2**56
    True
    """
    return _hash_of_host(host_key(url))


@functools.lru_cache(maxsize=1 << 16)
def _hash_of_host(key: str) -> int:
    """Memoised: a batch of new URLs names few hosts (id assignment runs it per URL)."""
    digest = hashlib.blake2b(key.encode(), digest_size=_HASH_BYTES).digest()
    return int.from_bytes(digest, "big")


def part_of(url: str, parts: int) -> int:
    """Which of ``parts`` workers owns a URL's host (0-based)."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    return host_hash(url) % parts
