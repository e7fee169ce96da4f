"""The site's front door and syndication: portal, blog with Atom and RSS, sitemaps, robots.

The blog's index lists only its latest posts; older ones are reached through the Atom feed
(``<link rel="alternate" href>``) or the RSS feed (``<link>`` text). robots.txt names a
sitemap index (``<sitemap><loc>``) whose urlsets (``<url><loc>``) list, besides pages the
links reach, release notes no page links to.
"""

from __future__ import annotations

from html import escape

from xyleme.sitegen.context import Context
from xyleme.sitegen.model import Response
from xyleme.sitegen.refs import Refs

_HTML = "text/html; charset=utf-8"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


class Blog:
    """``/blog/``: an index of the latest posts, feeds for the rest."""

    LATEST = 4

    def __init__(self, ctx: Context, origin: str, count: int) -> None:
        self.ctx, self.root = ctx, f"{origin}/blog/"
        self.entry = f"{self.root}index.html"
        self.atom, self.rss = f"{self.root}atom.xml", f"{self.root}rss.xml"
        self.posts = [
            f"{self.root}{2024 - i // 12}/{12 - i % 12:02d}/release-{count - i}.html"
            for i in range(max(count, self.LATEST + 4))
        ]
        ctx.pool.extend(self.posts[: self.LATEST])

    def write(self) -> None:
        ctx, refs = self.ctx, Refs(self.entry)
        latest = "\n".join(
            f'<article><h2><a href="{refs.href(p, "html:a")}">'
            f"{escape(ctx.title(p))}</a></h2></article>"
            for p in self.posts[: self.LATEST]
        )
        ctx.serve(
            refs,
            (
                '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Blog</title>\n'
                f'<link rel="alternate" type="application/atom+xml" title="Atom" '
                f'href="{refs.href(self.atom, "html:link-alternate")}">\n'
                f'<link rel="alternate" type="application/rss+xml" title="RSS" '
                f'href="{refs.href(self.rss, "html:link-alternate")}">\n'
                f"</head><body><h1>Release notes</h1>\n{latest}\n</body></html>\n"
            ),
            _HTML,
            "blog",
            is_xml=False,
        )
        older = self.posts[self.LATEST :]
        self._atom(self.posts[: self.LATEST] + older[0::2])
        self._rss(self.posts[: self.LATEST] + older[1::2])
        for post in self.posts:
            refs = Refs(post)
            ctx.serve(
                refs,
                (
                    f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>'
                    f"{escape(ctx.title(post))}</title></head><body><article><p>{ctx.paragraph()}</p>"
                    f'<p><a href="{refs.href(self.entry, "html:a")}">All posts</a></p></article>'
                    "</body></html>\n"
                ),
                _HTML,
                "blog",
                is_xml=False,
            )

    def _atom(self, posts: list[str]) -> None:
        refs = Refs(self.atom)
        entries = "\n".join(
            f"<entry><title>{escape(self.ctx.title(p))}</title><id>{escape(p)}</id>"
            '<link rel="alternate" type="text/html" '
            f'href="{refs.href(p, "atom:link", style="absolute")}"/>'
            "<updated>2024-05-01T12:00:00Z</updated></entry>"
            for p in posts
        )
        self.ctx.serve(
            refs,
            (
                '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
                f"<title>Xyleme release notes</title><id>{escape(self.atom)}</id>\n"
                f'<link rel="self" href="{self.atom}"/>\n'  # the feed's own address, no link
                f"<updated>2024-05-01T12:00:00Z</updated>\n{entries}\n</feed>\n"
            ),
            "application/atom+xml",
            "feed",
            is_xml=True,
        )

    def _rss(self, posts: list[str]) -> None:
        refs = Refs(self.rss)
        items = "\n".join(
            f"<item><title>{escape(self.ctx.title(p))}</title>"
            f"<link>{refs.href(p, 'rss:link', style='absolute')}</link></item>"
            for p in posts
        )
        blog = refs.href(self.entry, "rss:link", style="absolute")
        self.ctx.serve(
            refs,
            (
                '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel>\n'
                f"<title>Xyleme release notes</title><link>{blog}</link>\n"
                f"<description>Releases</description>\n{items}\n</channel></rss>\n"
            ),
            "application/rss+xml",
            "feed",
            is_xml=True,
        )


class Sitemaps:
    """robots.txt → sitemap index → urlsets (one made by MkDocs), and orphan pages."""

    def __init__(self, ctx: Context, origin: str, orphans: int) -> None:
        self.ctx, self.origin = ctx, origin
        self.index = f"{origin}/sitemap_index.xml"
        self.pages = f"{origin}/sitemaps/pages.xml"
        self.orphans = [f"{origin}/notes/release-note-{i:02d}.html" for i in range(orphans)]

    def write(
        self, guide_sitemap: str, guide_pages: list[str], disallowed: tuple[str, ...]
    ) -> None:
        site = self.ctx.site
        robots = "User-agent: *\n" + "".join(f"Disallow: {p}\n" for p in disallowed)
        robots += f"\nSitemap: {self.index}\n"
        site.add(f"{self.origin}/robots.txt", Response(200, robots.encode(), "text/plain"))
        site.sitemaps.append(self.index)
        site.disallowed = disallowed
        refs = Refs(self.index)
        maps = "\n".join(
            f"<sitemap><loc>{refs.href(m, 'sitemap:loc', style='absolute')}</loc>"
            "<lastmod>2024-05-01</lastmod></sitemap>"
            for m in (self.pages, guide_sitemap)
        )
        self.ctx.serve(
            refs,
            (
                f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{SITEMAP_NS}">'
                f"\n{maps}\n</sitemapindex>\n"
            ),
            "application/xml",
            "sitemap",
            is_xml=True,
        )
        listed = self.orphans + self.ctx.pool[:20]
        self._urlset(self.pages, listed)
        self._urlset(guide_sitemap, guide_pages)
        for url in self.orphans:
            refs = Refs(url)
            self.ctx.serve(
                refs,
                (
                    f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Note</title></head>'
                    f"<body><p>{self.ctx.paragraph(2)}</p></body></html>\n"
                ),
                _HTML,
                "orphan",
                is_xml=False,
            )

    def _urlset(self, url: str, pages: list[str]) -> None:
        refs = Refs(url)
        entries = "\n".join(
            f"<url><loc>{refs.href(p, 'sitemap:loc', style='absolute')}</loc>"
            "<changefreq>weekly</changefreq></url>"
            for p in pages
        )
        self.ctx.serve(
            refs,
            (
                f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n'
                f"{entries}\n</urlset>\n"
            ),
            "application/xml",
            "sitemap",
            is_xml=True,
        )


def portal(ctx: Context, url: str, sections: dict[str, str], svg: str, umlaut: str) -> None:
    """The site's home page (the seed): one link to each section, an SVG by ``<img>``, the
    UTF-8 path written raw."""
    refs = Refs(url)
    items = "\n".join(
        f'<li><a href="{refs.href(entry, "html:a", style="absolute-path")}">{escape(name)}</a></li>'
        for name, entry in sections.items()
    )
    ctx.serve(
        refs,
        (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>Xyleme documentation</title></head><body><h1>Xyleme documentation</h1>\n"
            f'<p><img src="{refs.href(svg, "html:img-svg")}" alt="architecture"></p>\n'
            f"<ul>\n{items}\n"
            f'<li><a href="{refs.href(umlaut, "html:a", style="absolute-path")}">Päge</a></li>\n'
            "</ul></body></html>\n"
        ),
        _HTML,
        "portal",
        is_xml=False,
    )
