"""The road from a fetch to a stored XML version takes no round trip (issue 19).

A body is hashed once (the fetch's MD5 reaches the store), an XML document's links reach the
crawler's queue with their URL-Ids (never read back as URLs and looked up again), a DTD the
loader asked for goes straight back to it, and refused links are written with their batch.
"""

from __future__ import annotations

import asyncio
import hashlib

from loader import Loader, LoadOutcome
from loader import loading as loader_loading
from tests.crawler_fixtures import make_crawler
from tests.crawler_site import Page
from xyleme.crawler import Scope

DTD = b"<!ELEMENT doc (item*)><!ELEMENT item (#PCDATA)><!ATTLIST item href CDATA #IMPLIED>"


class CrawlerFetcher:
    """The loader's DependencyFetcher in the daemon's shape: straight to the crawler."""

    crawler = None

    def request(self, url: str, referrer_id: int) -> None:
        self.crawler.request(url, referrer_id)


class Recording(Loader):
    """The real loader, remembering what the crawler handed it and how."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.md5s: list[str | None] = []
        self.arrived: list[str] = []
        self.results = []

    def load_many(self, fetched):
        self.md5s += [item.md5 for item in fetched]
        results = super().load_many(fetched)
        self.results += results
        return results

    def dependency_arrived(self, url_id, url, body, fetched_at):
        self.arrived.append(url)
        result = super().dependency_arrived(url_id, url, body, fetched_at)
        self.results.append(result)
        return result


def xml_site(site) -> tuple[str, list[str]]:
    """A catalog (with a DTD) linking to two XML items, one of them out of scope."""
    items = [site.url("a.test", "/item1.xml"), "http://elsewhere.example/item2.xml"]
    links = "".join(f'<item href="{url}">x</item>' for url in items)
    site.add(
        "a.test",
        "/catalog.xml",
        Page(
            f'<?xml version="1.0"?><!DOCTYPE doc SYSTEM "doc.dtd"><doc>{links}</doc>'.encode(),
            200,
            "application/xml",
        ),
    )
    site.add("a.test", "/doc.dtd", Page(DTD, 200, "application/xml-dtd"))
    site.add("a.test", "/item1.xml", Page(b"<doc><item>one</item></doc>", 200, "application/xml"))
    return site.url("a.test", "/catalog.xml"), items


async def crawl(site, md, tmp_path, monkeypatch):
    catalog, items = xml_site(site)
    hashed: list[int] = []
    real_md5_of = loader_loading.md5_of
    monkeypatch.setattr(
        loader_loading, "md5_of", lambda body: hashed.append(1) or real_md5_of(body)
    )
    fetcher = CrawlerFetcher()
    loader = Recording(
        tmp_path / "documents", md, fetcher, md.clock, link_refusal=None, in_scope=lambda _: True
    )
    crawler = make_crawler(md, scope=Scope(["domain:test:*"]), sink=loader)
    fetcher.crawler = crawler
    lookups: list[list[str]] = []
    real_ids_for = md.ids_for

    def ids_for(urls, **kwargs):
        urls = list(urls)
        lookups.append(urls)
        return real_ids_for(urls, **kwargs)

    monkeypatch.setattr(md, "ids_for", ids_for)
    read_back: list[int] = []  # the crawler used to read a stored document's children back
    monkeypatch.setattr(md, "children", read_back.append)
    crawler.submit(catalog)
    await asyncio.wait_for(crawler.run(), 30)
    monkeypatch.undo()
    assert read_back == []
    return loader, catalog, items, hashed, lookups


async def test_a_body_is_hashed_once_and_its_links_keep_their_ids(site, md, tmp_path, monkeypatch):
    loader, catalog, items, hashed, lookups = await crawl(site, md, tmp_path, monkeypatch)
    catalog_id = md.id_for(catalog, create=False)
    everything = [*loader.results, *(r for result in loader.results for r in result.retried)]
    [catalog_result] = [
        r for r in everything if r.url_id == catalog_id and r.outcome is LoadOutcome.STORED
    ]
    item_id, other_id = (md.id_for(url, create=False) for url in items)
    # this loader admits every link; the crawler refuses the out-of-scope one when scouting
    assert catalog_result.children == ((item_id, items[0]), (other_id, items[1]))
    assert md.children(catalog_id).tolist() == [item_id, other_id]
    # the item was fetched and stored under the id the loader gave it: its URL was looked up
    # once (by the loader, writing the catalog's links), never again by the crawler's writer
    assert (
        loader.repository.latest(item_id).md5
        == hashlib.md5(b"<doc><item>one</item></doc>").hexdigest()
    )
    assert sum(items[0] in urls for urls in lookups) == 1
    # every body came with the MD5 of its fetch, and the loader hashed none again
    assert loader.md5s and None not in loader.md5s
    assert hashed == []
    # the DTD the loader asked for went straight back to it
    assert loader.arrived == [site.url("a.test", "/doc.dtd")]
    assert md.rejected()[0].url == items[1]


async def test_refused_links_are_written_with_their_batch(site, md, monkeypatch):
    links = [f"http://elsewhere.example/{n}.html" for n in range(5)]
    home = site.html("a.test", "/", links)
    calls: list[str] = []
    monkeypatch.setattr(md, "reject", lambda *args: calls.append("reject"))
    real_reject_many = md.reject_many

    def reject_many(refusals):
        refusals = list(refusals)
        calls.append(f"reject_many {len(refusals)}")
        real_reject_many(refusals)

    monkeypatch.setattr(md, "reject_many", reject_many)
    crawler = make_crawler(md)
    crawler.submit(home)
    await asyncio.wait_for(crawler.run(), 30)
    assert "reject" not in calls  # never one transaction per refused link
    assert "reject_many 5" in calls
    assert sorted(link.url for link in md.rejected()) == links
