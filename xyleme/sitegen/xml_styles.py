"""XML documentation vocabularies as their tools write them, each linking by its own rule.

XHTML 1.0 Strict (served both as ``text/html`` and ``application/xhtml+xml``, W3C DTD,
named entities), DocBook 4.5 (OASIS public id, ``ulink url``, ``xref linkend``, ``olink``),
DocBook 5 (``link xlink:href``), TEI P5 (``ref``/``ptr target``), DITA 1.3 (``xref href``
in topics, ``topicref href`` in a map, a relative DTD that is missing), Mallard
(``link xref`` naming a page id, ``link href``), SVG (``a xlink:href`` and SVG 2 ``href``),
and a home-made vocabulary whose DTD, with the entities the pages use, is on an origin out
of scope: the crawl must keep those pages without ever fetching it.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

from xyleme.sitegen.context import Context
from xyleme.sitegen.refs import Refs

XHTML_STRICT = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"\n'
    '  "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
)
DOCBOOK4 = (
    '<!DOCTYPE article PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN"\n'
    '  "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd"'
)
XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"'


def _decl(encoding: str = "UTF-8") -> str:
    return f'<?xml version="1.0" encoding="{encoding}"?>\n'


class Vocabularies:
    """The XML sections: each plans its URLs (an index and pages), then writes them."""

    def __init__(self, ctx: Context, root: str, count: int, offsite: str) -> None:
        self.ctx, self.root, self.offsite = ctx, root, offsite
        share = max(count // 8, 3)
        self.xhtml = [f"{root}xhtml/page-{i:03d}.html" for i in range(share * 2)]
        self.docbook4 = [f"{root}docbook/art{i:02d}.xml" for i in range(share)]
        self.docbook5 = [f"{root}db5/ch{i:02d}.xml" for i in range(share)]
        self.tei = [f"{root}tei/text{i:02d}.xml" for i in range(share)]
        self.dita = [f"{root}dita/topics/t{i:02d}.dita" for i in range(share)]
        self.mallard = [f"{root}help/topic-{i:02d}.page" for i in range(share)]
        self.svg = [f"{root}diagrams/figure-{i}.svg" for i in range(3)]
        self.specs = [f"{root}specs/spec-{i:02d}.xml" for i in range(max(share // 2, 2))]
        self.entries = {
            "XHTML notes": f"{root}xhtml/index.html",
            "DocBook 4 articles": f"{root}docbook/index.xml",
            "DocBook 5 book": f"{root}db5/book.xml",
            "TEI corpus": f"{root}tei/corpus.xml",
            "DITA user guide": f"{root}dita/userguide.ditamap",
            "Mallard help": f"{root}help/index.page",
            "Specifications": f"{root}specs/index.xml",
        }
        ctx.pool.extend(self.xhtml[0::2])  # the others: only through an XHTML page
        for group in (self.docbook4, self.docbook5, self.tei, self.specs, self.dita, self.mallard):
            ctx.pool.extend(group[1:])  # the first of each: reached by its own vocabulary

    def write(self) -> None:
        self._xhtml()
        self._docbook4()
        self._docbook5()
        self._tei()
        self._dita()
        self._mallard()
        self._svg()
        self._specs()

    # -- XHTML ------------------------------------------------------------------------
    def _xhtml(self) -> None:
        """The index (``text/html``) lists the pages served as XML; each of those links to
        one served as ``text/html``, which only an XML page links to."""
        as_xml, as_html = self.xhtml[0::2], self.xhtml[1::2]
        index = self.entries["XHTML notes"]
        self._xhtml_page(index, [(p, f"Note {n}") for n, p in enumerate(as_xml)], xml=False)
        for n, url in enumerate(as_xml):
            picks = [(p, self.ctx.title(p)) for p in self.ctx.pick(self.ctx.rng.randint(1, 3), url)]
            if n < len(as_html):
                picks.append((as_html[n], "Suite&nbsp;de la note"))
            self._xhtml_page(url, picks, xml=True)
        for url in as_html:
            picks = [(p, self.ctx.title(p)) for p in self.ctx.pick(self.ctx.rng.randint(1, 2), url)]
            self._xhtml_page(url, picks, xml=False)

    def _xhtml_page(self, url: str, targets: list[tuple[str, str]], *, xml: bool) -> None:
        refs = Refs(url)
        items = "\n".join(
            f'<li><a href="{refs.href(t, "xhtml:a")}">{label}</a></li>' for t, label in targets
        )
        css = refs.spell(self.root + "xhtml/notes.css")
        body = (
            _decl()
            + XHTML_STRICT
            + '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="fr" lang="fr">\n<head>\n'
            '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />\n'
            f"<title>Note d&eacute;taill&eacute;e</title>\n"
            f'<link rel="stylesheet" type="text/css" href="{css}" />\n</head>\n<body>\n'
            "<h1>R&eacute;sum&eacute;&nbsp;&mdash; notes</h1>\n"
            f"<p>{self.ctx.paragraph()}&nbsp;&copy;&nbsp;2024</p>\n<ul>\n{items}\n</ul>\n"
            "</body>\n</html>\n"
        )
        content_type = "application/xhtml+xml" if xml else "text/html; charset=UTF-8"
        self.ctx.serve(refs, body, content_type, "xhtml", is_xml=xml)

    def _citing(self, index: str, pages: list[str]) -> Iterator[tuple[Refs, list[str]]]:
        """Each page of a section with the pages it cites: the index all of the section's,
        the others a few popular pages."""
        for url in [index, *pages]:
            yield (
                Refs(url),
                pages if url == index else self.ctx.pick(self.ctx.rng.randint(1, 3), url),
            )

    # -- DocBook -------------------------------------------------------------------------
    def _docbook4(self) -> None:
        index = self.entries["DocBook 4 articles"]
        for refs, targets in self._citing(index, self.docbook4):
            items = "\n".join(
                f'<listitem><para><ulink url="{refs.href(t, "docbook4:ulink")}">'
                f"{escape(self.ctx.title(t))}</ulink></para></listitem>"
                for t in targets
            )
            body = (
                _decl() + DOCBOOK4 + ' [\n<!ENTITY product "Xyleme">\n]>\n'
                f'<article id="top" lang="en">\n<articleinfo><title>&product; article</title>'
                "<copyright><year>2024</year><holder>The &product; authors</holder></copyright>"
                "</articleinfo>\n"
                f'<section id="intro"><title>Introduction</title>\n<para>{self.ctx.paragraph()} '
                'As <xref linkend="usage"/> shows &mdash; see also <olink targetdoc="admin-guide" '
                'targetptr="backup">the backup chapter</olink>.</para>\n'
                f"<itemizedlist>\n{items}\n</itemizedlist></section>\n"
                f'<section id="usage"><title>Usage</title><para>{self.ctx.paragraph(2)}</para>'
                '<para><ulink url="https://tdg.docbook.org/tdg/4.5/ulink.html">ulink</ulink>'
                "</para></section>\n</article>\n"
            )
            self.ctx.serve(refs, body, "application/xml", "docbook4", is_xml=True)

    def _docbook5(self) -> None:
        book = self.entries["DocBook 5 book"]
        for refs, targets in self._citing(book, self.docbook5):
            url = refs.url
            links = "\n".join(
                f'<listitem><para><link xlink:href="{refs.href(t, "docbook5:link")}">'
                f"{escape(self.ctx.title(t))}</link></para></listitem>"
                for t in targets
            )
            root = "book" if url == book else "chapter"
            body = (
                _decl() + '<?xml-model href="http://docbook.org/xml/5.0/rng/docbook.rng" '
                'schematypens="http://relaxng.org/ns/structure/1.0"?>\n'
                f'<{root} xmlns="http://docbook.org/ns/docbook" {XLINK} version="5.0" '
                f'xml:id="{url.rsplit("/", 1)[-1][:-4]}">\n'
                f"<info><title>{escape(self.ctx.title(url))}"
                f"</title></info>\n<para>{self.ctx.paragraph()}</para>\n"
                f"<itemizedlist>\n{links}\n</itemizedlist>\n</{root}>\n"
            )
            self.ctx.serve(refs, body, "application/docbook+xml", "docbook5", is_xml=True)

    # -- TEI, DITA, Mallard ----------------------------------------------------------------
    def _tei(self) -> None:
        corpus = self.entries["TEI corpus"]
        for url in [corpus, *self.tei]:
            refs = Refs(url)
            if url == corpus:
                cites = "\n".join(
                    f'<item><ref target="{refs.href(t, "tei:ref")}">Text {n}</ref></item>'
                    for n, t in enumerate(self.tei[:-1])
                )
                cites += f'\n<item>and <ptr target="{refs.href(self.tei[-1], "tei:ptr")}"/></item>'
                cites = f"<list>\n{cites}\n</list>"
            else:
                cites = " ".join(
                    f'<ref target="{refs.href(t, "tei:ref")}">{escape(self.ctx.title(t))}</ref>'
                    for t in self.ctx.pick(self.ctx.rng.randint(1, 3), url)
                )
            body = (
                _decl() + '<TEI xmlns="http://www.tei-c.org/ns/1.0">\n<teiHeader><fileDesc>'
                f"<titleStmt><title>{escape(self.ctx.title(url))}</title></titleStmt>"
                "<publicationStmt><p>Xyleme test corpus</p></publicationStmt>"
                "<sourceDesc><p>Born digital.</p></sourceDesc></fileDesc></teiHeader>\n"
                f'<text><body><div type="section"><p>{self.ctx.paragraph()} '
                f'<ptr target="#p2"/></p>\n<p xml:id="p2">{cites}</p></div></body></text>\n</TEI>\n'
            )
            self.ctx.serve(refs, body, "application/tei+xml", "tei", is_xml=True)

    def _dita(self) -> None:
        ditamap = self.entries["DITA user guide"]
        refs = Refs(ditamap)
        topicrefs = "\n".join(
            f'  <topicref href="{refs.href(t, "dita:topicref")}" type="concept"/>'
            for t in self.dita[1:]
        )
        body = (
            _decl() + '<!DOCTYPE map PUBLIC "-//OASIS//DTD DITA Map//EN" "map.dtd">\n'
            f'<map xml:lang="en-us">\n<title>User guide</title>\n{topicrefs}\n</map>\n'
        )
        self.ctx.serve(refs, body, "application/xml", "dita", is_xml=True)
        for i, url in enumerate(self.dita):
            refs = Refs(url)
            targets = [self.dita[0]] if i == 1 else []  # t00: only through an xref
            targets += [
                t for t in self.ctx.pick(self.ctx.rng.randint(1, 2), url) if t not in targets
            ]
            xrefs = " ".join(
                f'<xref href="{refs.href(t, "dita:xref")}" format="'
                f'{"dita" if t.endswith(".dita") else "html"}"/>'
                for t in targets
            )
            body = (
                _decl()
                + '<!DOCTYPE concept PUBLIC "-//OASIS//DTD DITA Concept//EN" "concept.dtd">\n'
                f'<concept id="t{i:02d}" xml:lang="en-us">\n'
                f"<title>{escape(self.ctx.title(url))}</title>\n"
                f"<conbody><p>{self.ctx.paragraph()}</p>\n<p>Related: {xrefs} and "
                '<xref href="https://www.oasis-open.org/committees/dita/" format="html" '
                'scope="external">OASIS DITA</xref>.</p></conbody>\n</concept>\n'
            )
            self.ctx.serve(refs, body, "application/dita+xml", "dita", is_xml=True)

    def _mallard(self) -> None:
        """A guide page linking its topics by page id; topics link back (``type=guide``),
        out by ``href``; the first topic is reached only by a ``next`` link."""
        index = self.entries["Mallard help"]
        for url in [index, *self.mallard]:
            refs = Refs(url)
            if url == index:
                info = ""
                links = "\n".join(
                    f'<p><link xref="{self._mallard_xref(refs, t)}"/></p>' for t in self.mallard[1:]
                )
            else:
                info = f'<link type="guide" xref="{self._mallard_xref(refs, index)}"/>'
                if url == self.mallard[1]:
                    info += (
                        f'<link type="next" xref="{self._mallard_xref(refs, self.mallard[0])}"/>'
                    )
                (out,) = self.ctx.pick(1, url)
                links = (
                    '<p>See <link href="https://projectmallard.org/1.0/">Mallard</link> and '
                    f'<link href="{refs.href(out, "mallard:href", style="absolute")}">'
                    f"{escape(self.ctx.title(out))}</link>.</p>"
                )
            page_id = url.rsplit("/", 1)[-1][: -len(".page")]
            kind = "guide" if url == index else "topic"
            body = (
                _decl() + f'<page xmlns="http://projectmallard.org/1.0/" type="{kind}" '
                f'id="{page_id}">\n<info>{info}</info>\n<title>{escape(self.ctx.title(url))}'
                f"</title>\n<p>{self.ctx.paragraph()}</p>\n{links}\n</page>\n"
            )
            self.ctx.serve(refs, body, "application/xml", "mallard", is_xml=True)

    @staticmethod
    def _mallard_xref(refs: Refs, target: str) -> str:
        """A Mallard ``xref`` names a page id: the file ``<id>.page`` next to the page."""
        refs.href(target, "mallard:xref")
        return target.rsplit("/", 1)[-1][: -len(".page")]

    # -- SVG and the off-scope DTD -----------------------------------------------------------
    def _svg(self) -> None:
        for i, url in enumerate(self.svg):
            refs = Refs(url)
            targets = self.ctx.pick(2, url)
            plain = f'href="{refs.href(targets[0], "svg:href")}"'
            xlinked = f'xlink:href="{refs.href(targets[-1], "svg:xlink")}"'
            body = (
                _decl()
                + '<svg xmlns="http://www.w3.org/2000/svg" '
                + XLINK
                + ' width="480" height="120" viewBox="0 0 480 120">\n'
                f"<title>Figure {i}</title>\n"
                '<rect x="10" y="10" width="140" height="60" fill="#dde"/>\n'
                f'<a {xlinked}><text x="20" y="45">crawler</text></a>\n'
                f'<a {plain}><text x="200" y="45">loader</text></a>\n</svg>\n'
            )
            self.ctx.serve(refs, body, "image/svg+xml", "svg", is_xml=True)

    def _specs(self) -> None:
        dtd = f"{self.offsite}/dtd/spec.dtd"
        index = self.entries["Specifications"]
        for url in [index, *self.specs]:
            refs = Refs(url)
            targets = self.specs if url == index else self.ctx.pick(self.ctx.rng.randint(1, 2), url)
            refs_xml = "\n".join(
                f'<see xlink:type="simple" xlink:href="{refs.href(t, "xlink:href")}">'
                f"{escape(self.ctx.title(t))}</see>"
                for t in targets
            )
            body = (
                _decl() + f'<!DOCTYPE spec SYSTEM "{dtd}" [\n'
                f'<!ENTITY legal SYSTEM "{self.offsite}/ent/legal.ent">\n]>\n'
                f'<spec {XLINK} status="&status;">\n<title>&product; specification</title>\n'
                f"<p>{self.ctx.paragraph()} &company; &nbsp;</p>\n{refs_xml}\n&legal;\n</spec>\n"
            )
            self.ctx.serve(refs, body, "text/xml", "spec-offsite-dtd", is_xml=True)
