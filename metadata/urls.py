"""URL canonicalisation for Map-Data (paper §4): one spelling per page, so one URL-Id per page.

The normalisation itself is yarl's (RFC 3986 §6.2.2): scheme and host lower-cased, IDN hosts
to punycode, default ports dropped, dot segments resolved, percent-encoding normalised
(unreserved characters decoded, hex digits upper-cased, unsafe characters encoded). We chose
yarl over ``w3lib.url.canonicalize_url`` because w3lib sorts the query arguments and rewrites
``%20`` as ``+``, and a server is free to give ``?b=2&a=1`` a different meaning from
``?a=1&b=2``: the query is kept in the order the page wrote it. What is ours is only the
policy of what may get a URL-Id at all (``http``/``https`` with a well-formed host, at most
:data:`MAX_URL_LENGTH` characters) and two small choices: the fragment is dropped (it never
reaches the server) and an empty path becomes ``/`` (the same request line).
"""

from __future__ import annotations

import functools

from yarl import URL

from metadata.errors import InvalidURL

MAX_URL_LENGTH = 2048
"""Longest canonical URL given a URL-Id: longer ones are almost always session or trap URLs."""

ALLOWED_SCHEMES = frozenset({"http", "https"})
_HOST_FORBIDDEN = frozenset(' \t\r\n%<>"{}|\\^`')
_CANONICAL_CACHE = 8192  # URLs: pages of a site link to the same few (a loader batch: 5x)


@functools.lru_cache(maxsize=_CANONICAL_CACHE)
def canonicalize_url(url: str) -> str:
    """The canonical spelling of ``url``, or :class:`InvalidURL` saying why it has none.

    Parameters
    ----------
    url : str
        An absolute URL as found in a page or a seed list (surrounding white space ignored).

    Returns
    -------
    str
        The canonical URL: the key of Map-Data.

    Raises
    ------
    InvalidURL
        No host, a scheme other than http/https, a malformed host or port, or longer than
        :data:`MAX_URL_LENGTH` characters; ``reason`` says which.

    Examples
    --------
    >>> canonicalize_url("HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top")
    'http://example.com/a/c?b=2&a=1'
    >>> canonicalize_url("https://bücher.example/%7euser")
    'https://xn--bcher-kva.example/~user'
    """
    text = url.strip()
    if len(text) > 4 * MAX_URL_LENGTH:
        # Not worth parsing: no normalisation shortens it enough.
        raise InvalidURL(url, f"longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = URL(text)
    except (ValueError, TypeError) as error:
        raise InvalidURL(url, f"malformed: {error}") from None
    scheme = parsed.scheme
    if scheme not in ALLOWED_SCHEMES:
        raise InvalidURL(url, f"scheme {scheme!r} is not http or https" if scheme else "no scheme")
    host = parsed.raw_host
    if not host:
        raise InvalidURL(url, "no host")
    if _HOST_FORBIDDEN.intersection(host):
        raise InvalidURL(url, f"malformed host {host!r}")
    if parsed.explicit_port == 0:
        raise InvalidURL(url, "port 0")
    parsed = parsed.with_fragment(None)
    if parsed.raw_path in ("", "/"):
        parsed = parsed.with_path("/", encoded=True, keep_query=True)
    canonical = str(parsed)
    if len(canonical) > MAX_URL_LENGTH:
        raise InvalidURL(url, f"longer than {MAX_URL_LENGTH} characters")
    return canonical
