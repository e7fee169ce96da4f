"""URL canonicalisation (Map-Data keys) and the refusal of invalid URLs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metadata import MAX_URL_LENGTH, InvalidURL, canonicalize_url

CANONICAL = [
    # scheme and host case
    ("HTTP://Example.COM/", "http://example.com/"),
    ("http://Example.com/A/B", "http://example.com/A/B"),
    ("HTTPS://www.EXAMPLE.org/x", "https://www.example.org/x"),
    # empty path, empty query, fragment
    ("http://example.com", "http://example.com/"),
    ("http://example.com?", "http://example.com/"),
    ("http://example.com/a#frag", "http://example.com/a"),
    ("http://example.com/a?#", "http://example.com/a"),
    ("http://example.com/?a=b#c", "http://example.com/?a=b"),
    ("  http://example.com/a \n", "http://example.com/a"),
    # default ports
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://www.EXAMPLE.com:80", "http://www.example.com/"),
    ("HTTPS://example.com:00443/x", "https://example.com/x"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    ("https://example.com:80/", "https://example.com:80/"),
    ("http://192.168.0.1:80/", "http://192.168.0.1/"),
    ("http://[::1]:80/x", "http://[::1]/x"),
    # dot segments
    ("http://example.com/a/./b", "http://example.com/a/b"),
    ("http://example.com/a/b/../c", "http://example.com/a/c"),
    ("http://example.com/../a", "http://example.com/a"),
    ("http://example.com/a/b/../../..", "http://example.com/"),
    ("http://example.com/a/%2e%2e/b", "http://example.com/b"),
    ("http://example.com/%2E/a", "http://example.com/a"),
    ("http://example.com/a//b", "http://example.com/a//b"),
    # percent-encoding
    ("http://example.com/%7Euser", "http://example.com/~user"),
    ("http://example.com/%41%42c", "http://example.com/ABc"),
    ("http://example.com/%e2%82%ac", "http://example.com/%E2%82%AC"),
    ("http://example.com/€", "http://example.com/%E2%82%AC"),
    ("http://example.com/a b", "http://example.com/a%20b"),
    ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
    ("http://example.com/%zz", "http://example.com/%25zz"),
    ("http://example.com/a?b=%7e&c=%2f", "http://example.com/a?b=~&c=/"),
    # query order and meaning kept
    ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),
    ("http://example.com/?a=1&a=0", "http://example.com/?a=1&a=0"),
    ("http://example.com/?q=a+b", "http://example.com/?q=a+b"),
    ("http://example.com/?q=a%20b", "http://example.com/?q=a%20b"),
    ("http://example.com/?x=%26&y=%3D", "http://example.com/?x=%26&y=%3D"),
    # internationalised domain names
    ("http://münchen.de/", "http://xn--mnchen-3ya.de/"),
    ("http://MÜNCHEN.de/", "http://xn--mnchen-3ya.de/"),
    ("https://例え.jp/パス", "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9"),
    ("http://xn--mnchen-3ya.de/", "http://xn--mnchen-3ya.de/"),
    # user info is part of the request target's authority: kept
    ("http://user@Example.com/", "http://user@example.com/"),
]


@pytest.mark.parametrize(("url", "expected"), CANONICAL)
def test_canonical_form(url, expected):
    assert canonicalize_url(url) == expected


def test_the_table_is_large_enough():
    assert len(CANONICAL) >= 30


@pytest.mark.parametrize(("url", "expected"), CANONICAL)
def test_canonicalisation_is_idempotent(url, expected):
    assert canonicalize_url(expected) == expected


INVALID = [
    ("mailto:someone@example.com", "scheme 'mailto'"),
    ("javascript:alert(1)", "scheme 'javascript'"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("ftp://example.com/", "scheme 'ftp'"),
    ("data:text/html,hi", "scheme 'data'"),
    ("/relative/path", "no scheme"),
    ("//example.com/x", "no scheme"),
    ("", "no scheme"),
    ("http:///path", "no host"),
    ("http://", "no host"),
    ("http://exa mple.com/", "malformed host"),
    ("http://example.com:99999/", "malformed"),
    ("http://example.com:0/", "port 0"),
    ("http://example.com/" + "a" * MAX_URL_LENGTH, "longer than 2048"),
    ("http://example.com/" + "a" * 10 * MAX_URL_LENGTH, "longer than 2048"),
]


@pytest.mark.parametrize(("url", "reason"), INVALID)
def test_invalid_urls_are_refused_with_a_reason(url, reason):
    with pytest.raises(InvalidURL) as refused:
        canonicalize_url(url)
    assert reason in refused.value.reason
    assert refused.value.url == url


def test_a_url_of_exactly_the_limit_is_accepted():
    prefix = "http://example.com/"
    url = prefix + "a" * (MAX_URL_LENGTH - len(prefix))
    assert canonicalize_url(url) == url


SEGMENTS = st.text(alphabet="abcXYZ019-._~%/ éü?&=+#", max_size=12)
HOSTS = st.sampled_from(["example.com", "EXAMPLE.org", "bücher.example", "127.0.0.1", "[::1]"])


@settings(max_examples=300, deadline=None)
@given(
    scheme=st.sampled_from(["http", "HTTP", "https", "Https"]),
    host=HOSTS,
    port=st.sampled_from(["", ":80", ":443", ":8080"]),
    path=st.lists(SEGMENTS, max_size=5),
)
def test_canonical_urls_are_fixed_points(scheme, host, port, path):
    url = f"{scheme}://{host}{port}/" + "/".join(path)
    try:
        canonical = canonicalize_url(url)
    except InvalidURL:
        return
    assert canonicalize_url(canonical) == canonical
    assert canonical.startswith(("http://", "https://"))
    assert "#" not in canonical
