"""A DTD module named by a relative system id beside a catalogued DTD is found beside it.

Found by the trial on real folders (docs/realsite.md, "Real folders"): DocBook 4.1.2's
``docbookx.dtd`` names its notations module by a public id its own catalog spells otherwise
(``DocBook XML Notations`` against ``DocBook Notations``), so only the relative system id
``dbnotnx.mod`` finds it, as libxml2 does; every DocBook 4.1/4.1.2 document failed with
"Entity 'notation.class' not defined". The catalog here is made by the test.
"""

from __future__ import annotations

from pathlib import Path

from loader import Check, LoadOutcome
from loader.catalog import Catalog
from tests.loader.test_loader_catalog import SITE, make_loader
from tests.loader_fakes import FakeFetcher, FakeMetadata

SYSTEM = "http://publisher.test/dtd/4.1.2/book.dtd"
BOOK_DTD = b"""<!ENTITY % notations PUBLIC "-//Example//ENTITIES Book XML Notations//EN"
"notations.mod">
%notations;
<!ELEMENT book (title)>
<!ELEMENT title (#PCDATA)>
<!ATTLIST title format (%notation.class;) #IMPLIED>
"""
DOCUMENT = (
    '<!DOCTYPE book PUBLIC "-//Example//DTD Book V4.1.2//EN" "{system}">'
    '<book><title format="{notation}">A book</title></book>'
)
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


def test_the_modules_declarations_hold_for_the_documents_without_a_fetch(tmp_path):
    """A notation the module declares is valid, another is not: the module was read."""
    md, fetcher = FakeMetadata(), FakeFetcher()
    loader = make_loader(tmp_path, md, fetcher, [write_catalog(tmp_path)])
    verdicts = {}
    for notation in ("PNG", "TIFF"):
        url = f"{SITE}{notation}.xml"
        body = DOCUMENT.format(system=SYSTEM, notation=notation).encode()
        result = loader.load(md.id_for(url), url, body, {}, 0.0)
        verdicts[notation] = (result.outcome, result.validity.dtd)
    assert verdicts == {
        "PNG": (LoadOutcome.STORED, Check.VALID),
        "TIFF": (LoadOutcome.STORED, Check.INVALID),
    }
    assert fetcher.requests == []
