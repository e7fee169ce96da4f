"""What the loader reads off a fetched body before parsing it: MD5, type, dependency or not."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from loader.interfaces import Body

_HASH_CHUNK = 1 << 20
_DEPENDENCY_MEDIA_TYPES = frozenset(
    {
        "application/xml-dtd",
        "application/xml-external-parsed-entity",
        "text/xml-external-parsed-entity",
    }
)
_DEPENDENCY_SUFFIXES = (".dtd", ".ent", ".mod")


def md5_of(body: Body) -> str:
    """Hex MD5 of a body held in memory or in a file (read in chunks)."""
    if isinstance(body, bytes):
        return hashlib.md5(body).hexdigest()
    digest = hashlib.md5()
    with open(body, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def path_of(url: str) -> str:
    """The path of an absolute URL (``urlsplit`` costs more; asked for every document).

    >>> path_of("http://a.test/x/b.dtd?v=2#top"), path_of("http://a.dtd")
    ('/x/b.dtd', '')
    """
    rest = url.partition("#")[0].partition("?")[0]
    scheme_end = rest.find("://")
    start = rest.find("/", scheme_end + 3) if scheme_end != -1 else 0
    return "" if start == -1 else rest[start:]


def content_type_of(headers: Mapping[str, str]) -> str | None:
    """The Content-Type header, whatever the case of its name."""
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value
    return None


def is_dependency_type(url: str, content_type: str | None) -> bool:
    """A DTD or entity by its server's media type, or by its path's suffix."""
    media_type = (content_type or "").partition(";")[0].strip().lower()
    if media_type in _DEPENDENCY_MEDIA_TYPES:
        return True
    return path_of(url).lower().endswith(_DEPENDENCY_SUFFIXES)
