"""The simulated web over HTTP: hosts, determinism, changes, 304s, robots, sitemaps, XML, faults."""

import asyncio
import socket
from email.utils import parsedate_to_datetime

import aiohttp
import numpy as np
import pytest
from lxml import etree
from protego import Protego

from metadata import ManualClock
from tests.simweb_fixtures import SMALL, get, pages_where
from xyleme.simweb import (
    DAY,
    FaultSettings,
    GroundTruth,
    LastModified,
    Robots,
    SimWebResolver,
    SimWebServer,
    SimWebSettings,
)
from xyleme.simweb.render import http_date


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
