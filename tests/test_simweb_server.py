"""The simulated web over HTTP: hosts, determinism, changes, 304s, robots, sitemaps, XML, faults."""

import asyncio
import dataclasses
import gzip
import io
import socket
import zlib
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

import aiohttp
import numpy as np
import pytest
from lxml import etree, html
from protego import Protego

from metadata import ManualClock
from xyleme.simweb import (
    DAY,
    Fault,
    FaultSettings,
    GroundTruth,
    Kind,
    LastModified,
    Lifecycles,
    Robots,
    SimWeb,
    SimWebResolver,
    SimWebServer,
    SimWebSettings,
)
from xyleme.simweb.lifecycle import SOFT_404
from xyleme.simweb.render import http_date

SMALL = SimWebSettings(hosts=8, pages=600, seed=21)


@pytest.fixture
async def served():
    """A small web with every fault on, at one day after its epoch, and a client for it."""
    clock = ManualClock(SMALL.epoch + DAY)
    async with SimWebServer(SMALL, clock) as server, server.client_session() as session:
        yield server, session, clock


async def get(session, url, **options):
    options.setdefault("allow_redirects", False)
    async with session.get(url, **options) as response:
        return response.status, response.headers, await response.read()


def pages_where(server, condition, at=None):
    """Fault-free pages alive at ``at`` (default: now) meeting ``condition``, by id."""
    web = server.web
    at = server.clock.now() if at is None else at
    alive = GroundTruth(web).alive(at)
    ok = alive & (web.structure.fault == Fault.NONE) & condition
    return np.flatnonzero(ok).tolist()


# -- reaching the web ------------------------------------------------------------------------
async def test_the_server_binds_loopback_only(served):
    server, _, _ = served
    assert server.addresses and all(address[0] == "127.0.0.1" for address in server.addresses)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 1))  # no packet is sent; this only picks an interface
        own_address = probe.getsockname()[0]
    if own_address.startswith("127."):
        pytest.skip("this machine has no non-loopback address")
    with pytest.raises(OSError), socket.create_connection((own_address, server.port), 1):
        pass


async def test_the_resolver_sends_port_less_urls_to_the_servers_port(served):
    server, session, _ = served
    assert server.port not in (0, 80)
    for url in (server.seed_urls[3], "http://site3.simweb.test:80/"):
        status, _, body = await get(session, url)
        assert status == 200 and b"Page %d," % server.web.structure.home[3] in body


async def test_an_unknown_host_fails_like_dns(served):
    _, session, _ = served
    with pytest.raises(aiohttp.ClientConnectorDNSError):
        await get(session, "http://gone1.simweb.test/")
    with pytest.raises(aiohttp.ClientConnectorDNSError):
        await get(session, "http://example.com/")


async def test_a_resolver_knowing_only_the_port_accepts_every_simulated_site():
    resolver = SimWebResolver(8123)
    (answer,) = await resolver.resolve("site12345.simweb.test", 80)
    assert (answer["host"], answer["port"]) == ("127.0.0.1", 8123)
    with pytest.raises(OSError):
        await resolver.resolve("gone3.simweb.test", 80)


async def test_the_server_works_as_an_http_proxy(served):
    server, session, _ = served
    _, _, direct = await get(session, server.seed_urls[2])
    async with aiohttp.ClientSession() as plain:
        status, _, proxied = await get(plain, server.seed_urls[2], proxy=server.proxy_url)
    assert status == 200 and proxied == direct


async def test_http_dates_are_simulated_time(served):
    server, session, clock = served
    _, headers, _ = await get(session, server.seed_urls[0])
    assert parsedate_to_datetime(headers["Date"]).timestamp() == clock.now()
    assert headers["Server"] == "simweb"


# -- determinism and changes -----------------------------------------------------------------
async def test_same_seed_gives_byte_identical_pages_at_the_same_time(served):
    server, session, clock = served
    urls = [server.web.url(p) for p in pages_where(server, True)[::9]]
    first = [await get(session, url) for url in urls]
    other_clock = ManualClock(clock.now())
    async with SimWebServer(SMALL, other_clock) as twin, twin.client_session() as twin_session:
        second = [await get(twin_session, url) for url in urls]
    assert [body for _, _, body in first] == [body for _, _, body in second]
    assert {kind for kind in server.web.structure.kind[pages_where(server, True)[::9]]} >= {0, 1}


async def test_content_changes_exactly_at_the_change_times(served):
    server, session, clock = served
    web = server.web
    page = pages_where(server, web.structure.rate * DAY > 3)[0]
    changes = web.changes.until(page, clock.now() + 5 * DAY)
    changes = [t for t in changes if t > clock.now()][:3]
    assert len(changes) == 3
    bodies = []
    for when in changes:
        clock.set(when - 1)
        _, _, before = await get(session, web.url(page))
        clock.set(when)
        _, _, after = await get(session, web.url(page))
        assert before != after
        bodies += [before, after]
    # Between two changes nothing moves: the body after one change is the one before the next.
    assert bodies[1] == bodies[2] and bodies[3] == bodies[4]


async def test_conditional_get_answers_304_exactly_when_unchanged(served):
    server, session, clock = served
    web = server.web
    honest = web.structure.last_modified[web.structure.host_of] == LastModified.HONEST
    pages = pages_where(server, honest & (web.structure.rate > 0))[:40]
    seen = {}
    for page in pages:
        _, headers, _ = await get(session, web.url(page))
        seen[page] = (headers["ETag"], headers["Last-Modified"], web.version(page, clock.now()))
    clock.advance(0.5 * DAY)
    outcomes = set()
    for page, (etag, modified, version) in seen.items():
        unchanged = web.version(page, clock.now()) == version
        for validator in ({"If-None-Match": etag}, {"If-Modified-Since": modified}):
            status, _, body = await get(session, web.url(page), headers=validator)
            assert status == (304 if unchanged else 200)
            assert (body == b"") == unchanged
        outcomes.add(unchanged)
    assert outcomes == {True, False}


async def test_weak_etags_match_and_dates_after_now_are_ignored(served):
    server, session, clock = served
    url = server.web.url(pages_where(server, True)[0])
    _, headers, _ = await get(session, url)
    assert (await get(session, url, headers={"If-None-Match": "W/" + headers["ETag"]}))[0] == 304
    tomorrow = http_date(clock.now() + DAY)
    assert (await get(session, url, headers={"If-Modified-Since": tomorrow}))[0] == 200
    assert (await get(session, url, headers={"If-Modified-Since": "yesterday"}))[0] == 200


async def test_a_stale_etag_or_date_gets_the_page(served):
    server, session, _ = served
    url = server.web.url(pages_where(server, True)[0])
    assert (await get(session, url, headers={"If-None-Match": '"0-999"'}))[0] == 200
    old_date = {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}
    assert (await get(session, url, headers=old_date))[0] == 200


async def test_lying_hosts_lie_about_last_modified():
    settings = SimWebSettings(hosts=30, pages=900, seed=4, lying_host_fraction=0.3)
    clock = ManualClock(settings.epoch + 2 * DAY)
    async with SimWebServer(settings, clock) as server:
        web = server.web
        policy_of = web.structure.last_modified[web.structure.host_of]
        async with server.client_session() as session:
            for policy in (
                LastModified.MISSING,
                LastModified.ALWAYS_NOW,
                LastModified.NEVER_UPDATED,
            ):
                changed = (web.structure.rate * DAY > 2) & (policy_of == policy)
                page = pages_where(server, changed & (web.lifecycles.birth == settings.epoch))[0]
                assert web.version(page, clock.now()) > 0
                _, headers, _ = await get(session, web.url(page))
                if policy is LastModified.MISSING:
                    assert "Last-Modified" not in headers and "ETag" not in headers
                elif policy is LastModified.ALWAYS_NOW:
                    assert headers["Last-Modified"] == headers["Date"]
                else:
                    stamp = parsedate_to_datetime(headers["Last-Modified"]).timestamp()
                    assert stamp == settings.epoch


# -- robots.txt and sitemaps -------------------------------------------------------------------
async def test_robots_variants():
    settings = SimWebSettings(
        hosts=20,
        pages=400,
        seed=3,
        faults=FaultSettings(
            robots_404_fraction=0.1, robots_500_fraction=0.1, robots_timeout_fraction=0.1
        ),
    )
    async with SimWebServer(settings, ManualClock(settings.epoch)) as server:
        st = server.web.structure
        async with server.client_session() as session:
            seen = set()
            for host in range(20):
                url = server.web.host_url(host) + "/robots.txt"
                variant = Robots(st.robots[host])
                if variant is Robots.TIMEOUT:
                    with pytest.raises(asyncio.TimeoutError):
                        await get(session, url, timeout=aiohttp.ClientTimeout(total=0.2))
                    seen.add(variant)
                    continue
                status, _, body = await get(session, url)
                assert status == {Robots.NORMAL: 200, Robots.NOT_FOUND: 404}.get(variant, 500)
                seen.add(variant)
                if variant is not Robots.NORMAL:
                    continue
                robots = Protego.parse(body.decode())
                private = server.web.host_url(host) + "/private/1.html"
                assert robots.can_fetch(private, "xyro") == (not st.disallow[host])
                assert robots.can_fetch(server.web.host_url(host) + "/pages/2.html", "xyro")
                assert not robots.can_fetch(server.web.host_url(host) + "/pages/2.html", "BadBot")
                delay = robots.crawl_delay("xyro")
                assert (
                    (delay == settings.crawl_delay_seconds)
                    if st.crawl_delay[host]
                    else delay is None
                )
                assert list(robots.sitemaps) == [server.web.host_url(host) + "/sitemap.xml"]
            assert seen == set(Robots)


async def test_disallowed_pages_live_under_private_on_disallowing_hosts(served):
    server, _, _ = served
    truth = GroundTruth(server.web)
    blocked = [p for p in range(truth.page_count) if not truth.robots_allowed(p)]
    assert blocked and all("/private/" in server.web.url(p) for p in blocked)


async def test_sitemaps_list_the_live_public_pages_and_big_hosts_get_an_index():
    settings = SimWebSettings(hosts=3, pages=300, seed=8, sitemap_chunk=60)
    clock = ManualClock(settings.epoch + 20 * DAY)
    async with SimWebServer(settings, clock) as server:
        web, truth = server.web, GroundTruth(server.web)
        async with server.client_session() as session:
            for host in range(3):
                _, _, body = await get(session, web.host_url(host) + "/sitemap.xml")
                root = etree.fromstring(body)
                ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
                listed = []
                if root.tag.endswith("sitemapindex"):
                    for loc in root.xpath("//s:loc/text()", namespaces=ns):
                        _, _, part = await get(session, loc)
                        listed += etree.fromstring(part).xpath("//s:loc/text()", namespaces=ns)
                else:
                    listed = root.xpath("//s:loc/text()", namespaces=ns)
                expected = [web.url(p) for p in truth.sitemap(host, clock.now())]
                assert listed == expected
                st = web.structure
                private = st.private[st.host_start[host] : st.host_start[host + 1]]
                alive = truth.alive(clock.now())[st.host_start[host] : st.host_start[host + 1]]
                assert len(listed) == (alive & ~private).sum()
            sizes = np.diff(web.structure.host_start)
            assert sizes.max() > settings.sitemap_chunk


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
