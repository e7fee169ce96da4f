"""Writing a reference and declaring it at once, so a page and its truth never disagree."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from html import escape
from urllib.parse import urlsplit

from xyleme.sitegen.model import Link, canonical


def relative(from_url: str, to_url: str) -> str:
    """``to_url`` as a relative reference from a page at ``from_url`` (same origin), as
    documentation generators write them (``../api/x.html``, ``./``, ``sub/``)."""
    start, end = urlsplit(from_url), urlsplit(to_url)
    if (start.scheme, start.netloc) != (end.scheme, end.netloc):
        return to_url
    base = posixpath.dirname(start.path) or "/"
    path = posixpath.relpath(end.path, base)
    if end.path.endswith("/"):
        path = "./" if path == "." else path + "/"
    if end.query:
        path += "?" + end.query
    if end.fragment:
        path += "#" + end.fragment
    return path


@dataclass
class Refs:
    """The references of one page: :meth:`href` returns the text to write (attribute-escaped)
    and records the link it makes; :meth:`spell` writes one that is no link (a
    style sheet, a script, an image: a resource or a dependency)."""

    url: str
    links: list[Link] = field(default_factory=list)

    def href(self, target: str, kind: str, *, style: str = "relative") -> str:
        """Write a link to absolute ``target`` (Unicode allowed) as ``style`` says:
        ``relative``, ``absolute-path`` (``/x/y``) or ``absolute`` (the full URL)."""
        self.links.append(Link(canonical(target), kind))
        return escape(self.spell(target, style), quote=True)

    def spell(self, target: str, style: str = "relative") -> str:
        """How ``target`` is written in the page, without declaring a link."""
        if style == "absolute":
            return target
        if style == "absolute-path":
            parts = urlsplit(target)
            if f"{parts.scheme}://{parts.netloc}" != _origin(self.url):
                return target
            return parts.path + (f"?{parts.query}" if parts.query else "")
        return relative(self.url, target)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
