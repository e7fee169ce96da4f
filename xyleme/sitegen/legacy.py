"""The parts of a real site no generator planned: odd suffixes, redirects, 404s, resources.

``/legacy/`` holds pages whose suffix lies about their type (``.php``, ``.aspx``, ``.do``,
none, ``.xml`` that is HTML, ``.html`` that is XML, ``.txt`` that is HTML), bodies without a
Content-Type or with a generic one (WHATWG sniffing), the HTML link forms a crawler often
misses (``<base href>``, ``area``, meta refresh, ``rel=alternate hreflang``), links to
resources (PDF, JSON, PNG, archives), to other schemes, off the site, to pages robots.txt
disallows; ``/moved/`` holds 301/302/307 redirects, a chain, a loop and a redirect off the
scope. Each target a link form alone reaches is named in :attr:`Legacy.only_via`.
"""

from __future__ import annotations

import struct
import zlib

from xyleme.sitegen.context import Context
from xyleme.sitegen.model import Response
from xyleme.sitegen.refs import Refs

_HTML = "text/html; charset=utf-8"
_XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"'


def png(width: int = 16, height: int = 16) -> bytes:
    """A valid grey PNG image (the resources the site links to are real files)."""
    raw = b"".join(b"\x00" + bytes([128]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]"
    b"/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


class Legacy:
    """``/legacy/`` and ``/moved/``: see the module docstring."""

    def __init__(self, ctx: Context, origin: str, offsite: str) -> None:
        self.ctx, self.origin, self.offsite = ctx, origin, offsite
        self.root = f"{origin}/legacy/"
        self.entry = f"{self.root}index.php"
        self.only_via = {
            "html:base": f"{self.root}docs/v2/options.html",
            "html:area": f"{self.root}region-north.html",
            "html:meta-refresh": f"{self.root}home.html",
            "html:link-alternate": f"{self.root}fr/index.php",
            "redirect-chain": f"{origin}/moved/final.html",
        }
        self.missing = [f"{origin}/missing/page-{i}.html" for i in range(3)]
        self.private = f"{origin}/private/secret.html"

    def write(self, entries: list[str], directory: str) -> None:
        """Write the pages; the redirects lead to ``entries`` (other sections' entries), the
        hand-written page names ``directory`` (a directory URL) without its slash."""
        moved = f"{self.origin}/moved/"
        redirects = {
            **{
                moved + name: (status, target)
                for (status, name), target in zip(
                    (
                        (301, "old-intro.html"),
                        (302, "legacy.php"),
                        (307, "temp.aspx"),
                        (308, "permanent"),
                    ),
                    entries,
                    strict=False,
                )
            },
            moved + "chain-1": (301, "chain-2"),
            moved + "chain-2": (302, f"{moved}chain-3"),
            moved + "chain-3": (307, "/moved/final.html"),
            moved + "off-scope": (302, f"{self.offsite}/elsewhere.html"),
            moved + "loop-a": (302, "loop-b"),
            moved + "loop-b": (302, "loop-a"),
        }
        for url, (status, location) in redirects.items():
            self.ctx.site.add(url, Response(status, b"", "text/html", (("Location", location),)))
        self._index([url for url in redirects if not url.endswith(("-2", "-3", "-b"))])
        self._odd_suffixes()
        self._quirks(directory)
        self._forms()
        self._resources()
        for url in self.only_via.values():
            if url not in self.ctx.site.responses:
                self._simple(url, "Reached by one link form")

    def _simple(self, url: str, title: str) -> None:
        """A short HTML page that links back to the legacy index."""
        refs = Refs(url)
        back = refs.href(self.entry, "html:a")
        self._page(
            refs,
            (
                f"<!DOCTYPE html>\n<html><head><title>{title}</title></head><body><h1>{title}"
                f'</h1><p>{self.ctx.paragraph(2)}</p><p><a href="{back}">Legacy</a></p>'
                "</body></html>\n"
            ),
        )

    def _page(self, refs: Refs, body: str) -> None:
        self.ctx.serve(refs, body, _HTML, "legacy", is_xml=False)

    def _index(self, redirects: list[str]) -> None:
        refs = Refs(self.entry)
        a = lambda url, label, kind="html:a", style="relative": (  # noqa: E731
            f'<li><a href="{refs.href(url, kind, style=style)}">{label}</a></li>'
        )
        items = [
            a(f"{self.root}Default.aspx", "ASP.NET"),
            a(f"{self.root}show.do?id=7", "Struts"),
            a(f"{self.root}about", "No suffix"),
            a(f"{self.root}feed.xml", "HTML named .xml"),
            a(f"{self.root}data.html", "XML named .html"),
            a(f"{self.root}readme.txt", "HTML named .txt"),
            a(f"{self.root}untyped", "No Content-Type"),
            a(f"{self.root}export", "octet-stream XML"),
            a(f"{self.root}base.html", "Base"),
            a(f"{self.root}map.html", "Image map"),
            a(f"{self.root}old-home.html", "Old home (meta refresh)"),
            a(f"{self.root}quirks.html", "Hand-written HTML"),
            *(a(url, "Moved", style="absolute-path") for url in redirects),
            *(a(url, "Missing") for url in self.missing),
        ]
        resources = [
            ("manual.pdf", "PDF"),
            ("data.json", "JSON"),
            ("notes.txt", "text"),
            ("logo.png", "PNG"),
            ("dist/xyleme-2.1.tar.gz", "archive"),
        ]
        items += [
            f'<li><a href="{refs.spell(self.root + n)}">{label}</a></li>' for n, label in resources
        ]
        items += [
            f'<li><a href="{self.offsite}/elsewhere.html">same host, other port</a></li>',
            '<li><a href="https://www.w3.org/TR/xhtml1/" rel="nofollow">W3C</a></li>',
            '<li><a href="mailto:docs@example.org">mail</a> <a href="javascript:void(0)">js</a> '
            '<a href="tel:+33100000000">tel</a> <a href="ftp://ftp.example.org/pub/">ftp</a></li>',
            f'<li><a href="{refs.href(self.private, "html:a", style="absolute-path")}">'
            "private</a></li>",
            '<li><a href="#top">top</a></li>',
        ]
        alternate = refs.href(self.only_via["html:link-alternate"], "html:link-alternate")
        body = (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Legacy</title>'
            f'<link rel="alternate" hreflang="fr" href="{alternate}">'
            f'<link rel="stylesheet" href="{refs.spell(self.root + "site.css")}">'
            f'<link rel="preload" as="script" href="{refs.spell(self.root + "app.js")}">'
            f'</head><body id="top"><h1>Legacy pages</h1><ul>\n'
            + "\n".join(items)
            + f'\n</ul><script src="{refs.spell(self.root + "app.js")}"></script></body></html>\n'
        )
        self._page(refs, body)
        self._simple(self.only_via["html:link-alternate"], "Pages anciennes")

    def _quirks(self, directory: str) -> None:
        """Hand-written HTML 3.2: upper-case tags, ``&amp;`` in a query, white space around
        an address, a protocol-relative and an upper-case URL, a space in a path, a
        directory without its slash (the server redirects), an IIS-style Content-Type."""
        refs = Refs(self.root + "quirks.html")
        origin = self.origin.removeprefix("http:")
        targets = {
            "query": f"{self.root}show.do?id=7&lang=en",
            "spaces": f"{self.root}contact.html",
            "protocol": f"{self.root}protocol-relative.html",
            "upper": f"{self.root}upper-case.html",
            "space": f"{self.root}release notes.html",
            "slashless": directory.rstrip("/"),
        }
        for target in targets.values():
            refs.href(target, "html:a")
        body = (
            '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<HTML><HEAD><TITLE>Quirks'
            "</TITLE></HEAD><BODY BGCOLOR=white><UL>\n"
            '<LI><A HREF="show.do?id=7&amp;lang=en">English</A>\n'
            '<LI><A HREF="\n   contact.html  \n">Contact</A>\n'
            f'<LI><A HREF="{origin}/legacy/protocol-relative.html">Same scheme</A>\n'
            f'<LI><A HREF="HTTP://{self.origin[7:].upper()}/legacy/upper-case.html">Upper</A>\n'
            '<LI><A HREF="release notes.html">Release notes</A>\n'
            f'<LI><A HREF="{refs.spell(targets["slashless"], "absolute-path")}">Guide</A>\n'
            "</UL><P>\x93Quoted\x94 &copy; 1998</BODY></HTML>\n"
        )
        self.ctx.serve(
            refs,
            body.encode("latin-1"),
            'Text/HTML; Charset="windows-1252"',
            "legacy",
            is_xml=False,
        )
        for name in (
            "show.do?id=7&lang=en",
            "contact.html",
            "protocol-relative.html",
            "upper-case.html",
            "release notes.html",
        ):
            self._simple(self.root + name, "Reached from hand-written HTML")

    def _odd_suffixes(self) -> None:
        for name in ("Default.aspx", "show.do?id=7", "about", "readme.txt"):
            self._simple(self.root + name, f"Served as HTML: {name}")
        refs = Refs(self.root + "feed.xml")
        body = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html><head><title>'
            f'Not a feed</title></head><body><p><a href="{refs.href(self.entry, "html:a")}">'
            "back</a></p></body></html>\n"
        )
        self._page(refs, body)
        for name, content_type in (
            ("data.html", "application/xml"),
            ("export", "application/octet-stream"),
        ):
            refs = Refs(self.root + name)
            body = (
                f'<?xml version="1.0"?>\n<records {_XLINK}><record xlink:type="simple" '
                f'xlink:href="{refs.href(self.entry, "xlink:href")}">{name}</record></records>\n'
            )
            self.ctx.serve(refs, body, content_type, "legacy", is_xml=True)
        refs = Refs(self.root + "untyped")
        body = (
            f'<!DOCTYPE html>\n<html><head><title>untyped</title></head><body><a href="'
            f'{refs.href(self.entry, "html:a")}">back</a></body></html>\n'
        )
        self.ctx.serve(refs, body, None, "legacy", is_xml=False)

    def _forms(self) -> None:
        base = self.only_via["html:base"]
        refs = Refs(self.root + "base.html")
        refs.href(base, "html:base")
        self._page(
            refs,
            (
                '<!DOCTYPE html>\n<html><head><base href="/legacy/docs/v2/">'
                "<title>Base</title></head>"
                '<body><a href="options.html">Options</a></body></html>\n'
            ),
        )
        refs = Refs(self.root + "map.html")
        north = refs.href(self.only_via["html:area"], "html:area")
        self._page(
            refs,
            (
                f'<!DOCTYPE html>\n<html><head><title>Map</title></head><body><img src="'
                f'{refs.spell(self.root + "logo.png")}" usemap="#regions" alt="map">'
                '<map name="regions"><area shape="rect" coords="0,0,8,8" '
                f'href="{north}" alt="north">'
                "</map></body></html>\n"
            ),
        )
        refs = Refs(self.root + "old-home.html")
        home = refs.href(self.only_via["html:meta-refresh"], "html:meta-refresh")
        self._page(
            refs,
            (
                '<!DOCTYPE html>\n<html><head><meta http-equiv="refresh" content="0; URL='
                f"'{home}'\"><title>Moved</title></head><body>This page has moved.</body></html>\n"
            ),
        )

    def _resources(self) -> None:
        for name, body, content_type in (
            ("manual.pdf", PDF, "application/pdf"),
            ("data.json", b'{"pages": []}\n', "application/json"),
            ("notes.txt", b"Plain notes, not a document.\n", "text/plain; charset=utf-8"),
            ("logo.png", png(), "image/png"),
            ("site.css", b"body { font-family: serif }\n", "text/css"),
            ("app.js", b"document.documentElement.className = 'js';\n", "text/javascript"),
            ("dist/xyleme-2.1.tar.gz", zlib.compress(b"\0" * 512), "application/gzip"),
        ):
            self.ctx.site.add(self.root + name, Response(200, body, content_type))
        self._simple(self.private, "Disallowed by robots.txt")
