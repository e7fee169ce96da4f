"""An external DTD is read once per loader (loader.dtdreuse): later documents are parsed
against a stand-in and validated with the kept DTD, with exactly the results of a full parse.

The DTDs are fixtures the tests write (a user catalog, and the dependency cache): nothing
depends on the machine's /etc/xml.
"""

from __future__ import annotations

import pytest
from lxml import etree

from loader import Check, Loader, LoaderSettings, LoadOutcome, parse_tree
from loader.catalog import Catalog
from loader.dependencies import CacheResolver, DependencyCache
from loader.dtdreuse import DtdReuse
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

SITE = "http://docs.test/"
PUBLIC = "-//Example//DTD Manual V1//EN"
SYSTEM = "http://publisher.test/dtd/manual.dtd"
MANUAL_DTD = b"""<!ENTITY % chars PUBLIC "-//Example//ENTITIES Manual Characters//EN" "chars.ent">
%chars;
<!ENTITY % local.attrs "">
<!ELEMENT manual (title, section*)>
<!ATTLIST manual xmlns CDATA #FIXED "urn:example:manual" id ID #IMPLIED>
<!ELEMENT title (#PCDATA | em)*>
<!ELEMENT em (#PCDATA)>
<!ELEMENT section (title, para*)>
<!ATTLIST section id ID #REQUIRED level (1|2|3) "1" %local.attrs;>
<!ELEMENT para (#PCDATA | see | em)*>
<!ELEMENT see EMPTY>
<!ATTLIST see ref IDREF #REQUIRED href CDATA #IMPLIED>
<!ENTITY version "1.0&mdash;beta">
"""
CHARS = b'<!ENTITY mdash "&#8212;"><!ENTITY hellip "&#8230;"><!ENTITY % unused "IGNORE">'
DOCTYPE = f'<!DOCTYPE manual PUBLIC "{PUBLIC}" "{SYSTEM}"'
VALID = (
    '<manual id="m"><title>Manual &version;</title>'
    '<section id="s1" level="2"><title>One&mdash;</title>'
    '<para>See <see ref="s2" href="two.xml"/>&hellip;</para></section>'
    '<section id="s2"><title>Two</title><para><em>x</em></para></section></manual>'
)
VARIANTS = {
    "valid": DOCTYPE + ">" + VALID,
    "own entities": DOCTYPE
    + ' [\n<!ENTITY product "Xy&mdash;leme"><!-- c -->\n]>'
    + VALID.replace("Two", "&product;"),
    "entity with markup": DOCTYPE
    + ' [<!ENTITY m "<em>hi</em> &hellip;">]>'
    + VALID.replace("<em>x</em>", "&m;"),
    "latin-1": '<?xml version="1.0" encoding="ISO-8859-1"?>'
    + DOCTYPE
    + ">"
    + VALID.replace("Two", "Tw\u00e9"),
    "duplicate id": DOCTYPE + ">" + VALID.replace('id="s2"', 'id="s1"'),
    "dangling idref": DOCTYPE + ">" + VALID.replace('ref="s2"', 'ref="s9"'),
    "wrong root name": DOCTYPE.replace("DOCTYPE manual", "DOCTYPE book") + ">" + VALID,
    "undeclared child": DOCTYPE + ">" + VALID.replace("<em>x</em>", "<bold/>"),
    "bad enumeration": DOCTYPE + ">" + VALID.replace('level="2"', 'level="7"'),
    "spaces an id loses": DOCTYPE + ">" + VALID.replace('id="s2"', 'id=" s2 "'),
    "character reference in an id": DOCTYPE + ">" + VALID.replace('id="s2"', 'id="s&#50;"'),
    "undeclared entity": DOCTYPE + ">" + VALID.replace("&hellip;", "&nosuch;"),
    "parameter entity used as general": DOCTYPE + ">" + VALID.replace("&hellip;", "&unused;"),
    "standalone": '<?xml version="1.0" standalone="yes"?>' + DOCTYPE + ">" + VALID,
    "internal attribute list": DOCTYPE + ' [<!ATTLIST em extra CDATA "d">]>' + VALID,
    "internal parameter entity": DOCTYPE
    + ' [<!ENTITY % local.attrs "x CDATA #IMPLIED">]>'
    + VALID.replace('level="2"', 'level="2" x="1"'),
    "namespace from the DTD": DOCTYPE + ">" + VALID,
    "utf-16": None,  # the valid document in UTF-16
}


@pytest.fixture
def catalog(tmp_path):
    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "manual.dtd").write_bytes(MANUAL_DTD)
    (folder / "chars.ent").write_bytes(CHARS)
    ns = 'xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog"'
    (folder / "catalog.xml").write_text(
        f'<catalog {ns}><public publicId="{PUBLIC}" uri="manual.dtd"/>'
        '<public publicId="-//Example//ENTITIES Manual Characters//EN" uri="chars.ent"/>'
        "</catalog>"
    )
    return Catalog(required=[folder / "catalog.xml"])


class _NeverReused(DtdReuse):
    """The loader as it was: every document parsed with its whole DTD."""

    def lookup(self, key, generation):
        return None

    def learn(self, tree, url, resolver):
        return None


def _resolver(tmp_path, catalog, reuse: DtdReuse) -> CacheResolver:
    cache = DependencyCache(tmp_path / f"cache-{id(reuse)}")
    return CacheResolver(cache, lambda url: None, catalog=catalog, dtd_reuse=reuse)


def _outcome(body: bytes, url: str, resolver: CacheResolver) -> tuple:
    """Everything parsing decides for a document (or the refusal)."""
    resolver.reset()
    try:
        parsed = parse_tree(body, url, None, LoaderSettings(), resolver)
    except Exception as refused:  # a refusal must be the same too
        return ("refused", type(refused).__name__, str(refused))
    collector = parsed.collector
    return (
        parsed.dtd,
        parsed.dtd_errors,
        parsed.reason,
        list(collector.links),
        list(collector.dependencies),
        etree.tostring(parsed.tree),
    )


def _bodies() -> dict[str, bytes]:
    bodies = {name: text.encode("latin-1") for name, text in VARIANTS.items() if text}
    bodies["namespace from the DTD"] = bodies["valid"]
    bodies["utf-16"] = ('<?xml version="1.0" encoding="UTF-16"?>' + DOCTYPE + ">" + VALID).encode(
        "utf-16"
    )
    return bodies


def test_documents_after_the_first_give_what_a_full_parse_gives(tmp_path, catalog, monkeypatch):
    reuse = DtdReuse()
    reusing, full = (
        _resolver(tmp_path, catalog, reuse),
        _resolver(tmp_path, catalog, _NeverReused()),
    )
    bodies = _bodies()
    url = f"{SITE}manual.xml"
    first = _outcome(bodies["valid"], url, reusing)
    assert first[0] is Check.VALID and len(reuse) == 1  # the DTD is kept after a clean parse
    asked: list[str] = []
    answer = CacheResolver._answer

    def counting(self, system_url, public_id, context):
        if self is reusing:
            asked.append(system_url)
        return answer(self, system_url, public_id, context)

    monkeypatch.setattr(CacheResolver, "_answer", counting)
    for name, body in bodies.items():
        asked.clear()
        assert _outcome(body, url, reusing) == _outcome(body, url, full), name
        if name in ("valid", "own entities", "entity with markup", "latin-1"):
            assert asked == [SYSTEM], name  # the stand-in alone: no module read again
    verdicts = {name: _outcome(body, url, full)[0] for name, body in bodies.items()}
    assert verdicts["valid"] is verdicts["own entities"] is Check.VALID
    assert verdicts["dangling idref"] is verdicts["undeclared child"] is Check.INVALID
    assert verdicts["bad enumeration"] is Check.INVALID
    assert (
        _outcome(bodies["duplicate id"], url, full)[2]
        == "ID s1 already defined (line 1, column 275)"
    )
    tree = etree.fromstring(_outcome(bodies["valid"], url, reusing)[-1])
    assert tree.tag == "{urn:example:manual}manual"  # the namespace the DTD defaults
    assert tree.findtext("{*}title") == "Manual 1.0\u2014beta"


def test_a_dtd_from_the_dependency_cache_is_read_again_when_the_cache_changes(tmp_path):
    md = FakeMetadata()
    fetcher = FakeFetcher()
    loader = Loader(
        tmp_path / "documents", md, fetcher, ManualClock(0.0), LoaderSettings(system_catalog=False)
    )
    dtd_url, legal_url = f"{SITE}r.dtd", f"{SITE}legal.ent"
    loader.load(md.id_for(legal_url), legal_url, b"(c) Example", {}, 0.0)
    dtd = b'<!ELEMENT r (a*)><!ELEMENT a (#PCDATA)><!ENTITY legal SYSTEM "legal.ent">'
    loader.load(md.id_for(dtd_url), dtd_url, dtd, {}, 0.0)
    body = b'<!DOCTYPE r SYSTEM "r.dtd"><r><a>&legal;</a></r>'
    for n in range(3):  # the first (the DTD is kept) names the external entity
        url = f"{SITE}doc{n}.xml"
        text = body if n == 0 else body.replace(b"<a>&legal;</a>", b"<a/>")
        result = loader.load(md.id_for(url), url, text, {}, 1.0)
        assert result.validity.dtd is Check.VALID
        # a dependency is what the document's own parse read: the entity only where used
        expected = [dtd_url, legal_url] if n == 0 else [dtd_url]
        assert md.dependencies_of(result.url_id) == expected
    assert len(loader.dtd_reuse) == 1
    loader.load(md.id_for(dtd_url), dtd_url, b"<!ELEMENT r (b*)><!ELEMENT b EMPTY>", {}, 2.0)
    url = f"{SITE}doc9.xml"
    result = loader.load(md.id_for(url), url, b'<!DOCTYPE r SYSTEM "r.dtd"><r><a/></r>', {}, 3.0)
    assert result.outcome is LoadOutcome.STORED
    assert result.validity.dtd is Check.INVALID  # the refreshed DTD, not the kept one


def test_entity_limits_count_a_documents_own_entities_with_its_dtds(tmp_path):
    """The DTD's entity sizes are found once; a document's own entities are checked with
    them, and a DTD entity that uses one of the document's is expanded again."""
    md = FakeMetadata()
    settings = LoaderSettings(system_catalog=False, max_entity_expansion_bytes=1000)
    loader = Loader(tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0), settings)
    dtd_url = f"{SITE}r.dtd"
    dtd = b'<!ELEMENT r (#PCDATA)><!ENTITY twice "&own;&own;"><!ENTITY big "' + b"x" * 600 + b'">'
    loader.load(md.id_for(dtd_url), dtd_url, dtd, {}, 0.0)

    def load(name: str, subset: str, text: str = "a") -> LoadOutcome:
        url = f"{SITE}{name}.xml"
        body = f'<!DOCTYPE r SYSTEM "r.dtd" [{subset}]><r>{text}</r>'.encode()
        result = loader.load(md.id_for(url), url, body, {}, 1.0)
        return result.outcome, result.reason

    assert load("small", '<!ENTITY own "y">') == (LoadOutcome.STORED, None)
    assert load("apart", '<!ENTITY mine "&big;">') == (LoadOutcome.STORED, None)
    outcome, reason = load("completes", '<!ENTITY own "' + "z" * 600 + '">')
    assert outcome is LoadOutcome.FAILED  # twice = 1,200 bytes once own is 600
    assert reason == "entity 'twice' expands past 1000 bytes (billion laughs?)"
    outcome, reason = load("own-too-big", '<!ENTITY mine "&big;&big;">')
    assert (outcome, reason) == (
        LoadOutcome.FAILED,
        "entity 'mine' expands past 1000 bytes (billion laughs?)",
    )
