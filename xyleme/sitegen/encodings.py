"""Pages whose links can be read only when their encoding is decided right.

Each encoded page links to one page whose path (or query, or host) is non-ASCII and that no
other page links to: if the crawler decodes the page wrongly, the link it extracts points to
a URL that does not exist, and the target is never read. The cases follow the WHATWG
encoding rules for HTML (BOM, then the HTTP charset, then the ``<meta>`` prescan, where
utf-16 means utf-8; every WHATWG label), RFC 7303 for XML (charset parameter, BOM,
declaration), and the WHATWG URL rules (a path percent-encoded from UTF-8 once, a query in
the page's encoding, an IDNA host).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from xyleme.sitegen.context import Context
from xyleme.sitegen.model import Document, Response
from xyleme.sitegen.refs import Refs

_UTF8 = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Case:
    """One encoded page: how it is served and the non-ASCII name only it links to."""

    name: str
    codec: str
    content_type: str
    meta: str
    target: str
    what: str
    bom: bytes = b""


HTML_CASES = (
    Case(
        "http-charset.html",
        "windows-1252",
        "text/html; charset=windows-1252",
        "",
        "café.html",
        "the HTTP charset alone names the encoding",
    ),
    Case(
        "bom.html",
        "utf-8",
        "text/html; charset=iso-8859-1",
        "",
        "naïve.html",
        "a UTF-8 BOM wins over the HTTP charset",
        bom=b"\xef\xbb\xbf",
    ),
    Case(
        "meta-utf16.html",
        "utf-8",
        "text/html",
        '<meta charset="utf-16">',
        "übersicht.html",
        "<meta charset=utf-16> on an ASCII-compatible body means utf-8",
    ),
    Case(
        "iso-2022-jp.html",
        "iso2022_jp",
        "text/html",
        '<meta http-equiv="Content-Type" content="text/html; charset=iso-2022-jp">',
        "日本語.html",
        "a stateful encoding named by http-equiv",
    ),
    Case(
        "shift_jis.html",
        "shift_jis",
        "text/html",
        '<meta charset="shift_jis">',
        "目次.html",
        "Shift_JIS by <meta charset>; its query is encoded in Shift_JIS",
    ),
    Case(
        "latin1-label.html",
        "windows-1252",
        "text/html",
        '<meta charset="latin1">',
        "résumé.html",
        "the label latin1 is windows-1252 (curly quotes in 0x93/0x94)",
    ),
)


class Encodings:
    """The ``/intl/`` section: an index, the encoded pages, their targets, an IDNA host."""

    def __init__(self, ctx: Context, origin: str, idna_origin_unicode: str) -> None:
        self.ctx, self.origin = ctx, origin
        self.root = f"{origin}/intl/"
        self.entry = f"{self.root}index.html"
        self.umlaut = f"{origin}/päge.html"
        self.idna_home = f"{idna_origin_unicode}/"
        self.idna_pages = [
            f"{idna_origin_unicode}/katalog.html",
            f"{idna_origin_unicode}/über.html",
        ]
        self.search = f"{self.root}search.html"

    def write(self) -> None:
        refs = Refs(self.entry)
        items = [
            f'<li><a href="{refs.href(self.root + c.name, "html:a")}">{escape(c.what)}</a></li>'
            for c in HTML_CASES
        ]
        for name, what in (
            ("latin1.xml", "an XML declaration in ISO-8859-1"),
            ("utf16.xml", "UTF-16 XML with a BOM and a charset parameter"),
        ):
            items.append(f'<li><a href="{refs.href(self.root + name, "html:a")}">{what}</a></li>')
        items.append(
            f'<li><a href="{refs.href(self.idna_home, "html:a", style="absolute")}">'
            "Bücher (an IDNA host)</a></li>"
        )
        self._plain(refs, "Encodings", "\n".join(items))
        for case in HTML_CASES:
            self._encoded(case)
        self._xml_cases()
        for target in [c.target for c in HTML_CASES] + ["données.html", "straße.html"]:
            self._plain(Refs(self.root + target), target, "")
        self._plain(Refs(self.umlaut), "päge", "")
        home = Refs(self.idna_home)
        self._plain(
            home,
            "Bücher",
            "\n".join(
                f'<li><a href="{home.href(p, "html:a", style="absolute-path")}">{p}</a></li>'
                for p in self.idna_pages
            ),
        )
        for url in self.idna_pages:
            self._plain(Refs(url), "Katalog", "")
        self.ctx.site.add(
            f"{self.idna_home}robots.txt", Response(200, b"User-agent: *\nAllow: /\n", "text/plain")
        )

    def _plain(self, refs: Refs, title: str, items: str) -> None:
        body = (
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"</head><body><h1>{title}</h1><p>{self.ctx.paragraph(2)}</p><ul>\n{items}\n"
            "</ul></body></html>\n"
        )
        self.ctx.serve(refs, body, "text/html; charset=utf-8", "encoding", is_xml=False)

    def _encoded(self, case: Case) -> None:
        refs = Refs(self.root + case.name)
        target = self.root + case.target
        query = ""
        if case.codec == "shift_jis":
            encoded_query = quote("検索".encode("shift_jis"))
            refs.href(f"{self.search}?q={encoded_query}", "html:a-query")
            query = '<p><a href="search.html?q=検索">検索</a></p>'
            self.ctx.site.add(
                f"{self.search}?q={encoded_query}",
                Response(200, "<!DOCTYPE html><title>検索</title><p>検索</p>".encode(), _UTF8),
                document=Document(False, "encoding"),
            )
        body = (
            f"<!DOCTYPE html>\n<html><head>{case.meta}<title>\u201cEncodings\u201d</title>"
            f"</head><body><p>\u201c{escape(case.what)}\u201d</p>\n"
            f'<p><a href="{refs.href(target, "html:a")}">{case.target}</a></p>{query}\n'
            "</body></html>\n"
        )
        data = case.bom + body.encode(case.codec, errors="xmlcharrefreplace")
        self.ctx.serve(refs, data, case.content_type, "encoding", is_xml=False)

    def _xml_cases(self) -> None:
        xlink = 'xmlns:xlink="http://www.w3.org/1999/xlink"'
        refs = Refs(self.root + "latin1.xml")
        body = (
            '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
            f"<catalogue {xlink}><titre>Données</titre>"
            '<voir xlink:type="simple" '
            f'xlink:href="{refs.href(self.root + "données.html", "xlink:href")}"/>'
            "</catalogue>\n"
        )
        self.ctx.serve(refs, body.encode("iso-8859-1"), "application/xml", "encoding", is_xml=True)
        refs = Refs(self.root + "utf16.xml")
        body = (
            '<?xml version="1.0" encoding="UTF-16"?>\n'
            f"<katalog {xlink}><titel>Straße</titel>"
            '<siehe xlink:type="simple" '
            f'xlink:href="{refs.href(self.root + "straße.html", "xlink:href")}"/>'
            "</katalog>\n"
        )
        self.ctx.serve(
            refs, body.encode("utf-16"), "application/xml; charset=utf-16", "encoding", is_xml=True
        )
