"""Link discovery in XML: every form the issue lists, resolved against xml:base."""

from __future__ import annotations

import pytest

from loader import Loader, LoaderSettings, LoadOutcome
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

URL = "http://xml.test/dir/doc.xml"


@pytest.fixture
def md():
    return FakeMetadata()


def links(tmp_path, md, body, url=URL, **settings):
    loader = Loader(
        tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0), LoaderSettings(**settings)
    )
    result = loader.load(md.id_for(url), url, body, {}, 0.0)
    assert result.outcome is LoadOutcome.STORED, result.reason
    return md.links_of(result.url_id), md.dependencies_of(result.url_id), result


def test_xlink_href(tmp_path, md):
    body = b'<r xmlns:xlink="http://www.w3.org/1999/xlink"><p xlink:href="other.xml"/></r>'
    assert links(tmp_path, md, body)[0] == ["http://xml.test/dir/other.xml"]


def test_xml_stylesheet_is_a_dependency_not_a_link(tmp_path, md):
    body = b'<?xml-stylesheet type="text/xsl" href="/style/site.xsl"?><r/>'
    found, dependencies, _ = links(tmp_path, md, body)
    assert found == []
    assert dependencies == ["http://xml.test/style/site.xsl"]


def test_schema_locations_are_dependencies_not_links(tmp_path, md):
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0))
    body = (
        b'<r xmlns="urn:r" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        b' xsi:schemaLocation="urn:r http://schemas.test/r.xsd"/>'
    )
    doc_id = md.id_for(URL)
    assert loader.load(doc_id, URL, body, {}, 0.0).outcome is LoadOutcome.WAITING
    xsd = b"""<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:r">
      <xs:element name="r"/></xs:schema>"""
    loader.load(md.id_for("http://schemas.test/r.xsd"), "http://schemas.test/r.xsd", xsd, {}, 1)
    assert md.links_of(doc_id) == []
    assert md.dependencies_of(doc_id) == ["http://schemas.test/r.xsd"]


def test_xinclude_href(tmp_path, md):
    body = b'<r xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="part.xml"/></r>'
    assert links(tmp_path, md, body)[0] == ["http://xml.test/dir/part.xml"]


def test_rss_channel_and_item_links(tmp_path, md):
    body = b"""<rss version="2.0"><channel><title>News</title>
      <link>http://news.test/</link>
      <item><title>a</title><link>http://news.test/a.xml</link></item>
      <item><title>b</title><link> /b.xml </link></item>
    </channel></rss>"""
    assert links(tmp_path, md, body)[0] == [
        "http://news.test/",
        "http://news.test/a.xml",
        "http://xml.test/b.xml",
    ]


def test_atom_links_but_rel_self(tmp_path, md):
    """``rel="self"`` names the feed's own address (RFC 4287), whatever URL it was read at:
    no link; every other relation is one."""
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom">
      <link rel="self" href="http://feeds.test/atom.xml"/>
      <link rel="alternate" type="text/html" href="/blog/"/>
      <entry><link href="entries/1.xml"/></entry></feed>"""
    assert links(tmp_path, md, body)[0] == [
        "http://xml.test/blog/",
        "http://xml.test/dir/entries/1.xml",
    ]


def test_an_xhtml_link_to_itself_is_a_child_once(tmp_path, md):
    """XHTML served as XML (PostgreSQL's manual under ``AddType application/xhtml+xml``)
    links to itself as the same page served as HTML does: the self-link counts, once
    (ARCHITECTURE.md "The link matrix"), whichever parser read the page."""
    body = b"""<html xmlns="http://www.w3.org/1999/xhtml"><head>
      <link rel="home" href="doc.xml"/></head><body>
      <a href="doc.xml#top">this page</a><a href="./doc.xml">again</a><a href="b.xml">b</a>
      </body></html>"""
    found, _, result = links(tmp_path, md, body)
    assert found == [URL, "http://xml.test/dir/b.xml"]
    assert result.links == 2


def test_a_feed_link_to_itself_is_not_a_child(tmp_path, md):
    url = "http://feeds.test/atom.xml"
    body = b"""<feed xmlns="http://www.w3.org/2005/Atom">
      <link rel="self" href="http://feeds.test/atom.xml#top"/>
      <link rel="alternate" href="/"/></feed>"""
    found, _, result = links(tmp_path, md, body, url=url)
    assert found == ["http://feeds.test/"]
    assert result.links == 1


SITEMAP = (
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    + b"".join(b"<url><loc>http://xml.test/p%d.xml</loc></url>" % n for n in range(10))
    + b"</urlset>"
)


def test_sitemap_locations(tmp_path, md):
    assert len(links(tmp_path, md, SITEMAP)[0]) == 10


def test_sitemap_capped_at_max_urls(tmp_path, md):
    found, _, result = links(tmp_path, md, SITEMAP, sitemap_max_urls=4)
    assert found == [f"http://xml.test/p{n}.xml" for n in range(4)]
    assert result.notes == ("sitemap capped at 4 URLs (sitemap protocol)",)


def test_streamed_sitemap_capped_at_max_bytes(tmp_path, md):
    found, _, result = links(
        tmp_path,
        md,
        SITEMAP,
        stream_threshold_bytes=64,
        stream_chunk_bytes=128,
        sitemap_max_bytes=200,
    )
    assert 0 < len(found) < 10
    assert result.notes == ("sitemap capped at its first 200 bytes",)


def test_generic_href_and_src(tmp_path, md):
    body = (
        b'<page><img src="pic.svg"/><ref href="http://x.test/y.xml#part"/>'
        b'<ref href="mailto:a@b"/></page>'
    )
    assert links(tmp_path, md, body)[0] == [
        "http://xml.test/dir/pic.svg",
        "http://x.test/y.xml",
    ]


def test_xml_base_is_honoured(tmp_path, md):
    body = b"""<r xml:base="http://base.test/a/">
      <s xml:base="b/"><t href="c.xml"/></s><u href="d.xml"/></r>"""
    assert links(tmp_path, md, body)[0] == [
        "http://base.test/a/b/c.xml",
        "http://base.test/a/d.xml",
    ]


def test_tree_and_stream_paths_find_the_same_links(tmp_path, md):
    body = (
        b'<?xml-stylesheet href="s.xsl"?><r xmlns:xlink="http://www.w3.org/1999/xlink"'
        b' xml:base="http://base.test/">'
        + b"".join(b'<e href="h%d.xml" xlink:href="x%d.xml"/>' % (n, n) for n in range(50))
        + b"</r>"
    )
    tree = links(tmp_path / "tree", md, body)
    stream = links(tmp_path / "stream", md, body, url=URL + "?s", stream_threshold_bytes=64)
    assert len(tree[0]) == 100
    assert tree[:2] == stream[:2]
    assert tree[1] == ["http://xml.test/dir/s.xsl"]


def test_links_capped(tmp_path, md):
    body = b"<r>" + b"".join(b'<a href="%d.xml"/>' % n for n in range(20)) + b"</r>"
    found, _, result = links(tmp_path, md, body, max_links=5)
    assert len(found) == 5
    assert result.notes == ("links capped at 5",)


def test_xml_base_applies_only_from_where_it_is_declared(tmp_path, md):
    body = b"""<r><a href="before.xml"/><s xml:base="http://base.test/s/"><t href="in.xml"/></s>
      <u href="after.xml"/></r>"""
    assert links(tmp_path, md, body)[0] == [
        "http://xml.test/dir/before.xml",
        "http://base.test/s/in.xml",
        "http://xml.test/dir/after.xml",
    ]


SITEMAP_INDEX = (
    b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    b"<sitemap><loc>/maps/a.xml.gz</loc></sitemap><sitemap><loc>http://xml.test/b.xml</loc>"
    b"</sitemap></sitemapindex>"
)


@pytest.mark.parametrize("threshold", [1 << 20, 64])
def test_a_sitemap_index_names_its_entries_as_sitemaps(tmp_path, md, threshold):
    found, _, result = links(tmp_path, md, SITEMAP_INDEX, stream_threshold_bytes=threshold)
    assert found == ["http://xml.test/maps/a.xml.gz", "http://xml.test/b.xml"]
    assert result.sitemaps == ("http://xml.test/maps/a.xml.gz", "http://xml.test/b.xml")
    assert links(tmp_path / "urlset", md, SITEMAP)[2].sitemaps == ()
