"""Build the realistic site from a seed and a size: every section planned, then written.

Planning first (every section names its URLs and adds its content pages to the
cross-reference pool) lets any page cite any other; writing then draws the citations from
one seeded random source in a fixed order, so the same (seed, size, origins) always gives
the same bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from xyleme.sitegen.context import Context
from xyleme.sitegen.encodings import Encodings
from xyleme.sitegen.feeds import Blog, Sitemaps, portal
from xyleme.sitegen.html_styles import Javadoc, MkDocs, Sphinx
from xyleme.sitegen.legacy import Legacy, png
from xyleme.sitegen.model import Response, Site
from xyleme.sitegen.xml_styles import Vocabularies

IDNA_HOST = "bücher.realsite.test"
"""The second in-scope host: a name IDNA turns into ``xn--bcher-kva.realsite.test``."""
IDNA_PUNYCODE = "xn--bcher-kva.realsite.test"
DISALLOWED = ("/private/",)


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """What to generate: ``size`` is about the number of documents (a few hundred to a few
    thousand), ``seed`` fixes every random choice."""

    seed: int = 16
    size: int = 1500

    def __post_init__(self) -> None:
        if self.size < 150:
            raise ValueError("size must be at least 150 documents (every case needs a few)")


def build_site(spec: SiteSpec, port: int, offsite_port: int) -> Site:
    """The site served on ``127.0.0.1:port`` (and its IDNA host on the same port), whose
    off-scope dependencies live on ``127.0.0.1:offsite_port``."""
    origin = f"http://127.0.0.1:{port}"
    offsite = f"http://127.0.0.1:{offsite_port}"
    site = Site(origin, f"http://{IDNA_PUNYCODE}:{port}", offsite, seeds=[f"{origin}/"])
    ctx = Context(site, random.Random(spec.seed))
    share = spec.size // 20
    sphinx = Sphinx(ctx, f"{origin}/manual/", share * 5)
    javadoc = Javadoc(ctx, f"{origin}/api/", share * 4)
    mkdocs = MkDocs(ctx, f"{origin}/guide/", share * 3)
    vocabularies = Vocabularies(ctx, f"{origin}/", share * 6, offsite)
    blog = Blog(ctx, origin, max(share // 2, 8))
    encodings = Encodings(ctx, origin, f"http://{IDNA_HOST}:{port}")
    legacy = Legacy(ctx, origin, offsite)
    sitemaps = Sitemaps(ctx, origin, 5)
    ctx.seal_pool()
    sphinx.svg, mkdocs.svg = vocabularies.svg[0], vocabularies.svg[1]
    sections = {
        "User manual (Sphinx)": sphinx.entry,
        "API reference (Javadoc)": javadoc.entry,
        "Guide (MkDocs)": mkdocs.entry,
        **vocabularies.entries,
        "Release notes": blog.entry,
        "Encodings": encodings.entry,
        "Legacy pages": legacy.entry,
    }
    portal(ctx, f"{origin}/", sections, vocabularies.svg[2], encodings.umlaut)
    for section in (sphinx, javadoc, mkdocs, vocabularies, blog, encodings):
        section.write()
    legacy.write([sphinx.entry, mkdocs.entry, javadoc.entry, blog.entry], mkdocs.pages()[-1])
    for directory in mkdocs.pages():  # as static servers do: a directory without its slash
        site.add(directory.rstrip("/"), Response(301, b"", "text/html", (("Location", directory),)))
    sitemaps.write(f"{origin}/guide/sitemap.xml", [mkdocs.entry, *mkdocs.pages()], DISALLOWED)
    _static_files(site, origin)
    _offsite(site)
    return site


def _static_files(site: Site, origin: str) -> None:
    """The style sheets, scripts and images the generators' pages name (resources)."""
    css, js = "text/css", "text/javascript"
    for path, body, content_type in (
        ("/manual/_static/pygments.css", b".highlight { background: #f8f8f8 }\n", css),
        ("/manual/_static/basic.css", b"div.body { min-width: 360px }\n", css),
        ("/manual/_static/doctools.js", b"const Documentation = {};\n", js),
        ("/manual/_static/favicon.ico", png(), "image/vnd.microsoft.icon"),
        ("/manual/_images/pipeline.png", png(32, 8), "image/png"),
        ("/api/stylesheet.css", b"body { background-color: #ffffff }\n", css),
        ("/api/script.js", b"function show(type) {}\n", js),
        ("/guide/assets/images/favicon.png", png(), "image/png"),
        ("/guide/assets/stylesheets/main.50c56a3b.min.css", b".md-nav{font-size:.7rem}\n", css),
        ("/guide/assets/javascripts/bundle.d7c377c4.min.js", b"!function(){}();\n", js),
        ("/xhtml/notes.css", b"body { margin: 2em }\n", css),
    ):
        site.add(origin + path, Response(200, body, content_type))


def _offsite(site: Site) -> None:
    """What the off-scope origin would serve: the DTD and entity the specifications name."""
    dtd = b"""<!-- The specifications' grammar: a crawl that fetched it would find them valid. -->
<!ENTITY product "Xyleme">
<!ENTITY company "Xyleme SA">
<!ENTITY status "draft">
<!ENTITY nbsp "&#160;">
<!ELEMENT spec (title, p, see*, legal?)>
<!ATTLIST spec xmlns:xlink CDATA #FIXED "http://www.w3.org/1999/xlink"
               status CDATA #IMPLIED>
<!ELEMENT title (#PCDATA)>
<!ELEMENT p (#PCDATA)>
<!ELEMENT see (#PCDATA)>
<!ATTLIST see xlink:type (simple) #FIXED "simple"
              xlink:href CDATA #REQUIRED>
<!ELEMENT legal (#PCDATA)>
"""
    off = site.offsite_origin
    site.add(f"{off}/dtd/spec.dtd", Response(200, dtd, "application/xml-dtd"))
    site.add(
        f"{off}/ent/legal.ent",
        Response(200, b"<legal>All rights reserved.</legal>", "text/xml-external-parsed-entity"),
    )
    site.add(
        f"{off}/elsewhere.html", Response(200, b"<!DOCTYPE html><title>x</title>", "text/html")
    )
