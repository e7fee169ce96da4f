"""HTML encodings and URL spelling (issue 16, "Encodings"): the HTML Standard's encoding
sniffing, every Encoding Standard label, pages served on 127.0.0.1 in each case yield their
links, and URLs percent-encoded once (the ``p%C3%83%C2%A4ge`` bug)."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metadata import InvalidURL, canonicalize_url
from tests import crawler_fixtures
from tests.crawler_site import Page
from xyleme.crawler.htmlencoding import _ENCODINGS, _LABELS, decode_html, lookup, prescan
from xyleme.crawler.htmlparse import extract_links

# ---------------------------------------------------------------------- labels


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("utf8", "utf-8"),
        ("unicode-1-1-utf-8", "utf-8"),
        ("x-unicode20utf8", "utf-8"),
        (" LATIN1\t", "windows-1252"),
        ("us-ascii", "windows-1252"),
        ("iso-8859-1", "windows-1252"),
        ("iso_8859-9:1989", "windows-1254"),
        ("tis-620", "windows-874"),
        ("logical", "iso-8859-8-i"),
        ("koi8-ru", "koi8-u"),
        ("x-mac-ukrainian", "x-mac-cyrillic"),
        ("gb2312", "gbk"),
        ("x-x-big5", "big5"),
        ("ms_kanji", "shift_jis"),
        ("csiso2022jp", "iso-2022-jp"),
        ("ks_c_5601-1987", "euc-kr"),
        ("iso-2022-kr", "replacement"),
        ("utf-16", "utf-16le"),
        ("unicodefffe", "utf-16be"),
        ("x-user-defined", "x-user-defined"),
        ("utf-7", None),
        ("utf-32", None),
        ("cp037", None),
        ("", None),
    ],
)
def test_encoding_labels_are_the_encoding_standards(label, name):
    assert lookup(label) == name


def test_every_label_names_an_encoding_python_can_decode():
    for name, (codec, _) in _ENCODINGS.items():
        if name not in ("replacement", "x-user-defined"):
            codecs.lookup(codec)
    for label in _LABELS:
        assert decode_html(b"<a href=x>y</a>", label).encoding == _LABELS[label]


# ---------------------------------------------------------------------- sniffing steps


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"<meta charset=koi8-r>", "koi8-r"),
        (b"<META CHARSET='Shift_JIS'>", "shift_jis"),
        (b"<meta charset=utf-16be>", "utf-8"),
        (b"<meta charset=x-user-defined>", "windows-1252"),
        (b'<meta http-equiv="Content-Type" content="text/html; charset=euc-jp">', "euc-jp"),
        (b'<meta content="text/html; charset=euc-jp">', None),  # no pragma
        (b'<meta http-equiv=content-type content="text/html">', None),
        (b"<meta charset=bogus><meta charset=big5>", "big5"),
        (b"<meta charset=big5 charset=koi8-r>", "big5"),  # the first attribute of a name
        (b"<!-- <meta charset=koi8-r> --><meta charset=gbk>", "gbk"),
        (b"<title a='<meta charset=koi8-r>'></title><meta charset=gb18030>", "gb18030"),
        (b"<?xml version='1.0' encoding='windows-1251'?><html>", "windows-1251"),
        (b"<\x00?\x00x\x00m\x00l\x00", "utf-16le"),
        (b"<p>no declaration at all</p>", None),
        (b"<!-- a comment that never ends <meta charset=koi8-r>", None),
    ],
)
def test_the_meta_prescan(head, expected):
    assert prescan(head) == expected


def test_the_prescan_reads_only_the_first_1024_bytes():
    late = b"<p>" + b"x" * 1100 + b"<meta charset=koi8-r>"
    assert decode_html(late).encoding == "windows-1252"
    assert decode_html(late[:1000] + b"<meta charset=koi8-r>").encoding == "koi8-r"


def test_the_steps_come_in_the_standards_order():
    text = "<meta charset=windows-1251><p>привет мир, это страница</p>"
    body = text.encode("cp1251")
    assert decode_html(codecs.BOM_UTF8 + text.encode(), "koi8-r").source == "bom"
    assert decode_html(body, "windows-1251").source == "http"
    assert decode_html(body, "no-such-label").source == "meta"  # an unknown label is ignored
    assert decode_html(body).encoding == "windows-1251"
    plain = "<p>привет мир, это страница на русском языке</p>".encode("cp1251")
    assert decode_html(plain).source == "detected"
    assert decode_html(plain).encoding == "windows-1251"
    assert decode_html(b"<p>plain ascii</p>").source == "default"


def test_undecodable_bytes_follow_the_standard():
    assert decode_html(b"\x81", "windows-1252").utf8 == "\x81".encode()  # a C1 control
    assert decode_html(b"\x80", "gbk").utf8 == "€".encode()
    assert decode_html(b"<a href=x>", "iso-2022-kr").utf8 == "\ufffd".encode()  # replacement
    assert decode_html(b"\xff", "x-user-defined").utf8 == "\uf7ff".encode()


# ---------------------------------------------------------------------- pages on 127.0.0.1

JA = "日本語のページです。リンクを辿ってください。"
RU = "Русская страница со ссылкой"

# (name, body, Content-Type, href as written) -> the page must yield the link, spelled once
CASES = [
    ("http-utf8", f"<a href='/p\u00e4ge'>{RU}</a>".encode(), "text/html; charset=utf-8",
     "/p%C3%A4ge"),
    ("undeclared-utf8", f"<p>{RU}</p><a href='/p\u00e4ge'>x</a>".encode(), "text/html",
     "/p%C3%A4ge"),
    ("meta-utf16", b"<meta charset='utf-16'><a href='/next.html'>next</a>", "text/html",
     "/next.html"),
    ("meta-iso-2022-jp",
     f"<meta charset=iso-2022-jp><p>{JA}</p><a href='/ja.html'>{JA}</a>".encode("iso2022_jp"),
     "text/html", "/ja.html"),
    ("http-iso-2022-jp", f"<p>{JA}</p><a href='/\u65e5.html'>x</a>".encode("iso2022_jp"),
     "text/html; charset=ISO-2022-JP", "/%E6%97%A5.html"),
    ("undeclared-iso-2022-jp", f"<p>{JA}</p><a href='/jp2.html'>x</a>".encode("iso2022_jp"),
     "text/html", "/jp2.html"),
    ("http-beats-meta",
     f"<meta charset=utf-8><p>{RU}</p><a href='/\u0441\u0442\u0440'>x</a>".encode("cp1251"),
     "text/html; charset=windows-1251", "/%D1%81%D1%82%D1%80"),
    ("bom-beats-http", codecs.BOM_UTF16_LE + "<a href='/bom.html'>x</a>".encode("utf-16-le"),
     "text/html; charset=iso-8859-1", "/bom.html"),
    ("http-equiv-shift_jis",
     (f"<meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'><p>{JA}</p>"
      "<a href='/\u30da\u30fc\u30b8'>x</a>").encode("cp932"),
     "text/html", "/%E3%83%9A%E3%83%BC%E3%82%B8"),
    ("query-in-page-encoding", "<a href='/s?q=caf\u00e9&amp;r=\u20ac'>x</a>".encode("cp1252"),
     "text/html; charset=windows-1252", "/s?q=caf%E9&r=%80"),
    ("query-unencodable", b"<a href='/s?q=&#19968;'>x</a>",
     "text/html; charset=latin1", "/s?q=%26%2319968%3B"),
    ("label-ks_c_5601", "<a href='/k?q=\ud55c'>x</a>".encode("cp949"),
     "text/html; charset=ks_c_5601-1987", "/k?q=%C7%D1"),
    ("x-user-defined", b"<meta charset=x-user-defined><a href='/caf\xe9'>x</a>", "text/html",
     "/caf%C3%A9"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body", "content_type", "href"), CASES)
def test_each_encoding_case_yields_its_links(name, body, content_type, href):
    found = extract_links(body, "http://a.example/", content_type=content_type)
    assert f"http://a.example{href}" in found.links, (name, found.links, found.encoding)


async def test_a_crawl_of_every_encoding_case_reads_every_link(site, md):
    index = [f"/{name}" for name, *_ in CASES]
    home = site.html("enc.test", "/", index)
    site.html("enc.test", "/p%C3%A4ge", [])
    for name, body, content_type, _ in CASES:
        site.add("enc.test", f"/{name}", Page(body, 200, content_type))
    crawler = crawler_fixtures.make_crawler(md, max_scout_depth=2)
    crawler.submit(home)
    await crawler.run()
    for name, _, _, href in CASES:
        page = md.page_by_url(site.url("enc.test", f"/{name}"))
        children = md.urls_of(md.children(page.url_id).tolist())
        assert site.url("enc.test", href) in children, (name, children)
    target = site.url("enc.test", "/p%C3%A4ge")
    assert md.page_by_url(target).status == 200  # requested as spelled, once
    assert not any("%C3%83" in url for url in md.urls_of(range(1, md.max_url_id() + 1)))


async def test_a_redirect_to_a_utf8_location_is_encoded_once(site, md):
    site.add("r.test", "/old", Page(b"", 301, headers={"Location": "/n\u00e4u"}))
    site.html("r.test", "/n%C3%A4u", [])
    crawler = crawler_fixtures.make_crawler(md)
    crawler.submit(site.url("r.test", "/old"))
    await crawler.run()
    old = md.page_by_url(site.url("r.test", "/old"))
    assert md.url_of(old.redirect_to) == site.url("r.test", "/n%C3%A4u")
    assert md.page_by_url(site.url("r.test", "/n%C3%A4u")).status == 200


# ---------------------------------------------------------------------- URL spelling


def test_the_double_encoding_bug_is_pinned():
    # issue 16: a UTF-8 non-ASCII path became p%C3%83%C2%A4ge (UTF-8 read as latin-1)
    body = "<html><body><a href='/p\u00e4ge'>page</a></body></html>".encode()
    for content_type in ("text/html", "text/html; charset=utf-8", "text/html; charset=UTF8"):
        found = extract_links(body, "http://a.example/", content_type=content_type)
        assert found.links == ["http://a.example/p%C3%A4ge"], content_type
    assert canonicalize_url("http://a.example/p%C3%A4ge") == "http://a.example/p%C3%A4ge"
    assert canonicalize_url("http://a.example/p\u00e4ge") == "http://a.example/p%C3%A4ge"


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://B\u00fccher.Example/", "http://xn--bcher-kva.example/"),
        ("http://fa\u00df.de/", "http://xn--fa-hia.de/"),
        ("  http://a.example/a\n/b\t?q=1  ", "http://a.example/a/b?q=1"),
        ("http://a.example\\dir\\page?x=\\", "http://a.example/dir/page?x=%5C"),
        ("http://a.example/?a=b c&d=e+f", "http://a.example/?a=b%20c&d=e+f"),
        ("http://a.example/\u00e4?\u00e4=\u00f6#\u00e4", "http://a.example/%C3%A4?%C3%A4=%C3%B6"),
        ("http://a.example/%7euser/%2F%25", "http://a.example/~user/%2F%25"),
    ],
)
def test_urls_follow_the_url_standard(url, canonical):
    assert canonicalize_url(url) == canonical


def test_a_query_is_encoded_in_the_pages_encoding_and_the_path_in_utf8():
    url = "http://a.example/\u00e9t\u00e9?q=\u00e9t\u00e9"
    assert canonicalize_url(url, "cp1252") == "http://a.example/%C3%A9t%C3%A9?q=%E9t%E9"
    assert (
        canonicalize_url(url, "cp932")
        == "http://a.example/%C3%A9t%C3%A9?q=%26%23233%3Bt%26%23233%3B"
    )
    assert canonicalize_url(url) == "http://a.example/%C3%A9t%C3%A9?q=%C3%A9t%C3%A9"


URL_TEXT = st.text(
    alphabet=st.sampled_from(list("aZ09-._~!$&'()*+,;=:@/?#% \\\t\"<>[]{}|^`\u00e4\u20ac\u4e00")),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(URL_TEXT, st.sampled_from(["utf-8", "cp1252", "cp932", "iso2022_jp_ext"]))
def test_canonicalising_twice_changes_nothing(tail, encoding):
    try:
        once = canonicalize_url(f"http://a.example/{tail}", encoding)
    except InvalidURL:
        return
    assert once.isascii()
    assert canonicalize_url(once) == once
    assert canonicalize_url(once, encoding) == once


MARKUP_BYTES = st.lists(
    st.sampled_from(
        [b"<", b">", b"<meta", b" charset", b"=", b"'", b'"', b"<!--", b"-->", b"<?xml",
         b" encoding=", b"utf-16", b"koi8-r", b"content=", b"http-equiv", b"/", b"\x00",
         b"\xff\xfe", b"\xef\xbb\xbf", b"\xe4", b"\x1b$B", b"a", b" "]
    ),
    max_size=40,
).map(b"".join)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.one_of(MARKUP_BYTES, st.binary(max_size=200)), st.sampled_from([None, "utf-16", "x"]))
def test_any_bytes_decode_without_an_error(body, charset):
    decoded = decode_html(body, charset)
    if decoded.encoding != "utf-8":  # UTF-8 goes to lxml as it came (malformed: U+FFFD)
        decoded.utf8.decode("utf-8", "surrogatepass")
    assert decoded.encoding in _ENCODINGS
    prescan(body[:1024])
    extract_links(body, "http://a.example/")  # never more than MalformedHTML
