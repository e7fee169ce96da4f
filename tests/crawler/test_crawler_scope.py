"""Issue 16's scope: rules of every kind, ports, deny patterns, the SSRF guard, seeds, traps.

Servers are real (tests/crawler_site.py on 127.0.0.1, an access log each); the SSRF cases use
a resolver stub that answers what a hostile DNS would.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp.abc import AbstractResolver
from click.testing import CliRunner

from loader import LoaderSettings
from metadata import Metadata, PageType
from tests.crawler_site import Page, Site
from xyleme import commands, signals
from xyleme.cli import cli
from xyleme.config import ConfigError, config_from_mapping, load_config
from xyleme.crawler import Crawler, CrawlerSettings, Level, Scope, TrapGuard
from xyleme.crawler.addresses import AddressRefused, GuardedResolver, non_public
from xyleme.crawler.scoperules import Kind, ScopeError, URLParts, parse_rule
from xyleme.daemon import Daemon
from xyleme.scope_config import check_start

FAST = {"min_delay": 0.0, "concurrency": 8, "per_host_concurrency": 4, "write_interval": 0.01}


# ---------------------------------------------------------------------- rules, one kind each


def admits(rule: str, url: str) -> bool:
    return parse_rule(rule).matches(URLParts.of(url))


def test_an_origin_rule_names_scheme_host_port_and_a_path_prefix():
    rule = "http://127.0.0.1:8000/docs/"
    assert parse_rule(rule).kind is Kind.ORIGIN
    assert admits(rule, "http://127.0.0.1:8000/docs/a/b.html")
    assert admits(rule, "http://127.0.0.1:8000/docs")  # the folder without its slash
    assert not admits(rule, "http://127.0.0.1:8000/docsets/")
    assert not admits(rule, "http://127.0.0.1:8001/docs/")  # another port: another service
    assert not admits(rule, "https://127.0.0.1:8000/docs/")  # another scheme
    assert not admits(rule, "http://localhost:8000/docs/")


def test_default_ports_are_implied():
    assert admits("https://example.org/", "https://example.org:443/a")
    assert admits("https://example.org", "https://example.org/a")
    assert not admits("https://example.org/", "http://example.org/a")
    assert not admits("https://example.org/", "https://example.org:8443/a")
    assert str(parse_rule("HTTPS://Example.ORG:443")) == "https://example.org/"


def test_host_rules_name_one_host_on_default_ports_or_the_port_given():
    assert admits("host:www.example.org", "http://www.example.org/")
    assert admits("host:www.example.org", "https://www.example.org/")
    assert not admits("host:www.example.org", "http://a.www.example.org/")
    assert not admits("host:www.example.org", "http://www.example.org:8080/")
    assert admits("host:www.example.org:8080", "http://www.example.org:8080/")
    assert admits("host:www.example.org:*", "http://www.example.org:9/")
    assert parse_rule("127.0.0.1").kind is Kind.HOST  # a bare address
    assert admits("[::1]:8080", "http://[::1]:8080/")


def test_domain_rules_name_a_domain_and_its_subdomains():
    for spelling in ("domain:example.org", "*.example.org", "example.org", "Example.ORG."):
        assert str(parse_rule(spelling)) == "domain:example.org"
        assert admits(spelling, "http://example.org/")
        assert admits(spelling, "https://a.b.example.org/x")
        assert not admits(spelling, "http://badexample.org/")
        assert not admits(spelling, "http://example.org:81/")
    assert admits("domain:test:*", "http://a.test:32803/")


def test_glob_and_regex_rules_match_the_whole_canonical_url():
    assert admits("glob:*/feeds/*.xml", "http://a.example/x/feeds/f.xml")
    assert not admits("glob:*/feeds/*.xml", "http://a.example/x/feeds/f.xml?page=2")
    assert admits("regex:[?&]sessionid=", "http://a.example/x?a=1&sessionid=9")
    assert not admits("regex:^https://", "http://a.example/")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("ftp:x", "unknown kind 'ftp'"),
        ("http://a.example/x?y=1", "no query"),
        ("host:a.example/path", "not a host name"),
        ("host:a.example:99999", "port '99999'"),
        ("regex:(", "not a regular expression"),
        ("deny:net:10.0.0.0/8", "net: rules allow connections"),
        ("net:10.0.0.300/8", "not a network"),
        ("ftp://a.example/", "not a usable origin URL"),
    ],
)
def test_a_bad_rule_is_refused_with_its_text_and_why(text, message):
    with pytest.raises(ScopeError, match="scope rule") as raised:
        parse_rule(text)
    assert message in str(raised.value)


def test_a_bad_rule_in_the_configuration_names_the_key():
    with pytest.raises(ConfigError, match=r"\[crawler\].*scope rule 'ftp:x'"):
        config_from_mapping({"crawler": {"scope": ["ftp:x"]}})
    config = config_from_mapping({"crawler": {"scope": ["http://127.0.0.1:8000/docs/"]}})
    assert config.crawler.scope == ("http://127.0.0.1:8000/docs/",)


# ---------------------------------------------------------------------- the scope


def test_deny_wins_wherever_it_stands_and_the_first_admitting_rule_is_named():
    scope = Scope(["domain:example.org", "host:www.example.org", "deny:glob:*.pdf"])
    decision = scope.decide("http://www.example.org/a")
    assert decision.admitted and str(decision.rule) == "domain:example.org"
    assert scope.decide("http://www.example.org/a.pdf").reason == (
        "out of scope: denied by deny:glob:*.pdf"
    )
    denied = Scope(["deny:domain:ads.example.org", "domain:example.org"])
    assert denied.refusal("http://x.ads.example.org:8080/").endswith("deny:domain:ads.example.org")


def test_refusals_say_whether_the_host_the_port_or_the_path_missed():
    scope = Scope(["http://127.0.0.1:8000/docs/"])
    assert "host 10.1.1.1 is not in the scope" in scope.refusal("http://10.1.1.1:8000/docs/")
    assert "names 127.0.0.1 on other ports" in scope.refusal("http://127.0.0.1:8001/docs/")
    assert "path /admin/ is outside" in scope.refusal("http://127.0.0.1:8000/admin/")


def test_a_robots_txt_redirect_may_go_anywhere_on_a_named_origin_never_out_of_scope():
    scope = Scope(["http://127.0.0.1:8000/docs/", "deny:glob:*/secret*"])
    assert scope.robots_refusal("http://127.0.0.1:8000/robots/robots.txt") is None
    assert scope.robots_refusal("http://127.0.0.1:8001/robots.txt") is not None
    assert "denied" in scope.robots_refusal("http://127.0.0.1:8000/secret.txt")


def test_without_rules_the_seeds_sites_are_the_scope():
    seeds = ["http://www.example.org/start", "http://127.0.0.1:8000/docs/index.html"]
    scope = Scope.configured([], seeds)
    assert [str(rule) for rule in scope.rules] == ["host:www.example.org", "http://127.0.0.1:8000/"]
    assert {rule.source for rule in scope.rules} == {"seed"}
    assert scope.refusal("https://www.example.org/other") is None
    assert scope.refusal("http://127.0.0.1:8001/") is not None
    configured = Scope.configured(["domain:example.org"], seeds)  # rules win over seeds
    assert configured.refusal("http://127.0.0.1:8000/docs/") is not None
    assert Scope.configured(["deny:glob:*.pdf"], seeds).refusal("http://www.example.org/") is None


def test_the_scope_vouches_for_private_addresses_only_when_it_names_them():
    scope = Scope(["domain:example.org", "host:intranet.example.org", "domain:simweb.test"])
    assert not scope.vouches_for("evil.example.org", "127.0.0.1")  # a public domain rule
    assert scope.vouches_for("intranet.example.org", "10.0.0.7")  # the exact host
    assert scope.vouches_for("site3.simweb.test", "127.0.0.1")  # a never-public name
    assert Scope(["http://127.0.0.1:8000/"]).vouches_for("127.0.0.1", "127.0.0.1")
    assert Scope(["domain:corp.example", "net:10.0.0.0/8"]).vouches_for(
        "a.corp.example", "10.2.3.4"
    )
    assert not Scope().vouches_for("localhost", "127.0.0.1")


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("169.254.169.254", "link-local"),  # the cloud metadata service
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "non-global"),  # carrier-grade NAT
        ("::ffff:127.0.0.1", "loopback"),
        ("93.184.216.34", None),
    ],
)
def test_address_kinds(address, kind):
    assert non_public(address) == kind


class HostileResolver(AbstractResolver):
    """Answers every name with the given addresses (a rebinding or hostile DNS)."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.lookups: list[str] = []

    async def resolve(self, host, port=0, family=socket.AF_INET):
        self.lookups.append(host)
        return [
            {"hostname": host, "host": a, "port": port, "family": family, "proto": 0, "flags": 0}
            for a in self.addresses
        ]

    async def close(self) -> None:
        pass


async def test_the_guarded_resolver_keeps_public_answers_and_refuses_private_ones():
    guarded = GuardedResolver(HostileResolver("93.184.216.34", "127.0.0.1"), Scope().vouches_for)
    assert [entry["host"] for entry in await guarded.resolve("www.example.org", 80)] == [
        "93.184.216.34"
    ]
    only_private = GuardedResolver(HostileResolver("127.0.0.1"), Scope().vouches_for)
    with pytest.raises(AddressRefused, match=r"evil\.example\.org resolves to 127\.0\.0\.1"):
        await only_private.resolve("evil.example.org", 80)


# ---------------------------------------------------------------------- crawls


LOOPBACK = "127.0.0.1"


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[Site]:
    """A loopback server (tests/crawler_site.py) whose ``hits`` are its access log."""
    site = Site()
    await site.start()
    try:
        yield site
    finally:
        await site.stop()


def paths(site: Site) -> list[str]:
    return [hit.path for hit in site.hits]


async def test_a_dtd_on_another_port_of_an_in_scope_host_is_never_fetched(md, tmp_path):
    """The SSRF case of issue 16: the loader asks for a DTD on another port of 127.0.0.1."""
    async with serving() as other, serving() as site:
        dtd = other.url(LOOPBACK, "/evil.dtd")
        doc = f'<?xml version="1.0"?>\n<!DOCTYPE doc SYSTEM "{dtd}">\n<doc/>'.encode()
        home = site.html(LOOPBACK, "/", ["/doc.xml"])
        site.add(LOOPBACK, "/doc.xml", Page(doc, content_type="application/xml"))
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope([home]), clock=md.clock)
        crawler.sink = crawler.make_loader(tmp_path / "docs", md, LoaderSettings())
        crawler.submit(home)
        await crawler.run()
        assert other.hits == []  # not the DTD, not the other port's robots.txt
        assert "/doc.xml" in paths(site)
        entity = other.url(LOOPBACK, "/entity.ent")
        assert not crawler.request(entity, referrer_id=None)
        rejected = {link.url: link.reason for link in md.rejected()}
        assert "on other ports" in rejected[entity]


async def test_a_redirect_out_of_scope_is_recorded_not_followed(md):
    async with serving() as other, serving() as site:
        elsewhere = other.html(LOOPBACK, "/")
        home = site.html(LOOPBACK, "/", ["/moved"])
        site.add(LOOPBACK, "/moved", Page(status=302, headers={"Location": elsewhere}))
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope([home]), clock=md.clock)
        crawler.submit(home)
        await crawler.run()
        assert other.hits == []
        moved = md.page_by_url(site.url(LOOPBACK, "/moved"))
        assert moved.page_type is PageType.ERROR
        assert moved.reason.startswith("redirect refused: out of scope")
        assert md.rejected()[0].url == elsewhere


async def test_a_name_resolving_into_loopback_is_refused_unless_the_scope_names_it(md):
    async with serving() as site:
        url = site.html("evil.example.org", "/", ["/a.html"])
        site.html("evil.example.org", "/a.html")
        failed = []
        hostile = HostileResolver(LOOPBACK)
        crawler = Crawler(
            md,
            CrawlerSettings(**FAST),
            Scope(["domain:example.org:*"]),
            clock=md.clock,
            resolver=hostile,
        )
        crawler.signals.connect(signals.page_failed, failed.append)
        crawler.submit(url, Level.DISCOVERY)
        await crawler.run()
        assert site.hits == []  # neither robots.txt nor the page
        assert hostile.lookups  # refused at connection time, after resolution
        assert "resolves to 127.0.0.1, which is a loopback address" in failed[0].result.reason

        named = Scope([f"host:evil.example.org:{site.port}"])  # named exactly: let through
        crawler = Crawler(md, CrawlerSettings(**FAST), named, clock=md.clock, resolver=hostile)
        crawler.submit(url, Level.REFRESH, reload=True)
        await crawler.run()
        assert md.page_by_url(url).page_type is PageType.HTML and "/" in paths(site)


async def test_an_address_in_the_url_is_checked_too(md):
    async with serving() as site:
        home = site.html(LOOPBACK, "/")
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope(), clock=md.clock)  # admits all
        crawler.submit(home)
        await crawler.run()
        assert site.hits == []
        assert "127.0.0.1 is a loopback address" in md.page_by_url(home).reason


async def test_a_page_of_100000_links_does_not_spend_its_hosts_budget(md):
    async with serving() as site:
        home = site.html(LOOPBACK, "/", [f"/p/{n}" for n in range(100_000)])
        settings = CrawlerSettings(**FAST, host_page_budget=50)
        crawler = Crawler(md, settings, Scope([home]), clock=md.clock)
        crawler.signals.connect(signals.page_fetched, lambda event: crawler.stop())
        crawler.submit(home)
        await crawler.run()
    assert not [link for link in md.rejected(200_000) if "budget" in link.reason]
    assert len(crawler.frontier) >= 99_000  # every link queued
    assert crawler.submit(site.url(LOOPBACK, "/later"))  # later links of the host: admitted


# ---------------------------------------------------------------------- trap shapes


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://a.example/a/b/a/b/a/b/", "path segment 'a' repeated 3 times"),
        ("http://a.example/x/x/x", "path segment 'x' repeated 3 times"),
        ("http://a.example/s?f=1&f=2&f=3", "query parameter 'f' repeated 3 times"),
        ("http://a.example/s?" + "&".join(f"p{n}=1" for n in range(17)), "17 query parameters"),
        ("http://a.example/cal/2031/01/", "date 2031-01 outside the calendar years"),
        ("http://a.example/cal?day=2031-01-05", "date 2031-01"),
        ("http://a.example/cal/19120105.html", "date 1912-01"),
        ("http://a.example/" + "d/" * 25, "path segments"),
        ("http://a.example/" + "x" * 1100, "characters"),
    ],
)
def test_trap_shapes_are_refused(url, reason):
    guard = TrapGuard(last_calendar_year=2028, max_path_segments=24)
    assert reason in guard.refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://a.example/blog/2026/05/12/post.html",
        "http://a.example/docs/en/guide/en/index.html",
        "http://a.example/article/12345678",
        "http://a.example/s?q=xml&page=2&sort=date",
        "http://a.example/product/300012",
    ],
)
def test_ordinary_urls_pass_the_trap_guards(url):
    assert TrapGuard(last_calendar_year=2028).refusal(url) is None


# ---------------------------------------------------------------------- the command line


def xyleme(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *map(str, args)])
    return result.exit_code, result.output


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "repo"
    assert xyleme(folder, "init")[0] == 0
    (folder / "xyleme.toml").write_text(
        '[crawler]\nscope = ["http://127.0.0.1:8000/docs/", "domain:example.org", '
        '"deny:glob:*/private/*"]\n'
    )
    return folder


def test_scope_show_prints_the_rules_in_order_with_their_kind(repo):
    code, output = xyleme(repo, "scope", "show")
    assert code == 0
    lines = [line.split() for line in output.splitlines()[2:5]]
    assert [line[:4] for line in lines] == [
        ["1", "origin", "admit", "http://127.0.0.1:8000/docs/"],
        ["2", "domain", "admit", "domain:example.org"],
        ["3", "glob", "deny", "deny:glob:*/private/*"],
    ]
    rows = json.loads(xyleme(repo, "scope", "show", "--json")[1])
    assert rows[0] == {
        "position": 1,
        "kind": "origin",
        "effect": "admit",
        "rule": "http://127.0.0.1:8000/docs/",
        "source": "[crawler] scope",
    }


def test_scope_test_names_the_deciding_rule_and_exits_0_1_or_2(repo):
    code, output = xyleme(repo, "scope", "test", "https://www.example.org/a")
    assert code == 0 and "admitted" in output and "rule 2 (domain, [crawler] scope)" in output
    code, output = xyleme(repo, "scope", "test", "http://127.0.0.1:8001/docs/")
    assert code == 1 and "on other ports" in output
    code, output = xyleme(repo, "scope", "test", "http://www.example.org/private/x")
    assert code == 1 and "denied by deny:glob:*/private/*" in output
    code, output = xyleme(repo, "scope", "test", "http://example.org/a/a/a/x")
    assert code == 1 and "spider trap" in output
    code, output = xyleme(repo, "scope", "test", "mailto:someone@example.org")
    assert code == 2 and "not a URL the crawler can fetch" in output
    verdict = json.loads(xyleme(repo, "scope", "test", "http://127.0.0.1:8000/docs", "--json")[1])
    assert verdict["admitted"] and verdict["position"] == 1 and verdict["kind"] == "origin"


def test_an_out_of_scope_seed_is_refused_and_nothing_is_added(repo):
    code, output = xyleme(
        repo, "seed", "add", "http://www.example.org/", "http://elsewhere.example/"
    )
    assert code == 2
    assert "seed http://elsewhere.example/ refused: out of scope" in output
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert md.get_state("seeds") is None
    assert xyleme(repo, "seed", "add", "http://www.example.org/")[0] == 0


def test_a_start_with_no_seed_in_scope_is_refused(repo):
    (repo / "xyleme.toml").write_text("")  # no rule: any seed is its own scope
    assert xyleme(repo, "seed", "add", "http://elsewhere.example/")[0] == 0
    (repo / "xyleme.toml").write_text('[crawler]\nscope = ["domain:example.org"]\n')
    code, output = xyleme(repo, "run")
    assert code == 1
    assert "no seed is in scope" in output and "elsewhere.example" in output


def test_a_running_daemon_refuses_an_out_of_scope_seed_and_keeps_its_scope_current(repo):
    daemon = Daemon(repo, load_config(repo / "xyleme.toml"))
    daemon.open()
    try:
        answer = daemon.add_seeds(["http://www.example.org/", "http://elsewhere.example/"])
        assert not answer.ok and "elsewhere.example/ refused: out of scope" in answer.message
        assert daemon.add_seeds(["http://www.example.org/"]).ok
        assert daemon.crawler.scope.refusal("http://127.0.0.1:8000/docs/x") is None
    finally:
        daemon.close()
    with Metadata.open(repo / "metadata.db", readonly=True) as md:
        assert commands.stored_seeds(md) == ["http://www.example.org/"]


def test_the_older_daemon_scope_key_still_works_with_a_warning(caplog):
    config = config_from_mapping({"daemon": {"scope": ["simweb.test"]}})
    scope = check_start(config, ["http://site0.simweb.test/"])
    assert [(str(rule), rule.source) for rule in scope.rules] == [
        ("domain:simweb.test", "[daemon] scope")
    ]
    assert "[daemon] scope is deprecated: move its entries to [crawler] scope" in caplog.text
    check_start(config_from_mapping({}), [])
    assert "no seed yet" in caplog.text


def test_crawl_refuses_a_seed_out_of_the_repositorys_scope_before_any_fetch(repo):
    code, output = xyleme(repo, "crawl", "http://elsewhere.example/")
    assert code == 2 and "seed refused: http://elsewhere.example/: out of scope" in output
    code, output = xyleme(repo, "crawl", "http://a.example/", "--scope", "ftp:x")
    assert code == 2 and "unknown kind 'ftp'" in output


@pytest.mark.parametrize("dtd_status", [200, 404])
async def test_links_of_a_document_that_waited_for_its_dtd_are_followed(md, tmp_path, dtd_status):
    """The document is parked until its DTD arrives (or fails): its links count all the same."""
    xhtml = (
        b'<?xml version="1.0"?>\n<!DOCTYPE html SYSTEM "/page.dtd">\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml"><body><a href="/next.html">n</a></body></html>'
    )
    async with serving() as site:
        home = site.html(LOOPBACK, "/", ["/doc.xhtml"])
        site.add(LOOPBACK, "/doc.xhtml", Page(xhtml, content_type="application/xhtml+xml"))
        dtd = b"<!ELEMENT html ANY><!ELEMENT body ANY><!ELEMENT a ANY>"
        site.add(LOOPBACK, "/page.dtd", Page(dtd, dtd_status, "application/xml-dtd"))
        site.html(LOOPBACK, "/next.html")
        crawler = Crawler(md, CrawlerSettings(**FAST), Scope([home]), clock=md.clock)
        crawler.sink = crawler.make_loader(tmp_path / "docs", md, LoaderSettings())
        crawler.submit(home)
        await crawler.run()
        assert "/page.dtd" in paths(site) and "/next.html" in paths(site)
