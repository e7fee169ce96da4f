"""A DTD module named by a relative system id beside a catalogued DTD is found beside it.

Found by the trial on real folders (docs/realsite.md, "Real folders"): DocBook 4.1.2's
``docbookx.dtd`` names its notations module by a public id its own catalog spells otherwise
(``DocBook XML Notations`` against ``DocBook Notations``), so only the relative system id
``dbnotnx.mod`` finds it, as libxml2 does; every DocBook 4.1/4.1.2 document failed with
"Entity 'notation.class' not defined". The catalog here is made by the test.
"""

from __future__ import annotations

from pathlib import Path

from loader import Check, Loader, LoaderSettings, LoadOutcome
from loader.catalog import Catalog
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

SITE = "http://docs.test/"
SYSTEM = "http://publisher.test/dtd/4.1.2/book.dtd"
BOOK_DTD = b"""<!ENTITY % notations PUBLIC "-//Example//ENTITIES Book XML Notations//EN"
"notations.mod">
%notations;
<!ELEMENT book (title)>
<!ELEMENT title (#PCDATA)>
<!ATTLIST title format (%notation.class;) #IMPLIED>
"""
NOTATIONS = b"""<!NOTATION GIF SYSTEM "gif"><!NOTATION PNG SYSTEM "png">
<!ENTITY % notation.class "GIF | PNG">
"""


def write_catalog(folder: Path) -> Path:
    """The DTD and its module in one folder; the catalog names the DTD by its system id and
    the module by a public id that is not the one the DTD uses."""
    dtd = folder / "4.1.2"
    dtd.mkdir()
    (dtd / "book.dtd").write_bytes(BOOK_DTD)
    (dtd / "notations.mod").write_bytes(NOTATIONS)
    (dtd / "secret.txt").write_bytes(b"not a module")
    catalog = folder / "catalog.xml"
    catalog.write_text(
        '<catalog xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog" xml:base="4.1.2/">'
        f'<system systemId="{SYSTEM}" uri="book.dtd"/>'
        '<public publicId="-//Example//ENTITIES Book Notations//EN" uri="notations.mod"/>'
        "</catalog>"
    )
    return catalog


def test_a_module_beside_a_catalogued_dtd_is_found_by_its_relative_name(tmp_path):
    catalog = Catalog(required=[write_catalog(tmp_path)])
    folder = SYSTEM.rsplit("/", 1)[0]
    assert catalog.resolve(None, f"{folder}/notations.mod") is None  # no DTD seen there yet
    catalog = Catalog(required=[tmp_path / "catalog.xml"])
    assert catalog.resolve(None, SYSTEM) == tmp_path / "4.1.2" / "book.dtd"
    assert catalog.resolve(None, f"{folder}/notations.mod") == tmp_path / "4.1.2" / "notations.mod"
    assert catalog.resolve(None, f"{folder}/missing.mod") is None
    assert catalog.resolve(None, f"{folder}/..%2Fcatalog.xml") is None  # never out of it
    assert catalog.resolve(None, "http://other.test/dtd/4.1.2/notations.mod") is None


def test_a_document_of_such_a_dtd_is_stored_valid_without_a_fetch(tmp_path):
    md = FakeMetadata()
    fetcher = FakeFetcher()
    settings = LoaderSettings(system_catalog=False, catalog_files=(str(write_catalog(tmp_path)),))
    loader = Loader(
        tmp_path / "documents",
        md,
        fetcher,
        ManualClock(0.0),
        settings,
        in_scope=lambda url: url.startswith(SITE),
    )
    url = f"{SITE}book.xml"
    body = (
        f'<!DOCTYPE book PUBLIC "-//Example//DTD Book V4.1.2//EN" "{SYSTEM}">'
        '<book><title format="PNG">A book</title></book>'
    ).encode()
    result = loader.load(md.id_for(url), url, body, {}, 0.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.VALID
    assert fetcher.requests == []
