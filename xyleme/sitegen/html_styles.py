"""HTML as three documentation generators write it: Sphinx, Javadoc (frames), MkDocs.

Each reproduces its generator's real markup: Sphinx's ``<link rel=index/search/next/prev>``
head and ``reference internal`` anchors, Javadoc 8's HTML 4.01 frameset and its per-class
"Frames" links (``index.html?pkg/Class.html``), MkDocs Material's directory URLs, canonical
link, self-link in the navigation and ``<object>``-embedded SVG. Pages that prove one kind of
link is followed (the appendices reached only by ``rel=next``, the frame lists, the page
reached only by ``iframe``) are kept out of the cross-reference pool.
"""

from __future__ import annotations

from html import escape

from xyleme.sitegen.context import Context
from xyleme.sitegen.refs import Refs

HTML = "text/html; charset=utf-8"
_TOPIC_WORDS = """
install quickstart tutorial configuration scope robots politeness frontier fetcher
loader catalog validation entities encodings versions queries refresh estimators
schedule ranking importance interest opic liverank metadata backup upgrade faq glossary
"""
_TOPICS = tuple(_TOPIC_WORDS.split())


def _slugs(count: int, prefix: str = "") -> list[str]:
    """``count`` distinct page names made of documentation topics."""
    names = []
    for i in range(count):
        first, second = _TOPICS[i % len(_TOPICS)], _TOPICS[(i // len(_TOPICS)) % len(_TOPICS)]
        names.append(f"{prefix}{first}" if i < len(_TOPICS) else f"{prefix}{first}-{second}-{i}")
    return names


def _cross_refs(ctx: Context, refs: Refs, count: int) -> str:
    """A paragraph citing ``count`` popular pages the way Sphinx writes internal references."""
    anchors = [
        f'<a class="reference internal" href="{refs.href(url, "html:a")}">'
        f'<span class="std std-ref">{escape(ctx.title(url))}</span></a>'
        for url in ctx.pick(count, refs.url)
    ]
    return f"<p>{ctx.sentence()} See {', '.join(anchors)}.</p>"


class Sphinx:
    """A Sphinx 7 manual (basic theme): index with a toctree, chapters, genindex, search,
    and appendices in a hidden toctree, reached only through ``<link rel="next">``."""

    def __init__(self, ctx: Context, root: str, count: int) -> None:
        self.ctx, self.root = ctx, root
        self.entry = f"{root}index.html"
        self.chapters = [f"{root}{slug}.html" for slug in _slugs(max(count - 5, 3))]
        self.appendices = [f"{root}appendix-{letter}.html" for letter in "ab"]
        self.genindex, self.search = f"{root}genindex.html", f"{root}search.html"
        self.svg = ""
        ctx.pool.extend(self.chapters)
        for url in self.chapters + self.appendices:
            ctx.titles[url] = url.rsplit("/", 1)[-1][:-5].replace("-", " ").title()

    def write(self) -> None:
        order = [self.entry, *self.chapters, *self.appendices]
        for i, url in enumerate(order):
            prev = order[i - 1] if i else None
            nxt = order[i + 1] if i + 1 < len(order) else None
            self._page(url, prev, nxt)
        self._genindex()
        self._search()

    def _head(self, refs: Refs, title: str, prev: str | None, nxt: str | None) -> str:
        static = f"{self.root}_static/"
        lines = [
            '<!DOCTYPE html>\n\n<html lang="en" data-content_root="./">\n  <head>',
            '    <meta charset="utf-8" />',
            '    <meta name="viewport" content="width=device-width, initial-scale=1.0" />',
            f"    <title>{escape(title)} &#8212; Xyleme 2.1 documentation</title>",
            '    <link rel="stylesheet" type="text/css" '
            f'href="{refs.spell(static + "pygments.css?v=d1102ebc")}" />',
            '    <link rel="stylesheet" type="text/css" '
            f'href="{refs.spell(static + "basic.css?v=c058f7c8")}" />',
            f'    <script src="{refs.spell(static + "doctools.js?v=888ff710")}"></script>',
            f'    <link rel="icon" href="{refs.spell(static + "favicon.ico")}"/>',
            '    <link rel="index" title="Index" '
            f'href="{refs.href(self.genindex, "html:link")}" />',
            '    <link rel="search" title="Search" '
            f'href="{refs.href(self.search, "html:link")}" />',
        ]
        if nxt:
            lines.append(
                f'    <link rel="next" title="{escape(self.ctx.title(nxt))}" '
                f'href="{refs.href(nxt, "html:link-next")}" />'
            )
        if prev:
            lines.append(
                f'    <link rel="prev" title="{escape(self.ctx.title(prev))}" '
                f'href="{refs.href(prev, "html:link-prev")}" />'
            )
        return "\n".join(lines) + "\n  </head><body>\n"

    def _page(self, url: str, prev: str | None, nxt: str | None) -> None:
        ctx, refs = self.ctx, Refs(url)
        title = "Welcome to Xyleme" if url == self.entry else ctx.title(url)
        anchor = title.lower().replace(" ", "-")
        body = [
            '    <div class="document"><div class="documentwrapper"><div class="bodywrapper">',
            '      <div class="body" role="main">',
            f'  <section id="{anchor}">',
            f'<h1>{escape(title)}<a class="headerlink" href="#{anchor}" '
            'title="Link to this heading">¶</a></h1>',
            f"<p>{ctx.paragraph()}</p>",
        ]
        if url == self.entry:
            body.append('<div class="toctree-wrapper compound"><ul>')
            body += [
                f'<li class="toctree-l1"><a class="reference internal" '
                f'href="{refs.href(c, "html:a")}">{escape(ctx.title(c))}</a></li>'
                for c in self.chapters
            ]
            body.append("</ul></div>")
        else:
            body.append(_cross_refs(ctx, refs, ctx.rng.randint(1, 4)))
            body.append(
                '<p>See the <a class="reference external" '
                'href="https://docs.python.org/3/library/asyncio.html">asyncio</a> docs.</p>'
            )
            if self.svg and ctx.rng.random() < 0.1:
                body.append(
                    f'<figure class="align-default"><img alt="architecture" '
                    f'src="{refs.href(self.svg, "html:img-svg")}" /></figure>'
                )
            if ctx.rng.random() < 0.2:
                png = f"{self.root}_images/pipeline.png"
                body.append(f'<img alt="pipeline" src="{refs.spell(png)}" />')
        body.append(f"<p>{ctx.paragraph(3)}</p>\n  </section>\n      </div></div></div></div>")
        body.append(
            '    <div class="sphinxsidebar" role="navigation"><h3>'
            f'<a href="{refs.href(self.entry, "html:a")}">Table of Contents</a></h3>'
            f'<ul><li><a class="reference internal" href="#{anchor}">{escape(title)}</a></li>'
            "</ul></div>\n  </body>\n</html>\n"
        )
        ctx.serve(
            refs, self._head(refs, title, prev, nxt) + "\n".join(body), HTML, "sphinx", is_xml=False
        )

    def _genindex(self) -> None:
        refs = Refs(self.genindex)
        entries = "\n".join(
            f'<li><a href="{refs.href(c, "html:a")}#index-0">{escape(self.ctx.title(c))}</a></li>'
            for c in sorted(self.chapters)
        )
        body = (
            '<h1 id="index">Index</h1>\n<table class="indextable genindextable"><tr><td><ul>\n'
            f"{entries}\n</ul></td></tr></table>\n</body></html>\n"
        )
        self.ctx.serve(
            refs, self._head(refs, "Index", None, None) + body, HTML, "sphinx", is_xml=False
        )

    def _search(self) -> None:
        refs = Refs(self.search)
        body = (
            '<h1 id="search-documentation">Search</h1>\n<noscript><div class="admonition '
            'warning"><p>Please activate JavaScript to enable the search functionality.</p>'
            '</div></noscript>\n<form action="" method="get"><input type="text" name="q" />'
            "</form>\n</body></html>\n"
        )
        self.ctx.serve(
            refs, self._head(refs, "Search", None, None) + body, HTML, "sphinx", is_xml=False
        )


class Javadoc:
    """Javadoc 8 output: a frameset (``frame src``), package and class pages, and the
    "Frames" links every class page carries (``index.html?pkg/Class.html``)."""

    PACKAGES = ("crawler", "loader", "metadata", "ranking", "refresh")

    def __init__(self, ctx: Context, root: str, count: int) -> None:
        self.ctx, self.root = ctx, root
        self.entry = f"{root}index.html"
        self.frames = [f"{root}overview-frame.html", f"{root}allclasses-frame.html"]
        self.overview = f"{root}overview-summary.html"
        per_package = max((count - 8) // (len(self.PACKAGES) * 2), 1)
        self.classes: dict[str, list[str]] = {}
        for number, package in enumerate(self.PACKAGES):
            names = [f"{s.title().replace('-', '')}{number}" for s in _slugs(per_package)]
            folder = f"{root}org/xyleme/{package}/"
            self.classes[package] = [f"{folder}{name}.html" for name in names]
            ctx.pool.extend(self.classes[package])
            for url in self.classes[package]:
                ctx.titles[url] = url.rsplit("/", 1)[-1][:-5]

    def write(self) -> None:
        ctx = self.ctx
        refs = Refs(self.entry)
        frames = (
            '<frameset cols="20%,80%" title="Documentation frame">\n<frameset rows="30%,70%">\n'
            f'<frame src="{refs.href(self.frames[0], "html:frame")}" name="packageListFrame">\n'
            f'<frame src="{refs.href(self.frames[1], "html:frame")}" name="packageFrame">\n'
            f'</frameset>\n<frame src="{refs.href(self.overview, "html:frame")}" '
            'name="classFrame" scrolling="yes">\n<noframes><h2>Frame Alert</h2></noframes>\n'
            "</frameset>\n</html>\n"
        )
        ctx.serve(
            refs,
            self._doctype("Frameset") + "<head><title>Xyleme API</title></head>\n" + frames,
            HTML,
            "javadoc",
            is_xml=False,
        )
        for url in self.classes_flat():
            self._frames_copy(url)
        self._list(self.frames[0], [self._summary(p) for p in self.PACKAGES], "packageFrame")
        self._list(self.frames[1], self.classes_flat(), "classFrame")
        self._list(self.overview, [self._summary(p) for p in self.PACKAGES], None)
        for package, classes in self.classes.items():
            self._list(self._summary(package), classes, None)
            for url in classes:
                self._class(url, package)

    def classes_flat(self) -> list[str]:
        return [url for classes in self.classes.values() for url in classes]

    def _summary(self, package: str) -> str:
        return f"{self.root}org/xyleme/{package}/package-summary.html"

    @staticmethod
    def _doctype(kind: str) -> str:
        dtd = "frameset.dtd" if kind == "Frameset" else "loose.dtd"
        return (
            f'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 {kind}//EN" '
            f'"http://www.w3.org/TR/html4/{dtd}">\n<!-- NewPage -->\n<html lang="en">\n'
        )

    def _frames_copy(self, url: str) -> None:
        """``index.html?org/…/X.html``: the frameset again, its class frame on X."""
        framed = f"{self.entry}?{url[len(self.root) :]}"
        refs = Refs(framed)
        body = (
            f'<frameset cols="20%,80%"><frame src="{refs.href(self.frames[1], "html:frame")}" '
            f'name="packageFrame"><frame src="{refs.href(url, "html:frame")}" '
            'name="classFrame"></frameset></html>\n'
        )
        self.ctx.serve(refs, self._doctype("Frameset") + body, HTML, "javadoc", is_xml=False)

    def _list(self, url: str, targets: list[str], frame: str | None) -> None:
        refs = Refs(url)
        target = f' target="{frame}"' if frame else ""
        items = "\n".join(
            f'<li><a href="{refs.href(t, "html:a")}" title="class in org.xyleme"{target}>'
            f"{escape(self.ctx.title(t))}</a></li>"
            for t in targets
        )
        style = refs.spell(f"{self.root}stylesheet.css")
        head = (
            f'<head>\n<title>{escape(self.ctx.title(url))}</title>\n<link rel="stylesheet" '
            f'type="text/css" href="{style}" title="Style">\n</head>\n'
        )
        body = (
            f'<body>\n<div class="indexContainer">\n<ul title="Classes">\n{items}\n</ul>\n'
            "</div>\n</body>\n</html>\n"
        )
        self.ctx.serve(
            refs, self._doctype("Transitional") + head + body, HTML, "javadoc", is_xml=False
        )

    def _class(self, url: str, package: str) -> None:
        ctx, refs = self.ctx, Refs(url)
        name = ctx.title(url)
        framed = f"{self.entry}?{url[len(self.root) :]}"
        see = "\n".join(
            f'<dd><a href="{refs.href(t, "html:a")}"><code>{escape(ctx.title(t))}</code></a></dd>'
            for t in ctx.pick(ctx.rng.randint(1, 3), url)
        )
        body = (
            f"<head>\n<title>{name}</title>\n"
            '<link rel="stylesheet" type="text/css" '
            f'href="{refs.spell(self.root + "stylesheet.css")}" title="Style">\n'
            '<script type="text/javascript" '
            f'src="{refs.spell(self.root + "script.js")}"></script>\n'
            "</head>\n<body>\n"
            '<div class="topNav"><ul class="navList" title="Navigation">\n'
            f'<li><a href="{refs.href(self.overview, "html:a")}">Overview</a></li>\n'
            f'<li><a href="{refs.href(self._summary(package), "html:a")}">Package</a></li>\n'
            f'<li><a href="{refs.href(framed, "html:a")}" target="_top">Frames</a></li>\n'
            f'<li><a href="{refs.href(url, "html:a")}" target="_top">No&nbsp;Frames</a></li>\n'
            "</ul></div>\n"
            f'<div class="header"><div class="subTitle">org.xyleme.{package}</div>\n'
            f'<h2 title="Class {name}" class="title">Class {name}</h2></div>\n'
            '<div class="contentContainer"><ul class="inheritance"><li><a href="https://'
            'docs.oracle.com/javase/8/docs/api/java/lang/Object.html?is-external=true" '
            'title="class or interface in java.lang">java.lang.Object</a></li></ul>\n'
            f'<div class="block">{ctx.paragraph()}</div>\n<dl><dt><span class="seeLabel">'
            f"See Also:</span></dt>\n{see}\n</dl></div>\n</body>\n</html>\n"
        )
        ctx.serve(refs, self._doctype("Transitional") + body, HTML, "javadoc", is_xml=False)


class MkDocs:
    """MkDocs Material with directory URLs: navigation per section (the current page a
    self-link), ``rel=canonical/prev/next``, an ``iframe`` and an ``<object>`` SVG."""

    def __init__(self, ctx: Context, root: str, count: int) -> None:
        self.ctx, self.root = ctx, root
        self.entry = root
        groups = ("getting-started", "user-guide", "reference", "operations")
        per_group = max((count - 2) // len(groups), 2)
        self.groups = {g: [f"{root}{g}/{slug}/" for slug in _slugs(per_group)] for g in groups}
        self.embed = f"{root}embed/crawl-demo.html"
        self.svg = ""
        for url in self.pages():
            ctx.titles[url] = url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ").capitalize()
            ctx.pool.append(url)

    def pages(self) -> list[str]:
        return [url for urls in self.groups.values() for url in urls]

    def write(self) -> None:
        order = [self.entry, *self.pages()]
        for i, url in enumerate(order):
            self._page(
                url, order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None
            )
        refs = Refs(self.embed)
        self.ctx.serve(
            refs,
            f"<!doctype html><title>Crawl demo</title><p>{self.ctx.paragraph(2)}</p>\n",
            HTML,
            "mkdocs",
            is_xml=False,
        )

    def _nav(self, refs: Refs, url: str) -> str:
        items = []
        for group, pages in self.groups.items():
            items.append(
                f'<li class="md-nav__item md-nav__item--nested"><a href="'
                f'{refs.href(pages[0], "html:a")}" class="md-nav__link">'
                f"{group.replace('-', ' ').title()}</a>"
            )
            if url in pages:
                items.append('<nav class="md-nav"><ul class="md-nav__list">')
                for page in pages:
                    active = " md-nav__link--active" if page == url else ""
                    items.append(
                        f'<li class="md-nav__item"><a href="{refs.href(page, "html:a")}"'
                        f' class="md-nav__link{active}">{escape(self.ctx.title(page))}</a></li>'
                    )
                items.append("</ul></nav>")
            items.append("</li>")
        return (
            '<nav class="md-nav md-nav--primary"><ul class="md-nav__list">'
            + "".join(items)
            + "</ul></nav>"
        )

    def _page(self, url: str, prev: str | None, nxt: str | None) -> None:
        ctx, refs = self.ctx, Refs(url)
        title = "Xyleme Guide" if url == self.entry else ctx.title(url)
        assets = f"{self.root}assets/"
        head = [
            '<!doctype html>\n<html lang="en" class="no-js">\n  <head>',
            '    <meta charset="utf-8">',
            '    <meta name="viewport" content="width=device-width,initial-scale=1">',
            '    <link rel="canonical" '
            f'href="{refs.href(url, "html:link-canonical", style="absolute")}">',
        ]
        if prev:
            head.append(f'    <link rel="prev" href="{refs.href(prev, "html:link-prev")}">')
        if nxt:
            head.append(f'    <link rel="next" href="{refs.href(nxt, "html:link-next")}">')
        head += [
            f'    <link rel="icon" href="{refs.spell(assets + "images/favicon.png")}">',
            '    <meta name="generator" content="mkdocs-1.5.3, mkdocs-material-9.4.8">',
            f"    <title>{escape(title)} - Xyleme Guide</title>",
            '    <link rel="stylesheet" '
            f'href="{refs.spell(assets + "stylesheets/main.50c56a3b.min.css")}">',
            "  </head>",
        ]
        body = [
            '  <body dir="ltr">',
            self._nav(refs, url),
            '<div class="md-content" data-md-component="content">'
            '<article class="md-content__inner md-typeset">',
            f'<h1 id="{title.lower().replace(" ", "-")}">{escape(title)}</h1>',
            f"<p>{ctx.paragraph()}</p>",
            _cross_refs(ctx, refs, ctx.rng.randint(1, 3)),
        ]
        if url == self.entry:
            body.append(
                f'<iframe src="{refs.href(self.embed, "html:iframe")}" width="600"></iframe>'
            )
        if self.svg and ctx.rng.random() < 0.1:
            body.append(
                f'<object data="{refs.href(self.svg, "html:object-svg")}" '
                'type="image/svg+xml"></object>'
            )
        body += [
            "</article></div>",
            f'<script src="{refs.spell(assets + "javascripts/bundle.d7c377c4.min.js")}"></script>',
            "  </body>\n</html>\n",
        ]
        ctx.serve(refs, "\n".join(head + body), HTML, "mkdocs", is_xml=False)
