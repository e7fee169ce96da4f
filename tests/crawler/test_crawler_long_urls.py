"""A link too long for a URL-Id is judged by its scope first (the real-web trial: rustdoc's
``play.rust-lang.org`` links of 2–6 kB were "invalid URLs", though no crawl of the book
would ever fetch them: they are out of scope, whatever their length)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader import LoaderSettings
from metadata import MAX_URL_LENGTH, URL_TOO_LONG, URLTooLong, canonicalize_url
from tests.crawler.test_crawler_scope import FAST, LOOPBACK, serving
from tests.crawler_site import Page
from xyleme.crawler import Crawler, CrawlerSettings, Scope

OFF_SITE = "https://play.example.org/?code=" + "x" * (MAX_URL_LENGTH + 100)
HUGE_OFF_SITE = "https://play.example.org/?code=" + "y" * (5 * MAX_URL_LENGTH)
SETTINGS = {**FAST, "max_url_length": 65_536}  # the trap guard's own length rule set aside


async def crawl(md, home: str, documents: Path | None = None) -> None:
    """Crawl from ``home`` within its site (and load its XML into ``documents``)."""
    crawler = Crawler(md, CrawlerSettings(**SETTINGS), Scope([home]), clock=md.clock)
    if documents is not None:
        crawler.sink = crawler.make_loader(documents, md, LoaderSettings())
    crawler.submit(home)
    await crawler.run()


@pytest.mark.parametrize("url", [OFF_SITE, HUGE_OFF_SITE])
def test_a_url_too_long_still_has_its_canonical_form(url):
    with pytest.raises(URLTooLong) as caught:
        canonicalize_url(url.replace("play.example.org", "PLAY.Example.org"))
    assert caught.value.reason == URL_TOO_LONG
    assert caught.value.canonical.startswith("https://play.example.org/?code=")


async def test_an_over_long_off_site_link_is_out_of_scope_and_an_in_scope_one_too_long(md):
    async with serving() as site:
        own = site.url(LOOPBACK, "/?q=" + "z" * MAX_URL_LENGTH)
        await crawl(md, site.html(LOOPBACK, "/", [OFF_SITE, HUGE_OFF_SITE, own]))
    reasons = {link.url[:40]: link.reason for link in md.rejected()}
    assert reasons["https://play.example.org/?code=xxxxxxxxx"].startswith(
        "out of scope: host play.example.org"
    )
    assert reasons["https://play.example.org/?code=yyyyyyyyy"].startswith("out of scope")
    assert reasons[own[:40]] == f"invalid URL: {URL_TOO_LONG}"  # admitted, but no URL-Id
    assert [hit.path for hit in site.hits] == ["/robots.txt", "/"]


async def test_the_same_rule_for_the_links_of_an_xml_document(md, tmp_path):
    async with serving() as site:
        own = site.url(LOOPBACK, "/?q=" + "z" * MAX_URL_LENGTH)
        doc = (
            '<r xmlns:xlink="http://www.w3.org/1999/xlink">'
            f'<a xlink:href="{OFF_SITE}"/><a xlink:href="{own}"/></r>'
        ).encode()
        site.add(LOOPBACK, "/doc.xml", Page(doc, content_type="application/xml"))
        await crawl(md, site.html(LOOPBACK, "/", ["/doc.xml"]), tmp_path / "docs")
    reasons = {link.url[:40]: link.reason for link in md.rejected()}
    assert reasons[OFF_SITE[:40]].startswith("out of scope: host play.example.org")
    assert URL_TOO_LONG in reasons[own[:40]]
