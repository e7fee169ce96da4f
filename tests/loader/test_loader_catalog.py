"""XML catalogs first, then the crawler: a well-known DTD is never fetched from its publisher;
an XHTML document without its DTD still knows the XHTML entities (issue 16).

The catalogs are fixtures the tests write: nothing depends on the machine's /etc/xml.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from lxml import etree

from loader import Check, Loader, LoaderSettings, LoadOutcome, parse_tree
from loader.catalog import Catalog, CatalogError, system_catalog_files
from loader.dependencies import XHTML_ENTITIES
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

SITE = "http://docs.test/"
BOOK_PUBLIC = "-//Example//DTD Book V1//EN"
BOOK_SYSTEM = "http://publisher.test/dtd/book.dtd"
BOOK_DTD = b"""<!ELEMENT book (title)>
<!ELEMENT title (#PCDATA)>
<!ENTITY % chars PUBLIC "-//Example//ENTITIES Book Characters//EN" "chars.ent">
%chars;
"""
CHARS = b'<!ENTITY mdash "&#8212;">'
XHTML_STRICT = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"'
    ' "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">'
)


def write_catalogs(folder: Path) -> Path:
    """A root catalog that delegates to a second one and names a third as next."""
    (folder / "dtd").mkdir()
    (folder / "dtd" / "book.dtd").write_bytes(BOOK_DTD)
    (folder / "dtd" / "chars.ent").write_bytes(CHARS)
    ns = 'xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog"'
    (folder / "books.xml").write_text(
        f'<catalog {ns} xml:base="dtd/">'
        f'<public publicId="{BOOK_PUBLIC}" uri="book.dtd"/>'
        '<group prefer="public"><public publicId="-//Example//ENTITIES  Book Characters//EN"'
        ' uri="chars.ent"/></group></catalog>'
    )
    (folder / "next.xml").write_text(
        f'<catalog {ns}><rewriteSystem systemIdStartString="http://mirror.test/"'
        f' rewritePrefix="{(folder / "dtd").as_uri()}/"/>'
        '<systemSuffix systemIdSuffix="/suffix/book.dtd" uri="dtd/book.dtd"/>'
        '<system systemId="http://remote.test/x.dtd" uri="http://remote.test/copy.dtd"/>'
        "</catalog>"
    )
    root = folder / "catalog.xml"
    root.write_text(
        f'<catalog {ns}><delegatePublic publicIdStartString="-//Example//" catalog="books.xml"/>'
        '<nextCatalog catalog="missing.xml"/><nextCatalog catalog="next.xml"/></catalog>'
    )
    return root


@pytest.fixture
def catalog_file(tmp_path):
    folder = tmp_path / "catalogs"
    folder.mkdir()
    return write_catalogs(folder)


@pytest.fixture
def md():
    return FakeMetadata()


def make_loader(tmp_path, md, fetcher, catalogs=()) -> Loader:
    settings = LoaderSettings(system_catalog=False, catalog_files=tuple(map(str, catalogs)))
    return Loader(
        tmp_path / "documents",
        md,
        fetcher,
        ManualClock(0.0),
        settings,
        in_scope=lambda url: url.startswith(SITE),
    )


def test_catalog_entries_resolve_as_the_specification_says(catalog_file):
    catalog = Catalog(required=[catalog_file])
    dtd = catalog_file.parent / "dtd" / "book.dtd"
    assert catalog.resolve(BOOK_PUBLIC, BOOK_SYSTEM) == dtd  # delegated public id
    assert catalog.resolve(" -//Example//DTD  Book V1//EN ", None) == dtd  # spaces collapse
    assert catalog.resolve(None, "http://mirror.test/book.dtd") == dtd  # rewriteSystem
    assert catalog.resolve(None, "http://any.test/suffix/book.dtd") == dtd  # systemSuffix
    assert catalog.resolve(None, "http://remote.test/x.dtd") is None  # never a fetch
    assert catalog.resolve("-//Example//DTD Other//EN", None) is None  # delegation is final
    assert catalog.body(BOOK_PUBLIC, None) == BOOK_DTD


def test_a_catalogued_dtd_is_never_asked_of_the_crawler(tmp_path, md, catalog_file):
    fetcher = FakeFetcher()
    loader = make_loader(tmp_path, md, fetcher, [catalog_file])
    url = f"{SITE}book.xml"
    body = (
        f'<!DOCTYPE book PUBLIC "{BOOK_PUBLIC}" "{BOOK_SYSTEM}">'
        "<book><title>A&mdash;B</title></book>"
    ).encode()
    result = loader.load(md.id_for(url), url, body, {}, 0.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.VALID
    assert fetcher.requests == []
    assert md.dependencies_of(result.url_id) == []  # nothing for the crawler to fetch
    invalid = body.replace(b"<title>A&mdash;B</title>", b"")
    again = loader.load(md.id_for(url), url, invalid, {}, 1.0)
    assert again.validity.dtd is Check.INVALID


def test_the_system_catalog_is_read_as_libxml2_finds_it(monkeypatch, catalog_file):
    monkeypatch.setenv("XML_CATALOG_FILES", f"{catalog_file} /nowhere/catalog")
    files = system_catalog_files()
    assert files == [str(catalog_file), "/nowhere/catalog"]
    catalog = Catalog(files)  # an unreadable system catalog is skipped
    assert catalog.resolve(BOOK_PUBLIC, None) == catalog_file.parent / "dtd" / "book.dtd"


def test_a_user_catalog_that_cannot_be_read_is_a_clear_error(tmp_path, md):
    broken = tmp_path / "catalog.xml"
    broken.write_bytes(b"<catalog")
    with pytest.raises(CatalogError, match=r"XML catalog .*catalog.xml: cannot be read"):
        make_loader(tmp_path, md, FakeFetcher(), [broken])
    with pytest.raises(CatalogError, match=r"nothing\.xml"):
        make_loader(tmp_path, md, FakeFetcher(), [tmp_path / "nothing.xml"])


def test_xhtml_without_its_dtd_keeps_the_named_entities_and_its_links(tmp_path, md):
    fetcher = FakeFetcher()
    loader = make_loader(tmp_path, md, fetcher)
    url = f"{SITE}page.xhtml"
    body = (
        XHTML_STRICT + '<html xmlns="http://www.w3.org/1999/xhtml"><body>'
        '<p>caf&eacute;&nbsp;&mdash; &hellip;</p><a href="next.xhtml">next</a></body></html>'
    ).encode()
    headers = {"Content-Type": "application/xhtml+xml"}
    result = loader.load(md.id_for(url), url, body, headers, 0.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.NOT_VALIDATED
    assert result.validity.reason == (
        "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd not available: outside the crawl scope"
    )
    assert md.links_of(result.url_id) == [f"{SITE}next.xhtml"]
    assert fetcher.requests == []
    parsed = parse_tree(body, url, None, loader.settings, loader.resolver())
    assert parsed.tree.findtext(".//{*}p") == "caf\u00e9\u00a0\u2014 \u2026"


def test_the_xhtml_entity_stand_in_declares_one_character_each():
    dtd = etree.DTD(io.BytesIO(XHTML_ENTITIES))
    entities = {e.name: e.content for e in dtd.iterentities()}
    assert (entities["nbsp"], entities["eacute"]) == ("\u00a0", "\u00e9")
    assert all(len(content) == 1 for content in entities.values())
    assert len(entities) == 248  # the 252 of HTML 4 less the XML predefined amp, lt, gt, quot
