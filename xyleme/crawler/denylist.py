"""URL suffixes the crawler never fetches: binary media only, and the operator's to change.

Paper §3 filters "based on file suffixes such as .jpg or .gif". A suffix is only a hint (the
Content-Type decides what a page is, ARCHITECTURE "What a page is"), so the default list
names only what is never a document of the warehouse whatever the server says: images,
audio, video, archives, fonts, executables and binary office documents. Style sheets and
scripts are not on it: they are resources, found out by their type and recorded as such.
The list is ``CrawlerSettings.denied_suffixes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

_DEFAULT_WORDS = (
    # images (not svg: it is XML)
    "jpg jpeg jpe jfif gif png apng bmp ico cur webp tif tiff psd avif heic heif jxl "
    # binary documents
    "pdf ps eps doc docx xls xlsx ppt pptx odt ods odp odg rtf epub "
    # archives and packages
    "zip gz tgz bz2 tbz xz txz zst 7z rar tar jar war ear apk dmg iso img cab "
    # executables and libraries
    "exe msi bin deb rpm dll so dylib class wasm "
    # audio and video
    "mp3 mp4 m4a m4v ogg oga ogv opus wav flac aac mid midi avi mov wmv wma mkv webm "
    "mpg mpeg flv swf 3gp "
    # fonts
    "woff woff2 ttf otf eot"
)
DEFAULT_DENIED_SUFFIXES: tuple[str, ...] = tuple(_DEFAULT_WORDS.split())
"""The default of ``CrawlerSettings.denied_suffixes``."""

XML_SUFFIXES = frozenset(
    {"xml", "svg", "rss", "atom", "rdf", "xsd", "dtd", "ent", "xhtml", "xht", "mml", "kml"}
)
"""Suffixes that say a resource may be XML: ``img``/``object``/``embed`` sources count then."""


def url_suffix(url: str) -> str:
    """The lower-cased suffix of the URL's last path segment ('' if none).

    >>> url_suffix("http://a.example/img/Logo.PNG?x=1"), url_suffix("http://a.example/v1.2/")
    ('png', '')
    """
    last = urlsplit(url).path.rsplit("/", 1)[-1]
    if "." not in last:
        return ""
    return last.rsplit(".", 1)[-1].lower()


def normalize_suffixes(suffixes: tuple[str, ...]) -> tuple[str, ...]:
    """Suffixes lower-cased, without a leading dot, deduplicated (raises ValueError if bad).

    >>> normalize_suffixes((".JPG", "png", "png"))
    ('jpg', 'png')
    """
    clean: dict[str, None] = {}
    for suffix in suffixes:
        word = suffix.strip().lower().removeprefix(".")
        if not word or any(char in word for char in "/?#. \t"):
            raise ValueError(f"denied suffix {suffix!r} is not a file suffix such as 'jpg'")
        clean[word] = None
    return tuple(clean)


@dataclass(frozen=True, slots=True)
class SuffixDenyList:
    """The suffix filter: why a URL is not fetched because of its suffix, or None.

    >>> deny = SuffixDenyList(frozenset({"jpg"}))
    >>> deny.refusal("http://a.example/photo.JPG"), deny.refusal("http://a.example/style.css")
    ('suffix .jpg: binary media', None)
    """

    suffixes: frozenset[str]

    def refusal(self, url: str) -> str | None:
        """The reason ``url`` is refused by its suffix (recorded with the URL), or None."""
        suffix = url_suffix(url)
        if suffix and suffix in self.suffixes:
            return f"suffix .{suffix}: binary media"
        return None
