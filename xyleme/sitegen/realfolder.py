"""A folder shaped like the real documentation trees a static server serves.

Why: ``benchmarks/bench_folder.py`` and the tests need, on a fresh machine, the shapes the
trial on real folders met (docs/realsite.md, "Real folders"): an mdBook (its sidebar in an
``iframe``, ``rel=prev/next`` anchors, an SVG by ``img``), rustdoc (a JavaScript-only sidebar
naming a page no link names, a ``meta refresh`` stub, a large search index), DocBook HTML
(``<link rel=start/up/next>``), DocBook XSL's XHTML served as XML (``.xhtml``: the W3C's
DTD, ``&nbsp;``, links to the page itself), folders without an index (the server's
listing), file names that need percent-encoding, ``.gz`` files, a body without a type that
sniffs as HTML, XML files (one malformed, one empty, one a symlink), a link to a folder
without its slash, and a robots.txt. The truth is not declared here: :mod:`.folder`
computes it from the files, as it does for a real folder.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from urllib.parse import quote

_HEAD = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>\n'
    '<link rel="stylesheet" href="{up}style.css"><link rel="icon" href="{up}favicon.svg">\n'
    '<script src="{up}book.js"></script></head><body>\n'
)
ODD_NAMES = ("a b.html", "c++.html", "100%.html", "ü.html", "q?x.html", "semi;colon.html")
"""File names a link must percent-encode (as ``http.server``'s listing does)."""
HAND_WRITTEN = (
    '<a href="../listing/a b.html">raw space</a><a href="../listing/c%2B%2B.html">c++</a>'
    '<a href="../listing/100%25.html">percent</a><a href="../listing/ü.html">raw ü</a>'
    '<a href="../listing/q%3Fx.html">question mark</a><a href="../listing/mime/">mime</a>'
)
"""Links to the odd names as a hand would write them (another spelling than the listing's)."""
MIME_TYPES = ("text-plain", "text-html", "application-xml", "image-svg")


def _page(title: str, body: str, up: str = "") -> str:
    return _HEAD.format(title=title, up=up) + body + "\n</body></html>\n"


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)


def _book(root: Path, chapters: int) -> None:
    """An mdBook: ``index.html``, chapters chained by ``rel=prev/next``, the table of
    contents in ``toc.html`` (an ``iframe``), ``print.html``, an SVG figure."""
    names = [f"ch{i:02d}.html" for i in range(chapters)]
    toc = "".join(f'<li><a href="{name}">Chapter {i}</a></li>' for i, name in enumerate(names))
    _write(root / "toc.html", _page("Contents", f"<ol>{toc}</ol>"))
    for i, name in enumerate(names):
        nav = "".join(
            f'<a rel="{rel}" href="{names[j]}#top">{rel}</a>'
            for rel, j in (("prev", i - 1), ("next", i + 1))
            if 0 <= j < chapters
        )
        figure = '<img src="img/figure.svg" alt="f">' if i == 1 else ""
        body = (
            '<iframe class="sidebar" src="toc.html"></iframe>'
            f'<h1 id="top">Chapter {i}</h1><p><a href="#top">¶</a>{figure}'
            f'<a href="print.html">print</a><a href="https://example.org/x">off</a></p>{nav}'
        )
        _write(root / name, _page(f"Chapter {i}", body))
    _write(root / "index.html", (root / names[0]).read_text())
    _write(root / "print.html", _page("All", toc))
    _write(
        root / "img" / "figure.svg",
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<a xlink:href="../ch00.html"><rect width="9" height="9"/></a></svg>\n',
    )
    _write(root / "book.js", "window.book = {};\n")


def _rustdoc(root: Path, items: int) -> None:
    """rustdoc: item pages whose sidebar is built by JavaScript (``sidebar-items.js``
    names ``hidden.html``, which no link names), a ``meta refresh`` stub, a source view."""
    names = [f"struct.Item{i}.html" for i in range(items)]
    listed = "".join(f'<a href="{name}">Item{i}</a>' for i, name in enumerate(names))
    _write(root / "index.html", _page("Crate", f'{listed}<a href="old.html">old</a>', "../"))
    for i, name in enumerate(names):
        body = (
            '<nav class="sidebar"></nav><script defer src="sidebar-items.js"></script>'
            f'<a href="index.html">crate</a><a class="src" href="../src/lib.rs.html#{i}">src</a>'
            f'<a href="{names[(i + 1) % items]}#method.new">next</a>'
        )
        _write(root / name, _page(f"Item{i}", body, "../"))
    _write(root / "hidden.html", _page("Hidden", "named only by JavaScript", "../"))
    _write(root / "sidebar-items.js", 'window.SIDEBAR_ITEMS = {"struct":["hidden"]};\n')
    _write(
        root / "old.html",
        '<!DOCTYPE html><html><head><meta http-equiv="refresh" content="0;URL=struct.Item0.html">'
        "</head><body>Redirecting…</body></html>",
    )
    _write(root / "search-index.js", "var searchIndex = '" + "x" * 200_000 + "';\n")
    _write(root.parent / "src" / "lib.rs.html", _page("lib.rs", '<a href="../api/">up</a>', "../"))


def _manual(root: Path, sections: int) -> None:
    """DocBook's HTML (valgrind's manual): ``<link rel=start/up/prev/next>`` in the head,
    written in the ISO-8859-1 it declares (a raw ``ü`` in a link is one byte)."""
    names = ["index.html"] + [f"s{i}.html" for i in range(1, sections)]
    for i, name in enumerate(names):
        links = '<link rel="start" href="index.html"><link rel="up" href="index.html">'
        if i + 1 < sections:
            links += f'<link rel="next" href="{names[i + 1]}">'
        page = (
            '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
            f"<title>S{i}</title>{links}</head><body><p>Section {i}</p>"
            f'<a href="../listing">the files</a>{HAND_WRITTEN if i == 1 else ""}</body></html>'
        )
        _write(root / name, page.encode("iso-8859-1"))


_XHTML_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<!DOCTYPE html PUBLIC '
    '"-//W3C//DTD XHTML 1.0 Transitional//EN" '
    '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">'
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>'
    '<link rel="stylesheet" type="text/css" href="../../style.css" />{links}</head><body>'
)


def _xhtml_manual(root: Path, sections: int) -> None:
    """DocBook XSL's XHTML (PostgreSQL's manual) in ``.xhtml`` files, which a static server
    types ``application/xhtml+xml``: XML to the crawler, its DTD on the W3C's site,
    ``&nbsp;`` from it, ``<link rel=prev/next/up>``, and links to the page itself (the
    table of contents names its own sections: ``s1.xhtml#id-1``), which count once."""
    names = ["index.xhtml"] + [f"s{i}.xhtml" for i in range(1, sections)]
    for i, name in enumerate(names):
        links = '<link rel="up" href="index.xhtml" />'
        links += "".join(
            f'<link rel="{rel}" href="{names[j]}" />'
            for rel, j in (("prev", i - 1), ("next", i + 1))
            if 0 <= j < sections
        )
        body = (
            f'<h1 id="id-{i}">Section&nbsp;{i}</h1><p><a href="{name}#id-{i}">{i}.1</a>'
            f'<a href="#id-{i}">¶</a><a href="../manual/index.html">the HTML manual</a></p>'
        )
        page = _XHTML_HEAD.format(title=f"S{i}", links=links) + body + "</body></html>\n"
        _write(root / name, page)


def _listing(root: Path) -> None:
    """A folder without an index: odd names, compressed and plain text files, a body the
    server cannot type that sniffs as HTML, XML (one malformed, one empty, a symlink)."""
    for name in ODD_NAMES:
        _write(root / name, _page(name, '<a href="./">here</a>', ""))
    _write(root / "notes.txt", "plain text\n")
    _write(root / "changelog.gz", gzip.compress(b"changes\n"))
    _write(root / "page.html.gz", gzip.compress(_page("gz", "compressed").encode()))
    _write(root / "index.db", '<div element="book" href="a%20b.html">Index</div>\n')
    _write(root / "bad.xml", "<?xml version='1.0'?><r>Enewetak & Ujelang</r>\n")
    _write(root / "empty.xml", "")
    for kind in MIME_TYPES:
        _write(
            root / "mime" / f"{kind}.xml",
            '<?xml version="1.0"?><mime-type xmlns="http://www.freedesktop.org/standards/'
            f'shared-mime-info" type="{kind.replace("-", "/", 1)}"/>\n',
        )
    link = root / "mime" / "alias.xml"
    if not link.is_symlink():
        os.symlink(f"{MIME_TYPES[0]}.xml", link)


def write_folder(root: Path, copies: int = 1) -> None:
    """Write ``copies`` of each section under ``root`` (about 40 documents a copy), an
    ``index.html`` naming them and a robots.txt refusing ``/private/``."""
    entries = []
    for copy in range(copies):
        part = root / f"part{copy}"
        _book(part / "book", chapters=8)
        _rustdoc(part / "api", items=6)
        _manual(part / "manual", sections=5)
        _xhtml_manual(part / "xhtml", sections=4)
        _listing(part / "listing")
        entries += [f"part{copy}/{section}/" for section in ("book", "api")]
        entries += [f"part{copy}/manual/index.html", f"part{copy}/xhtml/index.xhtml"]
    entries.append("private/secret.html")
    _write(root / "private" / "secret.html", _page("Secret", "robots.txt refuses it"))
    _write(root / "robots.txt", "User-agent: *\nDisallow: /private/\n")
    _write(root / "style.css", "body{}\n")
    items = "".join(f'<li><a href="{quote(entry)}">{entry}</a></li>' for entry in entries)
    _write(root / "index.html", _page("Documentation", f"<ul>{items}</ul>"))
