"""Which pages are sitemaps, kept per page (schema version 8): a refresh of a URL-Id alone
reads a ``sitemap.xml.gz`` under the sitemap rules again (tests/crawler/test_crawler_sitemaps.py
shows the crawl side)."""

from metadata import Metadata, schema
from tests.stores import raw


def test_marked_pages_are_sitemaps_once_each(md):
    assert md.sitemap_urls() == set()
    ids = md.ids_for([f"http://a.test/{n}" for n in range(5)])
    md.mark_sitemaps([ids[1], ids[3], ids[1]])
    md.mark_sitemaps([ids[3]])  # again: no error, no second row
    md.mark_sitemaps([])
    assert md.sitemap_urls() == {"http://a.test/1", "http://a.test/3"}


def test_a_version_7_store_gains_the_table_and_keeps_its_pages(store_url):
    with Metadata.create(store_url) as md:
        md.ids_for(["http://a.test/sitemap.xml.gz"])
    with raw(store_url) as conn:  # the store as version 7 wrote it
        conn.execute("DROP TABLE sitemaps")
        conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    with Metadata.open(store_url) as md:
        assert md.url_of(1) == "http://a.test/sitemap.xml.gz"
        assert md.sitemap_urls() == set()
        md.mark_sitemaps([1])
        assert md.sitemap_urls() == {"http://a.test/sitemap.xml.gz"}
    with raw(store_url) as conn:
        assert schema.schema_version(conn) == schema.latest_version() >= 8
