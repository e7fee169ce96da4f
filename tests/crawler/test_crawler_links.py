"""What is a link of an HTML page (issue 16, "Links"; ARCHITECTURE "What is a link")."""

from __future__ import annotations

import itertools
from urllib.parse import urljoin

import pytest

from metadata import canonicalize_url
from xyleme.crawler.htmlparse import (
    _RELATIVE_PATH,
    DOCUMENT_RELATIONS,
    RESOURCE_RELATIONS,
    _folder,
    _join,
    extract_links,
    refresh_url,
)

BASE = "http://a.example/dir/page.html"


def links_of(markup: str, url: str = BASE) -> list[str]:
    return extract_links(markup.encode(), url).links


def test_anchors_areas_and_frames_are_links():
    markup = """<a href="a.html">a</a><map><area href="/b" alt=""></map>
        <frameset><frame src="c.html"></frameset><iframe src="//other.example/d"></iframe>"""
    assert links_of(markup) == [
        "http://a.example/dir/a.html",
        "http://a.example/b",
        "http://a.example/dir/c.html",
        "http://other.example/d",
    ]


@pytest.mark.parametrize(
    "rel",
    [
        "next",
        "prev",
        "previous",
        "alternate",
        "canonical",
        "search",
        "index",
        "contents",
        "help",
        "start",
        "first",
        "last",
        "up",
        "chapter",
        "section",
        "subsection",
        "appendix",
        "glossary",
        "bookmark",
        "Next",
        "home next",
    ],
)
def test_link_elements_with_a_document_relation_are_links(rel):
    assert links_of(f'<link rel="{rel}" href="/target">') == ["http://a.example/target"]


@pytest.mark.parametrize(
    "rel",
    [
        "stylesheet",
        "icon",
        "shortcut icon",
        "apple-touch-icon",
        "preload",
        "prefetch",
        "modulepreload",
        "manifest",
        "dns-prefetch",
        "preconnect",
        "alternate stylesheet",
        "unheard-of",
        "",
    ],
)
def test_link_elements_to_resources_are_not_links(rel):
    assert links_of(f'<link rel="{rel}" href="/target">') == []


def test_the_relation_sets_do_not_overlap():
    assert DOCUMENT_RELATIONS.isdisjoint(RESOURCE_RELATIONS)


def test_a_feed_and_a_search_description_are_links():
    markup = """<link rel="alternate" type="application/atom+xml" href="/feed.atom">
        <link rel="search" type="application/opensearchdescription+xml" href="/os.xml">"""
    assert links_of(markup) == ["http://a.example/feed.atom", "http://a.example/os.xml"]


@pytest.mark.parametrize(
    ("content", "url"),
    [
        ("0; url=/moved", "/moved"),
        ("5;URL='next.html'", "next.html"),
        ('3, url="a b.html" ignored', "a b.html"),
        ("0 ; URL = /spaced", "/spaced"),
        ("1; /bare", "/bare"),
        ("0;urlx=y", "urlx=y"),
        ("10", None),
        ("", None),
        ("soon; url=/x", None),
    ],
)
def test_meta_refresh_is_read_as_the_html_standard_says(content, url):
    assert refresh_url(content) == url


def test_a_meta_refresh_is_a_link():
    markup = '<meta http-equiv="Refresh" content="0; URL=../other.html">'
    assert links_of(markup) == ["http://a.example/other.html"]
    assert links_of('<meta http-equiv="refresh" content="30">') == []


def test_the_first_base_href_is_the_base():
    markup = """<base href="http://b.example/x/"><base href="http://c.example/">
        <a href="y">y</a><a href="/z">z</a>"""
    assert links_of(markup) == ["http://b.example/x/y", "http://b.example/z"]
    assert links_of('<base href="javascript:alert(1)"><a href="y">y</a>') == [
        "http://a.example/dir/y"
    ]
    assert links_of('<base target="_top"><base href="../"><a href="y">y</a>') == [
        "http://a.example/y"
    ]


def test_fragments_and_other_schemes_are_not_links():
    markup = """<a href="#top">top</a><a href="  #x">x</a><a href="">self</a>
        <a href="mailto:a@b.example">m</a><a href="javascript:void(0)">j</a>
        <a href="tel:+331">t</a><a href="ftp://f.example/">f</a><a href="data:text/html,x">d</a>
        <a href="page.html#part">part</a>"""
    found = extract_links(markup.encode(), BASE)
    assert found.links == [BASE]  # a page linking to a part of itself links to itself
    assert found.invalid == []


def test_images_objects_and_embeds_count_only_when_they_may_be_xml():
    markup = """<img src="logo.png"><img src="drawing.svg"><img src="chart">
        <img src="icon.svg#frag"><object data="/render.php" type="image/svg+xml"></object>
        <object data="/movie.swf" type="application/x-shockwave-flash"></object>
        <embed src="/map.kml"><embed src="/clip.mp4"><object data="/formula.mml"></object>"""
    assert links_of(markup) == [
        "http://a.example/dir/drawing.svg",
        "http://a.example/dir/chart",
        "http://a.example/dir/icon.svg",
        "http://a.example/render.php",
        "http://a.example/map.kml",
        "http://a.example/formula.mml",
    ]


def test_links_are_read_as_browsers_read_them():
    markup = (
        '<a href=" /a\n\tb ">nl</a><a href="\\back\\slash">bs</a>'
        '<a href="HTTP://A.EXAMPLE:80/c">c</a>'
    )
    assert links_of(markup) == [
        "http://a.example/ab",
        "http://a.example/back/slash",
        "http://a.example/c",
    ]


def test_nofollow_links_are_recorded_but_not_followed():
    markup = """<a rel="nofollow" href="/n">n</a><link rel="next nofollow" href="/m">
        <a href="/f">f</a>"""
    found = extract_links(markup.encode(), BASE)
    assert found.links == ["http://a.example/n", "http://a.example/m", "http://a.example/f"]
    assert found.follow == ["http://a.example/f"]


@pytest.mark.parametrize(
    "base",
    [
        "http://a.example/dir/page.html",
        "http://a.example/dir/sub/",
        "http://a.example/",
        "http://a.example/dir/page.html?q=a/b",
        "http://a.example/a//b/./c/../page.html",
        "http://a.example/a;x/b;p",
        "http://a.example/dir/..",
    ],
)
@pytest.mark.parametrize(
    "raw",
    ["x.html", "../x.html", "../../../x", "..", ".", "./", "x/../../y", "x//y", "x;p?q/../r#f",
     "%2e%2e/x", ".../x", "x/..", "sub/dir/", "?q", "x?", "http:x", "a b", "x/y:z"],
)  # fmt: skip
def test_relative_links_resolve_as_urljoin_does(base: str, raw: str):
    """A relative path is joined to the base's folder without ``urljoin``, to the URL
    ``urljoin`` gives."""
    assert links_of(f'<a href="{raw}">x</a>', base) == [canonicalize_url(urljoin(base, raw))]


@pytest.mark.parametrize("base", ["http://a.example/d/p.html", "https://u@a.example:8080/a;x/b;p"])
def test_relative_paths_are_spelt_as_urljoin_spells_them(base: str):
    """Every relative path of up to four pieces, joined without ``urljoin``, is the very
    string ``urljoin`` makes (the canonical forms' cache sees the same keys)."""
    pieces = ["a", ".", "..", "/", "?", "#", ";", ":", "%2e", ""]
    folder = _folder(base)
    for count in range(1, 5):
        for combination in itertools.product(pieces, repeat=count):
            raw = "".join(combination)
            if raw and _RELATIVE_PATH.match(raw):
                assert _join(folder, raw) == urljoin(base, raw), raw
