"""The realistic site itself: deterministic, served as declared, its truth by the rules."""

import asyncio
import os
import subprocess
import sys

import aiohttp
import numpy as np
import pytest

from xyleme.sitegen import (
    IDNA_PUNYCODE,
    RealSiteProcess,
    RealSiteServer,
    SiteSpec,
    build_site,
    ground_truth,
    importance,
    interest,
    resolve,
    top_overlap,
)

SPEC = SiteSpec(seed=16, size=300)
STYLES = {
    "sphinx", "javadoc", "mkdocs", "xhtml", "docbook4", "docbook5", "tei", "dita", "mallard",
    "svg", "feed", "sitemap", "spec-offsite-dtd", "encoding", "legacy", "blog", "orphan",
}  # fmt: skip
LINK_KINDS = {
    "html:a", "html:area", "html:frame", "html:iframe", "html:link", "html:link-next",
    "html:link-prev", "html:link-alternate", "html:link-canonical", "html:meta-refresh",
    "html:base", "html:img-svg", "html:object-svg", "html:a-query", "xhtml:a",
    "docbook4:ulink", "docbook5:link", "tei:ref", "tei:ptr", "dita:xref", "dita:topicref",
    "mallard:xref", "mallard:href", "svg:href", "svg:xlink", "atom:link", "rss:link",
    "sitemap:loc", "xlink:href",
}  # fmt: skip


@pytest.fixture(scope="module")
def site():
    return build_site(SPEC, 8000, 8001)


@pytest.fixture(scope="module")
def truth(site):
    return ground_truth(site)


def test_the_same_seed_makes_the_same_site(site):
    again = build_site(SPEC, 8000, 8001)
    assert again.responses == site.responses and again.links == site.links
    other = build_site(SiteSpec(seed=17, size=300), 8000, 8001)
    assert other.responses.keys() == site.responses.keys()  # same plan, other citations
    assert other.links != site.links


DIGEST = """
import hashlib
from xyleme.sitegen import SiteSpec, build_site, ground_truth
site = build_site(SiteSpec(seed=16, size=300), 8000, 8001)
digest = hashlib.md5(repr(ground_truth(site).edges).encode())
for url, response in site.responses.items():
    digest.update(url.encode() + response.body + str(response.content_type).encode())
print(digest.hexdigest())
"""


def test_the_site_is_the_same_in_every_process():
    """Nothing depends on the hash seed of a process (set iteration, ``hash()``)."""
    runs = [
        subprocess.run(
            [sys.executable, "-c", DIGEST],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for seed in ("1", "2")
    ]
    assert runs[0] == runs[1] and len(runs[0]) == 33


@pytest.mark.parametrize("size", [150, 600, 2000])
def test_the_size_sets_the_number_of_documents(size):
    documents = len(ground_truth(build_site(SiteSpec(size=size), 8000, 8001)).documents)
    assert 0.85 * size <= documents <= 1.35 * size + 60  # + the fixed cases


def test_every_generator_style_and_link_kind_is_reachable(site, truth):
    assert {site.documents[url].style for url in truth.documents} >= STYLES
    kinds = {kind for made in truth.edge_kinds.values() for kind in made}
    assert kinds >= LINK_KINDS
    assert 0.15 < np.mean(truth.is_xml) < 0.5


def test_the_truth_follows_redirects_and_leaves_out_what_is_no_document(site, truth):
    origin, position = site.origin, truth.position()
    assert resolve(site, f"{origin}/moved/chain-1")[0] == f"{origin}/moved/final.html"
    assert resolve(site, f"{origin}/moved/loop-a")[0] is None
    assert resolve(site, f"{origin}/moved/off-scope")[0] is None
    assert resolve(site, f"{origin}/moved/old-intro.html")[0] == f"{origin}/manual/index.html"
    legacy = position[f"{origin}/legacy/index.php"]
    assert (legacy, position[f"{origin}/manual/index.html"]) in truth.edges  # via a 301
    for left_out in (
        f"{origin}/private/secret.html",  # robots.txt
        f"{origin}/legacy/manual.pdf",  # a resource
        f"{origin}/legacy/notes.txt",  # text/plain
        f"{origin}/missing/page-0.html",  # 404
        f"{site.offsite_origin}/elsewhere.html",  # another port: out of scope
        f"{origin}/robots.txt",
    ):
        assert left_out not in position, left_out
    assert f"{site.offsite_origin}/dtd/spec.dtd" not in truth.attempted
    assert f"{origin}/private/secret.html" not in truth.attempted


def test_a_self_link_and_repeats_count_once(site, truth):
    position = truth.position()
    page = f"{site.origin}/guide/getting-started/install/"
    declared = [link.target for link in site.links[page]]
    assert declared.count(page) >= 2  # rel=canonical, the navigation's active entry
    edges = [edge for edge in truth.edges if edge[0] == position[page]]
    assert len(edges) == len(set(edges)) and (position[page], position[page]) in edges


def test_urls_are_canonical_as_the_metadata_spells_them(truth):
    from metadata import canonicalize_url

    assert all(canonicalize_url(url) == url for url in truth.documents)
    assert any("/p%C3%A4ge.html" in url for url in truth.documents)
    assert any(url.startswith(f"http://{IDNA_PUNYCODE}:") for url in truth.documents)
    assert any(url.endswith("?q=%8C%9F%8D%F5") for url in truth.documents)  # Shift_JIS query


# -- the server ------------------------------------------------------------------------------


def _session(served) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(resolver=served.resolver()))


async def _get(session, url, **options):
    async with session.get(url, allow_redirects=False, **options) as response:
        return response.status, response.headers, await response.read()


async def test_the_server_serves_every_case_and_logs_every_request():
    async with RealSiteServer(SPEC) as served, _session(served) as session:
        site, origin = served.site, served.site.origin
        for url, response in site.responses.items():
            if not site.in_scope(url):
                continue
            status, headers, body = await _get(session, url)
            assert (status, body) == (response.status, response.body), url
            assert headers.get("Content-Type") == response.content_type, url
            assert headers.get("Location") == response.location, url
        assert (await _get(session, f"{origin}/p%C3%83%C2%A4ge.html"))[0] == 404  # twice
        status, headers, _ = await _get(session, f"{origin}/legacy/untyped")
        assert status == 200 and "Content-Type" not in headers
        idna = f"{IDNA_PUNYCODE}:{served.port}"
        status, _, _ = await _get(session, f"{origin}/katalog.html", headers={"Host": idna})
        assert status == 200  # told apart by the Host header
        assert (await _get(session, f"{origin}/katalog.html"))[0] == 404
        dtd = f"{site.offsite_origin}/dtd/spec.dtd"
        assert (await _get(session, dtd))[0] == 200  # a real server would give it
        assert (await _get(session, f"http://127.0.0.1:{served.offsite_port}/"))[0] == 404
        assert len(served.accesses) == len([u for u in site.responses if site.in_scope(u)]) + 6
        last = served.accesses[-2]
        assert (last.method, last.path, last.port) == ("GET", "/dtd/spec.dtd", served.offsite_port)
        assert last.host == f"127.0.0.1:{served.offsite_port}"
        assert [a.path for a in served.out_of_scope()] == ["/dtd/spec.dtd", "/"]


async def test_the_server_answers_conditional_gets_and_compresses_like_a_static_server():
    async with RealSiteServer(SiteSpec(size=150)) as served, _session(served) as session:
        url = f"{served.site.origin}/manual/index.html"
        status, headers, body = await _get(session, url)
        assert status == 200 and headers["Content-Encoding"] in ("gzip", "deflate")
        assert body == served.site.responses[url].body  # aiohttp decompressed it
        etag, modified = headers["ETag"], headers["Last-Modified"]
        assert (await _get(session, url, headers={"If-None-Match": etag}))[0] == 304
        assert (await _get(session, url, headers={"If-None-Match": '"other"'}))[0] == 200
        assert (await _get(session, url, headers={"If-Modified-Since": modified}))[0] == 304
        png = f"{served.site.origin}/legacy/logo.png"
        assert "Content-Encoding" not in (await _get(session, png))[1]
        assert [a.status for a in served.accesses] == [200, 304, 200, 304, 200]


async def test_the_resolver_knows_only_the_idna_host():
    async with RealSiteServer(SiteSpec(size=150)) as served:
        resolver = served.resolver()
        (answer,) = await resolver.resolve(IDNA_PUNYCODE, 80)
        assert (answer["host"], answer["port"]) == ("127.0.0.1", served.port)
        with pytest.raises(OSError):
            await resolver.resolve("www.w3.org", 80)
        url = f"http://bücher.realsite.test:{served.port}/über.html"
        async with _session(served) as session:
            status, _, _ = await asyncio.wait_for(_get(session, url), 10)
        assert status == 200 and served.accesses[-1].path == "/%C3%BCber.html"


def test_encoded_pages_hold_their_links_in_their_encoding(site):
    origin = site.origin
    jis = site.responses[f"{origin}/intl/iso-2022-jp.html"].body
    assert b"\x1b$B" in jis and "日本語".encode() not in jis  # ISO-2022-JP escapes
    cp1252 = site.responses[f"{origin}/intl/http-charset.html"].body
    assert b"caf\xe9.html" in cp1252 and b"<meta" not in cp1252
    assert site.responses[f"{origin}/intl/bom.html"].body.startswith(b"\xef\xbb\xbf")
    assert site.responses[f"{origin}/intl/utf16.xml"].body[:2] in (b"\xff\xfe", b"\xfe\xff")


def test_the_specifications_are_valid_against_their_off_scope_dtd(site):
    """The DTD is real: a crawl that fetched it would validate them (and be out of scope)."""
    from lxml import etree

    served = {
        name: site.responses[f"{site.offsite_origin}/{name}"].body
        for name in ("dtd/spec.dtd", "ent/legal.ent")
    }

    class OffScope(etree.Resolver):
        def resolve(self, url, public_id, context):
            return self.resolve_string(served[url.split("/", 3)[3]], context)

    parser = etree.XMLParser(dtd_validation=True, no_network=True, resolve_entities=True)
    parser.resolvers.add(OffScope())
    specs = [url for url, doc in site.documents.items() if doc.style == "spec-offsite-dtd"]
    for url in specs:
        tree = etree.fromstring(site.responses[url].body, parser, base_url=url)
        assert tree.findtext("legal") == "All rights reserved."
    assert len(specs) >= 3


# -- the independent rankings -----------------------------------------------------------------


def test_interest_is_the_fixed_point_of_eq_6_7():
    edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (4, 2), (1, 4)]
    is_xml = [False, False, True, False, True]
    x = interest(5, edges, is_xml)
    c, m_t = 0.85, np.zeros((5, 5))
    for i, j in edges:
        m_t[i, j] = 1.0
    m_t /= m_t.sum(axis=1, keepdims=True)
    e = np.array(is_xml, float) / sum(is_xml)
    step = c * m_t @ x + (1 - c) * e
    assert x.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(step / step.sum(), x, atol=1e-10)
    assert x[4] > x[1] > 0  # an XML page; then a page two links from both XML pages


def test_importance_is_pagerank_with_dangling_pages_uniform():
    ranks = importance(3, [(0, 1), (1, 0), (1, 2)])  # page 2 has no link
    c = 0.85
    m = np.array([[0, 0.5, 1 / 3], [1, 0, 1 / 3], [0, 0.5, 1 / 3]])
    dense = np.linalg.solve(np.eye(3) - c * m, np.full(3, (1 - c) / 3))
    np.testing.assert_allclose(ranks, dense / dense.sum(), atol=1e-9)


def test_top_overlap_counts_tied_pages_as_equal():
    reference = {f"p{i}": float(30 - i) for i in range(18)} | {f"t{i}": 5.0 for i in range(6)}
    candidate = {f"p{i}": float(30 - i) for i in range(18)} | {"t5": 5.0, "t4": 5.0}
    assert top_overlap(reference, candidate) == 20
    assert top_overlap(reference, {**candidate, "x": 100.0}) == 19
    assert top_overlap(reference, {}) == 0


async def test_a_site_served_by_a_process_of_its_own_is_the_same_site():
    """bench_site's server: a child process serves the site built here for its ports."""
    async with RealSiteProcess(SiteSpec(size=150)) as served, _session(served) as session:
        in_process = build_site(SiteSpec(size=150), served.port, served.offsite_port)
        assert served.site.responses.keys() == in_process.responses.keys()
        url = f"{served.site.origin}/manual/index.html"
        status, _, body = await asyncio.wait_for(_get(session, url), 10)
        assert status == 200 and body == served.site.responses[url].body
        offsite = f"http://127.0.0.1:{served.offsite_port}/dtd/spec.dtd"
        await asyncio.wait_for(_get(session, offsite), 10)
        assert [(a.path, a.status) for a in served.accesses] == [
            ("/manual/index.html", 200),
            ("/dtd/spec.dtd", 200),
        ]
        assert [a.path for a in served.out_of_scope()] == ["/dtd/spec.dtd"]
        child = served._process
    assert not child.is_alive()
