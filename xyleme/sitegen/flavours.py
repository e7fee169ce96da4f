"""What a production web server answers that ``http.server`` answers otherwise, for the truth.

Why: a folder served by nginx, Apache httpd or lighttpd with Debian's stock configuration
differs from ``python -m http.server`` in four ways that change which URLs are documents
and which links a listing holds: the Content-Type of a suffix (each server's own types
file: nginx's ``/etc/nginx/mime.types``, Apache's and lighttpd's ``/etc/mime.types``; nginx
calls an unknown suffix ``application/octet-stream``, Apache sends no type), the index files
a folder serves (``index``, ``DirectoryIndex``, ``index-file.names``), the links of a
folder's listing (nginx's ``autoindex`` and lighttpd's ``mod_dirlisting`` link ``../``;
Apache's ``mod_autoindex`` links the parent folder, holds a folder's ``README.html``, and
re-sorts itself by ``?C=N;O=D``, which the truth reads as a link of the listing to itself:
the same entries, in another order, are the same page, as docs/crawler.md's "Folder
listings" decides), and the account it reads files as (``www-data``). A :class:`Flavour`
holds these; :class:`~xyleme.sitegen.folder.StaticServer` reads one.
"""

from __future__ import annotations

import fnmatch
import functools
import grp
import mimetypes
import os
import pwd
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urljoin

Listing = Callable[[Path, str], list[str]]
"""``links(folder, url)``: the hrefs of ``folder``'s listing served at ``url``, absolute."""

_APACHE_IGNORE = (".??*", "*~", "*#", "RCS", "CVS", "*,v", "*,t")
"""Debian's ``IndexIgnore`` (``mods-available/autoindex.conf``)."""


def _hrefs(folder: Path, url: str, shown: Callable[[Path], bool]) -> list[str]:
    """The links of a listing of ``folder`` at ``url`` to the entries ``shown`` keeps."""
    paths = (folder / name for name in sorted(os.listdir(folder), key=str.lower))
    return [urljoin(url, quote(p.name) + ("/" if p.is_dir() else "")) for p in paths if shown(p)]


def _visible(path: Path) -> bool:
    """An entry a production server lists: no dot file, no broken symlink (it cannot stat
    it, so it leaves it out)."""
    return not path.name.startswith(".") and path.exists()


def _parent(url: str) -> list[str]:
    """The parent folder's link, but at the root."""
    return [urljoin(url, "../")] if urljoin(url, "/") != url else []


def python_listing(folder: Path, url: str) -> list[str]:
    """``http.server``: every name ``os.listdir`` gives; no parent link."""
    return _hrefs(folder, url, lambda path: True)


def nginx_listing(folder: Path, url: str) -> list[str]:
    """nginx ``autoindex on``: ``../`` (at the root too), then the visible entries."""
    return [urljoin(url, "../"), *_hrefs(folder, url, _visible)]


def lighttpd_listing(folder: Path, url: str) -> list[str]:
    """lighttpd ``dir-listing.activate``: ``../`` below the root, then the visible entries
    (``dir-listing.hide-dotfiles``)."""
    return [*_parent(url), *_hrefs(folder, url, _visible)]


def apache_listing(folder: Path, url: str) -> list[str]:
    """Apache ``Options Indexes`` with Debian's ``FancyIndexing``: the column sorts (the
    listing itself), the parent folder below the root, then the visible entries
    ``IndexIgnore`` keeps."""

    def shown(path: Path) -> bool:
        ignored = any(fnmatch.fnmatchcase(path.name, rule) for rule in _APACHE_IGNORE)
        return _visible(path) and not ignored

    return [url, *_parent(url), *_hrefs(folder, url, shown)]


@functools.cache
def _account(user: str) -> tuple[pwd.struct_passwd, frozenset[int]]:
    """``user``'s account and the groups it is in."""
    account = pwd.getpwnam(user)
    others = (group.gr_gid for group in grp.getgrall() if user in group.gr_mem)
    return account, frozenset({account.pw_gid, *others})


def read_types(path: Path) -> dict[str, str]:
    """A types file by suffix (``.xml`` → ``text/xml``): Apache's ``mime.types`` format, or
    nginx's (``types { text/xml xml; }``)."""
    text = path.read_text("utf-8", errors="replace")
    types: dict[str, str] = {}
    body = re.search(r"types\s*\{(.*)\}", text, re.DOTALL)
    if body is not None:  # nginx: "type suffix suffix;", the last mention winning
        for kind, names in re.findall(r"([\w.+-]+/[\w.+-]+)\s+([^;]+);", body.group(1)):
            types.update((f".{name.lower()}", kind) for name in names.split())
        return types
    table = mimetypes.MimeTypes(())
    table.readfp(path.open(encoding="utf-8", errors="replace"))
    return {suffix.lower(): kind for suffix, kind in table.types_map[True].items()}


@dataclass(frozen=True)
class Flavour:
    """One server's rules, as its stock Debian configuration sets them."""

    name: str
    index_files: tuple[str, ...]
    listing: Listing
    types: dict[str, str] = field(default_factory=dict)
    """Content-Type by lower-case suffix; empty: ``http.server``'s guess."""
    default_type: str = "application/octet-stream"
    """The type of a suffix ``types`` does not name ("" for none sent)."""
    text_charset: str = ""
    """A charset added to ``text/*`` but ``text/html`` (lighttpd's ``create-mime.conf.pl``)."""
    user: str = ""
    """The account whose rights the server reads files with (Debian's ``www-data``); ""
    for this process's, as ``http.server`` runs. A file it may not read is a 403."""
    inserts: tuple[str, ...] = ()
    """Files of a folder whose HTML its listing holds (Apache's ``HeaderName`` and
    ``ReadmeName``: their links are the listing's)."""

    def type_of(self, path: Path, guess: Callable[[Path], str]) -> str:
        """The Content-Type served for ``path`` (``guess`` is ``http.server``'s)."""
        if not self.types:
            return guess(path)
        kind = self.types.get(path.suffix.lower(), self.default_type)
        if self.text_charset and kind.startswith("text/") and kind != "text/html":
            kind += f";charset={self.text_charset}"
        return kind

    def can_read(self, path: Path, root: Path) -> bool:
        """Whether the server may open ``path``: read on the file, search on its folders up
        to the ``root`` it serves (which it reaches, or it would serve nothing)."""
        if not self.user:
            return os.access(path, os.R_OK)
        account, groups = _account(self.user)

        def allows(item: Path, bit: int) -> bool:
            status = item.stat()
            if status.st_uid == account.pw_uid:
                return bool(status.st_mode & bit << 6)
            return bool(status.st_mode & (bit << 3 if status.st_gid in groups else bit))

        folders = path.relative_to(root).parents
        return allows(path, 0o4) and all(allows(root / folder, 0o1) for folder in folders)


PYTHON = Flavour("http.server", ("index.html", "index.htm"), python_listing)


def flavour(name: str) -> Flavour:
    """The flavour of ``http.server``, ``nginx``, ``apache`` or ``lighttpd`` with Debian's
    stock files (``KeyError`` for another name)."""
    if name == PYTHON.name:
        return PYTHON
    etc = Path("/etc/mime.types")
    made = {
        "nginx": lambda: Flavour(
            "nginx",
            ("index.html", "index.htm"),
            nginx_listing,
            read_types(Path("/etc/nginx/mime.types")),
            user="www-data",
        ),
        "apache": lambda: Flavour(
            "apache",
            ("index.html", "index.cgi", "index.pl", "index.php", "index.xhtml", "index.htm"),
            apache_listing,
            {**read_types(etc), ".gz": "application/x-gzip", ".tgz": "application/x-gzip"},
            default_type="",
            user="www-data",
            inserts=("HEADER.html", "README.html"),
        ),
        "lighttpd": lambda: Flavour(
            "lighttpd",
            ("index.php", "index.html"),
            lighttpd_listing,
            read_types(etc),
            text_charset="utf-8",
            user="www-data",
        ),
    }
    return made[name]()
