"""docs/realsite.md shows what the code does: its Python example prints what the doc shows."""

from tests.paths import ROOT

DOC = (ROOT / "docs" / "realsite.md").read_text(encoding="utf-8")


def test_every_case_of_the_site_is_in_the_table():
    from tests.sitegen.test_realsite import STYLES

    table = DOC.split("## What each case tests", 1)[1].split("##", 1)[0]
    named = {"sphinx": "Sphinx", "javadoc": "Javadoc", "mkdocs": "MkDocs", "xhtml": "XHTML",
             "docbook4": "DocBook 4", "docbook5": "DocBook 5", "tei": "TEI", "dita": "DITA",
             "mallard": "Mallard", "svg": "SVG", "feed": "feeds", "sitemap": "sitemaps",
             "spec-offsite-dtd": "specifications", "encoding": "encodings",
             "legacy": "odd suffixes", "blog": "blog", "orphan": "release notes"}  # fmt: skip
    assert named.keys() == STYLES
    assert [style for style, word in named.items() if word not in table] == []
