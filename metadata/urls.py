"""URL canonicalisation for Map-Data (paper §4): one spelling per page, so one URL-Id per page.

The normalisation itself is yarl's (RFC 3986 §6.2.2): scheme and host lower-cased, IDN hosts
to punycode, default ports dropped, dot segments resolved, percent-encoding normalised
(unreserved characters decoded, hex digits upper-cased, unsafe characters encoded). We chose
yarl over ``w3lib.url.canonicalize_url`` because w3lib sorts the query arguments and rewrites
``%20`` as ``+``, and a server is free to give ``?b=2&a=1`` a different meaning from
``?a=1&b=2``: the query is kept in the order the page wrote it. What is ours is the
policy of what may get a URL-Id at all (``http``/``https`` with a well-formed host, at most
:data:`MAX_URL_LENGTH` characters), two small choices (the fragment is dropped: it never
reaches the server; an empty path becomes ``/``: the same request line), and what the WHATWG
URL Standard (https://url.spec.whatwg.org/) does before yarl sees the text, so a URL is
spelled as a browser would request it: leading and trailing C0 controls and spaces are
stripped, tabs and newlines removed, ``\\`` before the query read as ``/``, a space in the
query written ``%20`` (yarl would write ``+``, which servers read as another character), and
a non-ASCII query encoded in the page's encoding (``query_encoding``), an unencodable
character as ``%26%23NNNN%3B``. Paths are always UTF-8 and hosts go through IDNA (yarl).
One query is dropped: Apache's folder listing (``mod_autoindex``) links itself re-sorted,
``dir/?C=M;O=A``, eight ways; the same entries in another order are the same page, so a
folder URL whose query only sorts or formats its listing is the listing's own URL
(docs/crawler.md, "Folder listings").
Each step's output is a fixed point of every step, so canonicalising twice changes nothing.
"""

from __future__ import annotations

import codecs
import functools
import re
from urllib.parse import quote_from_bytes

from yarl import URL

from metadata.errors import InvalidURL, URLTooLong

MAX_URL_LENGTH = 2048
"""Longest canonical URL given a URL-Id: longer ones are almost always session or trap URLs."""

URL_TOO_LONG = f"longer than {MAX_URL_LENGTH} characters"
"""The reason of :class:`URLTooLong`."""

ALLOWED_SCHEMES = frozenset({"http", "https"})
_HOST_FORBIDDEN = frozenset(' \t\r\n%<>"{}|\\^`')
_CANONICAL_CACHE = 8192  # URLs: pages of a site link to the same few (a loader batch: 5x)
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
# The URL Standard's special-query percent-encode set is C0, space, ", #, <, > and ':
# everything else printable stays as written (``%`` too: escapes are kept).
_QUERY_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "\"#<>'")
_LISTING_ARGUMENT = r"(?:C=[NMSD]|O=[AD]|F=[012]|V=[01])"
_LISTING_SORT = re.compile(rf"{_LISTING_ARGUMENT}(?:[;&]{_LISTING_ARGUMENT})*")
"""mod_autoindex's column (``C``), order (``O``), format (``F``) and version-sort (``V``)
arguments, ``;`` or ``&`` between them; a pattern (``P=``) filters entries, so it stays."""


def _charref_in_url(error: UnicodeError) -> tuple[str, int]:
    """A character the query's encoding lacks, as the URL Standard writes it: ``&#N;``
    percent-encoded."""
    assert isinstance(error, UnicodeEncodeError)
    chars = error.object[error.start : error.end]
    return "".join(f"%26%23{ord(char)}%3B" for char in chars), error.end


codecs.register_error("xyleme-url-charref", _charref_in_url)


@functools.lru_cache(maxsize=_CANONICAL_CACHE)
def canonicalize_url(url: str, query_encoding: str = "utf-8") -> str:
    """The canonical spelling of ``url``, or :class:`InvalidURL` saying why it has none.

    Parameters
    ----------
    url : str
        An absolute URL as found in a page or a seed list (surrounding white space ignored).
    query_encoding : str
        The Python codec of the page the URL was found in: a non-ASCII query is encoded
        with it (the URL Standard's rule; paths are always UTF-8). UTF-8 by default.

    Returns
    -------
    str
        The canonical URL: the key of Map-Data.

    Raises
    ------
    InvalidURL
        No host, a scheme other than http/https, a malformed host or port, or longer than
        :data:`MAX_URL_LENGTH` characters (:class:`URLTooLong`, carrying the canonical form
        all the same); ``reason`` says which.

    Examples
    --------
    >>> canonicalize_url("HTTP://Example.COM:80/a/./b/../c?b=2&a=1#top")
    'http://example.com/a/c?b=2&a=1'
    >>> canonicalize_url("https://bücher.example/%7euser")
    'https://xn--bcher-kva.example/~user'
    >>> canonicalize_url("http://a.example/päge?q=ä b€", "cp1252")
    'http://a.example/p%C3%A4ge?q=%E4%20b%80'
    >>> canonicalize_url("http://a.example/doc/?C=M;O=A")  # a listing re-sorted: the listing
    'http://a.example/doc/'
    """
    text = _as_browsers_read(url, query_encoding)
    if len(text) > 4 * MAX_URL_LENGTH:
        raise _too_long(url, text)  # not worth parsing: no normalisation shortens it enough
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
    if parsed.raw_path.endswith("/") and _LISTING_SORT.fullmatch(parsed.raw_query_string):
        parsed = parsed.with_query(None)
    if parsed.raw_path in ("", "/"):
        parsed = parsed.with_path("/", encoded=True, keep_query=True)
    canonical = str(parsed)
    if len(canonical) > MAX_URL_LENGTH:
        raise URLTooLong(url, URL_TOO_LONG, canonical)
    return canonical


def _too_long(url: str, text: str) -> InvalidURL:
    """The error of a URL far over the limit: its origin canonical, the rest as written
    (what a scope judges), or a plain :class:`InvalidURL` when even the origin is bad."""
    scheme, separator, rest = text.partition("://")
    authority, _, tail = rest.partition("/")
    try:
        origin = canonicalize_url(f"{scheme}{separator}{authority}/")
    except InvalidURL:
        return InvalidURL(url, URL_TOO_LONG)
    return URLTooLong(url, URL_TOO_LONG, origin + tail)


def _as_browsers_read(url: str, query_encoding: str) -> str:
    """The URL Standard's preparation of ``url`` (see the module docstring); ASCII stays."""
    text = url.strip(_C0_AND_SPACE)
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.replace("\t", "").replace("\n", "").replace("\r", "")
    text = text.split("#", 1)[0]
    before, question, query = text.partition("?")
    if "\\" in before:
        before = before.replace("\\", "/")
    if not question:
        return before.replace(" ", "%20")
    if not query.isascii():
        codec = query_encoding if query_encoding else "utf-8"
        query = quote_from_bytes(query.encode(codec, "xyleme-url-charref"), safe=_QUERY_SAFE)
    return f"{before.replace(' ', '%20')}?{query.replace(' ', '%20')}"
