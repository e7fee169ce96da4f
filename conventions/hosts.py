"""The host key: which host a URL belongs to, for every package (one definition).

A host is ``scheme://host[:port]``: the crawler's politeness and robots.txt key (RFC 9309
§2.3: robots.txt rules hold per scheme, host and port), the hosts of ``xyleme hosts``, the
(type, host) groups of the refresh estimators and LiveRank's host partition. It lives at the
bottom of the import graph so the pure algorithms (``refresh``, ``ranking``) use it without
importing the crawler or the store. ``metadata.reports.HOST_SQL`` is the same rule in SQL.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    keys = np.array([host_key(url) for url in urls], dtype=str)
    return np.unique(keys, return_inverse=True)[1].ravel().astype(np.int64)
