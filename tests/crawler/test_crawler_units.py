"""The crawler's parts on their own: no network, no event loop unless a part needs one."""

from __future__ import annotations

import asyncio
import gzip
import logging
import zlib

import pytest

from tests.paths import ROOT
from xyleme import signals
from xyleme.crawler import CrawlerSettings, FetchError, Level, Request, Scope, SeenURLs, TrapGuard
from xyleme.crawler.denylist import SuffixDenyList
from xyleme.crawler.fetcher import Response, decoded_pieces
from xyleme.crawler.frontier import Frontier
from xyleme.crawler.htmlparse import extract_links
from xyleme.crawler.politeness import host_delay, retry_after_seconds
from xyleme.crawler.robots import RobotsCache

# ---------------------------------------------------------------------- seen-URL table


def test_seen_urls_remembers_and_grows():
    seen = SeenURLs(expected=16)
    urls = [f"http://h{n % 7}.example/p{n}" for n in range(5_000)]
    assert all(seen.add(url) for url in urls)
    assert not any(seen.add(url) for url in urls)
    assert len(seen) == 5_000
    assert all(url in seen for url in urls)
    assert "http://h1.example/never" not in seen


def test_seen_urls_bytes_per_url_under_100_at_ten_million():
    # np.zeros is lazily committed by the OS: sizing for 10M URLs costs no real memory here.
    seen = SeenURLs(expected=10_000_000)
    assert seen.nbytes / 10_000_000 < 100
    assert seen.nbytes / 10_000_000 == pytest.approx(13.4, abs=0.1)


def test_seen_urls_bytes_per_url_stays_within_the_stated_bounds():
    seen = SeenURLs(expected=16)
    for n in range(100_000):
        seen.add(f"http://a.example/{n}")
        if n % 9_973 == 0 and n > 100:
            assert 8 / 0.75 <= seen.bytes_per_url <= 2 * 8 / 0.75 + 1e-9


def test_seen_urls_survive_a_round_trip_through_a_file(tmp_path):
    seen = SeenURLs(expected=16)
    seen.add("http://a.example/")
    seen.save(tmp_path / "seen.u64")
    again = SeenURLs.load(tmp_path / "seen.u64")
    assert "http://a.example/" in again and len(again) == 1
    (tmp_path / "bad.u64").write_bytes(b"\0" * 24)
    with pytest.raises(ValueError, match="power of two"):
        SeenURLs.load(tmp_path / "bad.u64")


# ---------------------------------------------------------------------- scope and filters


def test_scope_hosts_domains_prefixes_and_deny_list():
    scope = Scope(
        hosts=frozenset({"one.example"}),
        domains=frozenset({"simweb.test"}),
        prefixes=("http://other.example/pub/",),
        denied=frozenset({"bad.simweb.test", "http://one.example/private/"}),
    )
    assert scope.refusal("http://one.example/x") is None
    assert scope.refusal("http://a.b.simweb.test/") is None
    assert scope.refusal("http://other.example/pub/doc.xml") is None
    assert scope.refusal("http://other.example/elsewhere").startswith("out of scope")
    assert (
        scope.refusal("http://x.bad.simweb.test/")
        == "out of scope: denied by deny:domain:bad.simweb.test"
    )
    assert "denied" in scope.refusal("http://one.example/private/a")
    assert Scope().refusal("http://anything.example/") is None


def test_trap_guard_and_suffix_filter():
    guard = TrapGuard(max_url_length=40, max_path_segments=4)
    assert guard.refusal("http://a.example/a/b/c") is None
    assert "path segments" in guard.refusal("http://a.example/a/b/c/d/e")
    assert "characters" in guard.refusal("http://a.example/" + "x" * 40)
    deny = SuffixDenyList(frozenset(CrawlerSettings().denied_suffixes))
    assert deny.refusal("http://a.example/photo.JPG") == "suffix .jpg: binary media"
    assert deny.refusal("http://a.example/feed.xml") is None
    assert deny.refusal("http://a.example/dir.v2/page") is None


# ---------------------------------------------------------------------- HTML links


def test_extract_links_resolves_against_base_and_canonicalises():
    body = b"""<html><head><base href="http://B.example:80/dir/">
      <link rel="canonical" href="/canonical#top">
      <link rel="alternate" type="application/rss+xml" href="feed.rss">
      <link rel="stylesheet" href="style.css"></head><body>
      <a href="a.html#frag">a</a><a href="a.html">again</a><a href="../up?q=1">up</a>
      <a href="mailto:x@example.com">mail</a><a href="javascript:void(0)">js</a>
      <area href="/map"><iframe src="frame.html"></iframe>
      <img src="pic.png"><img src="drawing.svg"><object data="/data"></object>
      <a href="http://[bad/">bad</a></body></html>"""
    found = extract_links(body, "http://ignored.example/page")
    assert found.links == [
        "http://b.example/canonical",
        "http://b.example/dir/feed.rss",
        "http://b.example/dir/a.html",
        "http://b.example/up?q=1",
        "http://b.example/map",
        "http://b.example/dir/frame.html",
        "http://b.example/dir/drawing.svg",
        "http://b.example/data",
    ]
    assert found.canonical == "http://b.example/canonical"
    assert [url for url, _ in found.invalid] == ["http://[bad/"]


def test_extract_links_honours_nofollow_and_robots_meta():
    body = b"""<meta name="robots" content="NOINDEX, noarchive">
      <a href="/a">a</a><a rel="nofollow" href="/b">b</a>"""
    found = extract_links(body, "http://a.example/")
    assert found.robots == {"noindex", "noarchive"}
    assert found.links == ["http://a.example/a", "http://a.example/b"]
    assert found.follow == ["http://a.example/a"]
    none = extract_links(
        b'<meta name="xyleme" content="nofollow"><a href="/a">a</a>', "http://a.example/"
    )
    assert none.links == ["http://a.example/a"] and none.follow == []


def test_extract_links_of_empty_and_broken_pages():
    assert extract_links(b"   ", "http://a.example/").links == []
    broken = extract_links(
        b"<html><a href='/x'>unclosed <b><i></html>\x00\xff", "http://a.example/"
    )
    assert broken.links == ["http://a.example/x"]


# ---------------------------------------------------------------------- bodies


def decode_body(body, encoding, limit):
    return b"".join(decoded_pieces(body, encoding, limit))


def test_a_big_gzip_body_decodes_in_bounded_pieces():
    text = bytes(range(256)) * 4096  # 1 MiB
    pieces = list(decoded_pieces(gzip.compress(text), "gzip", len(text)))
    assert b"".join(pieces) == text
    assert len(pieces) > 1 and max(map(len, pieces)) <= 64 * 1024


def test_decode_body_gzip_deflate_and_raw_deflate():
    text = b"<html>" + b"x" * 1000 + b"</html>"
    assert decode_body(gzip.compress(text), "gzip", 10_000) == text
    assert decode_body(zlib.compress(text), "deflate", 10_000) == text
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode_body(raw.compress(text) + raw.flush(), "deflate", 10_000) == text
    assert decode_body(text, None, 10) == text  # identity is not capped here


def test_decode_body_refuses_bombs_and_unknown_codings():
    bomb = gzip.compress(b"\0" * 5_000_000)
    with pytest.raises(FetchError, match="decompression bomb") as caught:
        decode_body(bomb, "gzip", 1_000_000)
    assert caught.value.kind == "too_large"
    with pytest.raises(FetchError, match="unsupported Content-Encoding"):
        decode_body(b"x", "br", 100)
    with pytest.raises(FetchError, match="undecodable gzip"):
        decode_body(b"not gzip at all", "gzip", 100)


# ---------------------------------------------------------------------- politeness


def test_host_delay_and_retry_after():
    settings = CrawlerSettings(min_delay=0.5, max_crawl_delay=5.0)
    assert host_delay(settings, None) == 0.5
    assert host_delay(settings, 2.0) == 2.0
    assert host_delay(settings, 0.1) == 0.5
    assert host_delay(settings, 500.0) == 5.0
    assert retry_after_seconds("7", 0.0, 60.0, 30.0) == 7.0
    assert retry_after_seconds("9999", 0.0, 60.0, 30.0) == 30.0
    assert retry_after_seconds(None, 0.0, 20.0, 30.0) == 20.0
    # an HTTP date 8640 simulated seconds ahead on a clock 86400x faster: 0.1 real seconds
    date = "Thu, 01 Jan 1970 02:24:00 GMT"
    assert retry_after_seconds(date, 0.0, 60.0, 30.0, speed=86_400.0) == pytest.approx(0.1)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="concurrency"):
        CrawlerSettings(concurrency=0)
    with pytest.raises(ValueError, match="min_delay"):
        CrawlerSettings(min_delay=-1.0)
    with pytest.raises(ValueError, match="contact URL"):
        CrawlerSettings(user_agent="anonymous")


# ---------------------------------------------------------------------- frontier


def _frontier(delay: float = 0.0, limit: int = 1) -> Frontier:
    return Frontier(lambda key: delay, limit)


def _take_all(frontier: Frontier) -> list[str]:
    taken = []
    while (request := frontier.pop_ready(float("inf"))) is not None:
        taken.append(request.url)
        frontier.finish(request, used_network=False)
    return taken


def test_frontier_orders_by_level_then_score_then_arrival():
    frontier = _frontier()
    for url, level, score in [
        ("http://a/4", Level.BACKGROUND, 0.0),
        ("http://a/3low", Level.SCOUTING, 0.1),
        ("http://a/3high", Level.SCOUTING, 0.9),
        ("http://a/3first", Level.SCOUTING, 0.1),
        ("http://a/0", Level.DEPENDENCY, 0.0),
        ("http://a/1", Level.REFRESH, 0.0),
    ]:
        frontier.push(Request(url, level, score))
    assert frontier.sizes() == {0: 1, 1: 1, 2: 0, 3: 3, 4: 1}
    assert _take_all(frontier) == [
        "http://a/0",
        "http://a/1",
        "http://a/3high",
        "http://a/3low",
        "http://a/3first",
        "http://a/4",
    ]
    assert len(frontier) == 0


def test_frontier_merges_duplicates_and_moves_them_up():
    frontier = _frontier()
    assert frontier.push(Request("http://a/x", Level.SCOUTING))
    assert not frontier.push(Request("http://a/x", Level.BACKGROUND))
    assert frontier.push(Request("http://a/y", Level.REFRESH))
    assert frontier.push(Request("http://a/x", Level.DEPENDENCY))
    assert frontier.sizes()[3] == 0 and len(frontier) == 2
    assert _take_all(frontier) == ["http://a/x", "http://a/y"]


def test_frontier_busy_host_does_not_stall_others():
    frontier = _frontier(delay=100.0)
    for n in range(3):
        frontier.push(Request(f"http://slow/{n}", Level.DEPENDENCY))
    frontier.push(Request("http://fast/0", Level.BACKGROUND))
    first = frontier.pop_ready(0.0)
    assert first.url == "http://slow/0"
    # slow is busy then delayed 100 s: the background request of another host goes now
    assert frontier.pop_ready(0.0).url == "http://fast/0"
    assert frontier.pop_ready(1.0) is None


def test_frontier_level_zero_overtakes_a_full_discovery_queue():
    frontier = _frontier()
    for n in range(1_000):
        frontier.push(Request(f"http://h{n % 10}/{n}", Level.SCOUTING))
    frontier.push(Request("http://h3/schema.dtd", Level.DEPENDENCY))
    assert frontier.pop_ready(0.0).url == "http://h3/schema.dtd"


def test_frontier_collects_idle_slots():
    async def scenario():
        frontier = _frontier()
        frontier.push(Request("http://a/x", Level.SCOUTING))
        request = await frontier.get()
        frontier.finish(request)
        assert frontier.hosts == 1
        await asyncio.sleep(0.01)
        assert frontier.collect_idle(0.0) == 1
        assert frontier.hosts == 0

    asyncio.run(scenario())


def test_frontier_get_waits_for_the_host_delay():
    async def scenario():
        frontier = _frontier(delay=0.05)
        frontier.push(Request("http://a/1", Level.SCOUTING))
        frontier.push(Request("http://a/2", Level.SCOUTING))
        loop = asyncio.get_running_loop()
        first = await frontier.get()
        started = loop.time()
        frontier.finish(first)
        second = await asyncio.wait_for(frontier.get(), 5.0)
        return second.url, loop.time() - started

    url, waited = asyncio.run(scenario())
    assert url == "http://a/2" and waited >= 0.05 - 0.005  # loop clock granularity


# ---------------------------------------------------------------------- robots.txt


def _responses(table: dict[str, tuple[int, str, dict]]):
    asked: list[str] = []

    async def get(url: str) -> Response:
        asked.append(url)
        entry = table[url]
        if isinstance(entry, Exception):
            raise entry
        status, text, headers = entry
        return Response(url, status, headers, text.encode(), len(text))

    return get, asked


def _fetch_robots(cache: RobotsCache, table, in_scope=lambda url: True):
    get, asked = _responses(table)
    rules = asyncio.run(cache.fetch("http://a.example", get, in_scope, lambda: 0.0))
    return rules, asked


def test_robots_rules_and_crawl_delay():
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    text = "User-agent: xyleme\nDisallow: /secret\nCrawl-delay: 3\n\nUser-agent: *\nDisallow: /"
    rules, _ = _fetch_robots(cache, {"http://a.example/robots.txt": (200, text, {})})
    assert rules.refusal("http://a.example/secret/x", "xyleme") == "robots.txt disallows"
    assert rules.refusal("http://a.example/open", "xyleme") is None
    assert rules.refusal("http://a.example/open", "otherbot") == "robots.txt disallows"
    assert rules.crawl_delay("xyleme") == 3.0
    assert cache.lookup("http://a.example", 99.0) is rules
    assert cache.lookup("http://a.example", 100.0) is None


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_robots_4xx_allows_everything(status):
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    rules, _ = _fetch_robots(cache, {"http://a.example/robots.txt": (status, "", {})})
    assert rules.refusal("http://a.example/anything", "xyleme") is None
    assert rules.expires == 100.0


@pytest.mark.parametrize(
    "failure", [(500, "", {}), (503, "", {}), FetchError("timeout", "timeout: read")]
)
def test_robots_5xx_or_timeout_disallows_and_retries_sooner(failure):
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    rules, _ = _fetch_robots(cache, {"http://a.example/robots.txt": failure})
    assert "robots.txt unreachable" in rules.refusal("http://a.example/x", "xyleme")
    assert rules.expires == 5.0


def test_robots_redirects_are_followed_and_cached_for_the_asking_host():
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    table = {
        "http://a.example/robots.txt": (301, "", {"Location": "http://b.example/robots.txt"}),
        "http://b.example/robots.txt": (302, "", {"Location": "/real-robots.txt"}),
        "http://b.example/real-robots.txt": (200, "User-agent: *\nDisallow: /no", {}),
    }
    rules, asked = _fetch_robots(cache, table)
    assert len(asked) == 3
    assert rules.refusal("http://a.example/no", "xyleme") == "robots.txt disallows"
    assert cache.lookup("http://a.example", 1.0) is rules
    assert cache.lookup("http://b.example", 1.0) is None


def test_robots_after_five_redirects_is_unavailable_and_allows_all():
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    table = {"http://a.example/robots.txt": (301, "", {"Location": "/r1"})}
    for n in range(1, 10):
        table[f"http://a.example/r{n}"] = (301, "", {"Location": f"/r{n + 1}"})
    rules, asked = _fetch_robots(cache, table)
    assert len(asked) == 6  # the file and five redirects
    assert rules.refusal("http://a.example/x", "xyleme") is None


def test_robots_redirect_out_of_scope_is_not_followed():
    cache = RobotsCache("xyleme", ttl=100.0, error_ttl=5.0)
    table = {"http://a.example/robots.txt": (301, "", {"Location": "http://evil.example/r"})}
    rules, asked = _fetch_robots(cache, table, in_scope=lambda url: "evil" not in url)
    assert asked == ["http://a.example/robots.txt"]
    assert rules.refusal("http://a.example/x", "xyleme") is None


# ---------------------------------------------------------------------- signals


def test_a_failing_listener_is_logged_and_the_others_still_run(caplog):
    manager = signals.SignalManager()
    heard = []

    def broken(event):
        raise RuntimeError("listener bug")

    manager.connect(signals.page_dead, broken)
    manager.connect(signals.page_dead, heard.append)
    with caplog.at_level(logging.ERROR):
        manager.send_catch_log(signals.page_dead, "gone")
    assert heard == ["gone"]
    assert "listener bug" in caplog.text
    with pytest.raises(ValueError, match="unknown signal"):
        manager.connect(object(), heard.append)


def test_the_crawler_docs_examples_run():
    import doctest

    docs = ROOT / "docs" / "crawler.md"
    failures, tried = doctest.testfile(str(docs), module_relative=False)
    assert tried >= 10 and failures == 0
