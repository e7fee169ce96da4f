"""The simulated web over HTTP: what its documents carry (links, dependencies, validity) and its
faults."""

import asyncio
import dataclasses
import gzip
import io
import zlib
from urllib.parse import urljoin

import aiohttp
import numpy as np
import pytest
from lxml import etree, html

from metadata import ManualClock
from tests.simweb_fixtures import SMALL, get, pages_where
from xyleme.simweb import (
    DAY,
    Fault,
    FaultSettings,
    GroundTruth,
    Kind,
    Lifecycles,
    SimWeb,
    SimWebServer,
    SimWebSettings,
)
from xyleme.simweb.lifecycle import SOFT_404


# -- what the documents carry ------------------------------------------------------------------
def page_links(server, page, body):
    """(page ids, other URLs) a body links to, read the way a crawler or loader would."""
    base = server.web.url(page)
    kind = Kind(server.web.structure.kind[page])
    if kind is Kind.HTML:
        hrefs = html.fromstring(body).xpath("//a/@href")
    elif kind is Kind.RSS:
        hrefs = etree.fromstring(body).xpath("//link/text()")
    elif kind is Kind.ATOM:
        hrefs = etree.fromstring(body).xpath("//*[local-name()='link'][not(@rel='self')]/@href")
    else:
        root = etree.fromstring(body, etree.XMLParser(resolve_entities=False))
        hrefs = root.xpath("//@xlink:href", namespaces={"xlink": "http://www.w3.org/1999/xlink"})
        hrefs += root.xpath(
            "//xi:include/@href", namespaces={"xi": "http://www.w3.org/2001/XInclude"}
        )
    truth = GroundTruth(server.web)
    ids, others = [], []
    for href in hrefs:
        url = urljoin(base, href)
        try:
            ids.append(truth.page_id(url))
        except KeyError:
            others.append(url)
    return ids, others


async def test_documents_link_exactly_to_the_true_links(served):
    server, session, clock = served
    truth = GroundTruth(server.web)
    kinds = set()
    for page in pages_where(server, True):
        _, _, body = await get(session, server.web.url(page))
        ids, others = page_links(server, page, body)
        expected = truth.page(page, clock.now())
        assert sorted(set(ids)) == sorted(expected.links)
        assert others == expected.other_links
        kinds.add(Kind(server.web.structure.kind[page]))
    assert kinds == set(Kind)


def dependencies_named_in(body, base):
    """The style sheet, DTD, entity and schema URLs an XML document names."""
    root = etree.fromstring(body, etree.XMLParser(resolve_entities=False, load_dtd=False))
    tree = root.getroottree()
    named = [
        urljoin(base, pi.get("href"))
        for pi in tree.xpath("/processing-instruction('xml-stylesheet')")
    ]
    if tree.docinfo.system_url:
        named.append(urljoin(base, tree.docinfo.system_url))
        named += [
            urljoin(base, entity.system_url) for entity in tree.docinfo.internalDTD.iterentities()
        ]
    location = root.get("{http://www.w3.org/2001/XMLSchema-instance}schemaLocation")
    if location:
        named.append(urljoin(base, location.split()[1]))
    return named


async def test_xml_documents_name_their_true_dependencies(served):
    server, session, clock = served
    truth = GroundTruth(server.web)
    named_any = set()
    for page in pages_where(server, server.web.structure.kind == Kind.XML):
        url = server.web.url(page)
        named = dependencies_named_in((await get(session, url))[2], url)
        assert named == truth.page(page, clock.now()).dependencies
        named_any.update(path.rsplit("/", 2)[-2] for path in named)
    assert named_any == {"style", "dtd", "ent", "schema"}


async def test_documents_with_a_dtd_are_valid_or_invalid_as_the_truth_says(served):
    server, session, _ = served
    web = server.web
    _, _, dtd_text = await get(session, web.host_url(0) + "/dtd/catalog.dtd")
    dtd = etree.DTD(io.BytesIO(dtd_text))
    entities = {}
    for host in range(web.structure.host_count):
        entity_url = web.host_url(host) + "/ent/notice.ent"
        entities[entity_url] = (await get(session, entity_url))[2]

    class Local(etree.Resolver):
        def resolve(self, url, pubid, context):
            return self.resolve_string(entities[url], context)

    verdicts = set()
    for page in pages_where(server, web.structure.has_dtd):
        _, _, body = await get(session, web.url(page))
        parser = etree.XMLParser(load_dtd=False, resolve_entities=True, no_network=True)
        parser.resolvers.add(Local())
        document = etree.parse(io.BytesIO(body), parser, base_url=web.url(page))
        assert document.xpath("//notice")
        valid = dtd.validate(document)
        assert valid == (not web.structure.invalid[page])
        verdicts.add(valid)
    assert verdicts == {True, False}


async def test_xml_documents_carry_stylesheets_schemas_and_xincludes(served):
    server, session, _ = served
    web = server.web
    st = web.structure
    bodies = [
        (await get(session, web.url(p)))[2]
        for p in pages_where(server, (st.kind == Kind.XML) & ~st.has_dtd)
    ]
    assert any(b"<?xml-stylesheet" in b for b in bodies)
    assert any(b"xsi:schemaLocation" in b for b in bodies)
    assert any(b"<xi:include" in b for b in bodies)
    for path, kind in [
        ("/style/catalog.xsl", "text/xsl"),
        ("/schema/record.xsd", "application/xml"),
        ("/dtd/catalog.dtd", "application/xml-dtd"),
    ]:
        status, headers, body = await get(session, web.host_url(1) + path)
        assert status == 200 and headers["Content-Type"] == kind and body


# -- faults ------------------------------------------------------------------------------------
FAULTY = SimWebSettings(
    hosts=4,
    pages=1000,
    seed=5,
    faults=FaultSettings(
        redirect_fraction=0.03,
        slow_fraction=0.03,
        slow_seconds=0.05,
        oversize_fraction=0.03,
        oversize_bytes=300_000,
        gzip_fraction=0.03,
        gzip_bomb_bytes=64 << 20,
        malformed_fraction=0.03,
        wrong_type_fraction=0.03,
        missing_type_fraction=0.03,
        dying_fraction=0.0,
        new_page_fraction=0.0,
    ),
)


def observed_fault(page_kind, status, headers, body):
    """Classify one raw response the way a careful crawler would notice it."""
    if status in (301, 302):
        location = headers["Location"]
        return {"/mo": Fault.REDIRECT, "/ho": Fault.REDIRECT_CHAIN, "/lo": Fault.REDIRECT_LOOP}[
            location[:3]
        ]
    if headers.get("Content-Encoding") == "gzip":
        inflated = zlib.decompressobj(31).decompress(body, 1 << 20)
        return Fault.GZIP_BOMB if inflated == bytes(1 << 20) else Fault.GZIP
    if len(body) == FAULTY.faults.oversize_bytes:
        return Fault.OVERSIZE
    if "Content-Type" not in headers:
        return Fault.MISSING_TYPE
    expected = "text/html" if page_kind is Kind.HTML else "xml"
    if expected not in headers["Content-Type"]:
        return Fault.WRONG_TYPE
    if page_kind is Kind.HTML:
        return Fault.NONE if body.endswith(b"</html>\n") else Fault.MALFORMED
    try:
        etree.fromstring(body, etree.XMLParser(resolve_entities=False))
    except etree.XMLSyntaxError:
        return Fault.MALFORMED
    return Fault.NONE


async def test_each_fault_kind_is_served_at_its_configured_rate():
    clock = ManualClock(FAULTY.epoch)
    async with SimWebServer(FAULTY, clock) as server:
        web = server.web
        async with server.client_session(auto_decompress=False) as session:
            responses = await asyncio.gather(
                *(get(session, web.url(p)) for p in range(web.structure.page_count))
            )
    observed = [
        observed_fault(Kind(web.structure.kind[p]), *responses[p])
        for p in range(web.structure.page_count)
    ]
    truth = web.structure.fault.tolist()
    for page, fault in enumerate(truth):
        if fault != Fault.SLOW:
            assert observed[page] == fault, (page, Fault(fault), observed[page])
    counts = np.bincount(truth, minlength=len(Fault))
    for group, fraction in [
        ((Fault.REDIRECT, Fault.REDIRECT_CHAIN, Fault.REDIRECT_LOOP), 0.03),
        ((Fault.GZIP, Fault.GZIP_BOMB), 0.03),
        ((Fault.OVERSIZE,), 0.03),
        ((Fault.MALFORMED,), 0.03),
        ((Fault.WRONG_TYPE,), 0.03),
        ((Fault.MISSING_TYPE,), 0.03),
        ((Fault.SLOW,), 0.03),
    ]:
        assert sum(counts[list(group)]) / (1000 - 4) == pytest.approx(fraction, abs=0.002)


async def test_redirects_chain_and_loop():
    async with SimWebServer(FAULTY, ManualClock(FAULTY.epoch)) as server:
        web, st = server.web, server.web.structure
        async with server.client_session() as session:
            plain = int(np.flatnonzero(st.fault == Fault.REDIRECT)[0])
            async with session.get(web.url(plain)) as response:
                assert response.status == 200 and len(response.history) == 1
                assert b"Page %d," % plain in await response.read() or st.kind[plain] != Kind.HTML
            chain = int(np.flatnonzero(st.fault == Fault.REDIRECT_CHAIN)[0])
            async with session.get(web.url(chain)) as response:
                assert response.status == 200 and len(response.history) == 3
            loop = int(np.flatnonzero(st.fault == Fault.REDIRECT_LOOP)[0])
            with pytest.raises(aiohttp.TooManyRedirects):
                await get(session, web.url(loop), allow_redirects=True, max_redirects=8)


async def test_slow_pages_answer_only_after_their_delay():
    async with SimWebServer(FAULTY, ManualClock(FAULTY.epoch)) as server:
        slow = int(np.flatnonzero(server.web.structure.fault == Fault.SLOW)[0])
        async with server.client_session() as session:
            loop = asyncio.get_running_loop()
            started = loop.time()
            status, _, _ = await get(session, server.web.url(slow))
            assert status == 200 and loop.time() - started >= FAULTY.faults.slow_seconds


async def test_the_gzip_bomb_inflates_far_beyond_its_size():
    async with SimWebServer(FAULTY, ManualClock(FAULTY.epoch)) as server:
        bomb = int(np.flatnonzero(server.web.structure.fault == Fault.GZIP_BOMB)[0])
        async with server.client_session(auto_decompress=False) as session:
            _, headers, body = await get(session, server.web.url(bomb))
    assert headers["Content-Encoding"] == "gzip" and len(body) < (1 << 20)
    assert len(gzip.decompress(body)) == FAULTY.faults.gzip_bomb_bytes


async def test_pages_die_with_404_or_410_and_new_pages_appear(served):
    server, session, clock = served
    web, life = server.web, server.web.lifecycles
    dying = pages_where(server, np.isfinite(life.death), at=web.settings.epoch)
    page = min((p for p in dying if life.death[p] > clock.now() + 1), key=lambda p: life.death[p])
    clock.set(life.death[page] - 1)
    assert (await get(session, web.url(page)))[0] == 200
    clock.set(life.death[page])
    assert (await get(session, web.url(page)))[0] == life.dead_status[page]
    statuses = {int(life.dead_status[p]) for p in dying}
    assert statuses == {404, 410}
    newborn = min(
        pages_where(server, life.birth > clock.now(), at=life.birth.max()),
        key=lambda p: life.birth[p],
    )
    assert (await get(session, web.url(newborn)))[0] == 404
    clock.set(life.birth[newborn])
    assert (await get(session, web.url(newborn)))[0] == 200


async def test_the_spider_trap_is_an_endless_calendar(served):
    server, session, _ = served
    web = server.web
    trap_host = int(np.flatnonzero(web.structure.trap)[0])
    home = int(web.structure.home[trap_host])
    _, _, body = await get(session, web.url(home))
    (url,) = GroundTruth(web).page(home, server.clock.now()).other_links
    assert url in html.fromstring(body).xpath("//a/@href")
    seen = set()
    for _ in range(30):
        status, _, body = await get(session, url)
        assert status == 200 and url not in seen
        seen.add(url)
        next_month = html.fromstring(body).xpath("//li[2]/a/@href")[0]
        url = urljoin(url, next_month)
    assert len(seen) == 30
    trap = web.host_url(trap_host)
    assert (await get(session, trap + "/calendar/2024/02/29/"))[0] == 200
    for impossible in ("/calendar/2026/02/29/", "/calendar/2026/13/", "/calendar/0000/01/"):
        assert (await get(session, trap + impossible))[0] == 404


async def test_a_link_to_a_vanished_host_fails_to_resolve(served):
    server, session, _ = served
    web = server.web
    page = pages_where(server, web.structure.dead_host_link & (web.structure.kind == Kind.HTML))[0]
    _, _, body = await get(session, web.url(page))
    gone = [h for h in html.fromstring(body).xpath("//a/@href") if h.startswith("http://gone")]
    assert len(gone) == 1
    with pytest.raises(aiohttp.ClientConnectorDNSError):
        await get(session, gone[0])


async def test_unknown_paths_are_404_and_the_bare_address_lists_the_seeds(served):
    server, session, _ = served
    assert (await get(session, server.web.host_url(0) + "/nothing/here"))[0] == 404
    async with aiohttp.ClientSession() as plain:
        status, _, body = await get(plain, server.proxy_url + "/")
    assert status == 200 and server.seed_urls[0].encode() in body


def test_a_simweb_can_be_given_ready_made():
    web = SimWeb(SMALL)
    assert SimWebServer(web, ManualClock(0.0)).web is web


async def test_a_lifecycle_model_can_make_soft_404s():
    def soft_deaths_on_day_two(structure):
        n, epoch = structure.page_count, structure.settings.epoch
        death = np.where(structure.is_home, np.inf, epoch + 2 * DAY)
        return Lifecycles(np.full(n, epoch), death, np.full(n, SOFT_404, dtype=np.int16))

    settings = SimWebSettings(hosts=2, pages=30, seed=3).without_faults()
    web = SimWeb(settings, lifecycle=soft_deaths_on_day_two)
    clock = ManualClock(settings.epoch + 2 * DAY)
    server = SimWebServer(web, clock)
    async with server, server.client_session() as session:
        status, _, body = await get(session, web.url(5))
    assert status == 200 and b"Page not found" in body
    assert GroundTruth(web).page(5, clock.now()).state == "dead"


async def test_head_requests_and_a_tiny_body_cache_still_serve_the_right_bytes():
    settings = dataclasses.replace(SMALL, cache_bytes=20_000)
    clock = ManualClock(settings.epoch + DAY)
    server = SimWebServer(settings, clock)
    async with server, server.client_session() as session:
        urls = [server.web.url(p) for p in pages_where(server, True)[:40]]
        first = [await get(session, url) for url in urls]
        again = [await get(session, url) for url in urls]
        assert [body for *_, body in first] == [body for *_, body in again]
        async with session.head(urls[0]) as response:
            assert response.status == 200 and await response.read() == b""
            assert int(response.headers["Content-Length"]) == len(first[0][2])


async def test_every_kind_of_document_can_carry_a_link_to_a_vanished_host():
    settings = SimWebSettings(
        hosts=3, pages=400, seed=2, faults=FaultSettings(dead_host_link_fraction=0.5)
    )
    clock = ManualClock(settings.epoch)
    server = SimWebServer(settings, clock)
    truth = GroundTruth(server.web)
    async with server, server.client_session() as session:
        forms = set()
        for page in np.flatnonzero(server.web.structure.dead_host_link).tolist():
            expected = truth.page(page, clock.now())
            if expected.fault != "none" or expected.state != "alive":
                continue
            _, _, body = await get(session, server.web.url(page))
            assert page_links(server, page, body)[1] == expected.other_links
            if expected.other_links:
                forms.add((expected.kind, expected.has_dtd))
    assert forms == {("HTML", False), ("XML", False), ("XML", True)}


async def test_precomputed_bodies_are_the_bodies_served_without_precomputing():
    clock = ManualClock(SMALL.epoch + 3 * DAY)
    ready, lazy = SimWebServer(SMALL, clock), SimWebServer(SMALL, clock)
    assert ready.precompute() == GroundTruth(ready.web).alive(clock.now()).sum()
    urls = [ready.web.url(p) for p in pages_where(ready, True)[::7]]
    async with ready, lazy, ready.client_session() as one, lazy.client_session() as two:
        for url in urls:
            assert (await get(one, url))[2] == (await get(two, url))[2]
