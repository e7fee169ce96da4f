"""Links of the common document vocabularies, each by its own rule (issue 16), and
``[loader.links]``. Fragment-only references, scripts, style sheets and images are no links."""

from __future__ import annotations

import pytest

from loader import Loader, LoaderSettings, LoadOutcome
from metadata import ManualClock
from tests.loader_fakes import FakeFetcher, FakeMetadata

DIR = "http://docs.test/guide/"


@pytest.fixture
def md():
    return FakeMetadata()


def found(tmp_path, md, body: str, url: str = f"{DIR}doc.xml", **settings):
    settings.setdefault("system_catalog", False)
    loader = Loader(
        tmp_path / "documents", md, FakeFetcher(), ManualClock(0.0), LoaderSettings(**settings)
    )
    result = loader.load(md.id_for(url), url, body.encode(), {}, 0.0)
    assert result.outcome is LoadOutcome.STORED, result.reason
    return md.links_of(result.url_id), md.dependencies_of(result.url_id)


def test_xhtml_served_as_xml(tmp_path, md):
    body = """<html xmlns="http://www.w3.org/1999/xhtml"><head>
      <link rel="next" href="two.xhtml"/><link rel="stylesheet" href="site.css"/>
      <link rel="icon" href="favicon.ico"/><script src="app.js"/></head><body>
      <a href="#top">top</a><a href="one.xhtml#part">one</a><map><area href="map.xhtml"/></map>
      <iframe src="frame.xhtml"/><img src="photo.png"/><img src="figure.svg"/>
      <object data="plot.svg"/></body></html>"""
    links, dependencies = found(tmp_path, md, body, f"{DIR}index.xhtml")
    assert links == [
        f"{DIR}two.xhtml",
        f"{DIR}one.xhtml",
        f"{DIR}map.xhtml",
        f"{DIR}frame.xhtml",
        f"{DIR}figure.svg",
        f"{DIR}plot.svg",
    ]
    assert dependencies == [f"{DIR}site.css"]


def test_xhtml_base_rebases_the_links_after_it(tmp_path, md):
    body = """<html xmlns="http://www.w3.org/1999/xhtml"><head>
      <base href="http://docs.test/v2/"/></head><body><a href="a.xhtml">a</a></body></html>"""
    assert found(tmp_path, md, body)[0] == ["http://docs.test/v2/a.xhtml"]


def test_docbook_4(tmp_path, md):
    body = """<book><chapter id="c1"><para><ulink url="http://docs.test/api.html">api</ulink>
      <link linkend="c1">here</link><xref linkend="c1"/>
      <olink targetdoc="other-book" targetptr="c2"/></para>
      <mediaobject><imageobject><imagedata fileref="shot.png"/></imageobject>
      <imageobject><imagedata fileref="diagram.svg"/></imageobject></mediaobject>
      </chapter></book>"""
    assert found(tmp_path, md, body)[0] == ["http://docs.test/api.html", f"{DIR}diagram.svg"]


def test_docbook_5(tmp_path, md):
    body = """<book xmlns="http://docbook.org/ns/docbook" xmlns:xlink="http://www.w3.org/1999/xlink">
      <para><link xlink:href="ref.xml">ref</link><link linkend="x">x</link>
      <imagedata fileref="pic.jpg"/></para></book>"""
    assert found(tmp_path, md, body)[0] == [f"{DIR}ref.xml"]


def test_tei(tmp_path, md):
    body = """<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>
      <p><ref target="letters/l1.xml letters/l2.xml#p3">letters</ref><ptr target="#n1"/>
      <ptr target="notes.xml"/></p><pb facs="page1.jpg"/><pb facs="page2.svg"/>
      <figure><graphic url="map.png"/></figure></body></text></TEI>"""
    assert found(tmp_path, md, body)[0] == [
        f"{DIR}letters/l1.xml",
        f"{DIR}letters/l2.xml",
        f"{DIR}notes.xml",
        f"{DIR}page2.svg",
    ]


def test_dita(tmp_path, md):
    body = """<map><topicref href="intro.dita"/><topicref href="manual.pdf" format="pdf"/>
      <topicref href="http://docs.test/site.html" scope="external" format="html"/>
      <reltable><relrow><relcell><xref href="task.dita#task/step"/></relcell></relrow>
      </reltable><p conref="shared.dita#shared/warning"/><image href="logo.png"/></map>"""
    assert found(tmp_path, md, body, f"{DIR}book.ditamap")[0] == [
        f"{DIR}intro.dita",
        "http://docs.test/site.html",
        f"{DIR}task.dita",
        f"{DIR}shared.dita",
    ]


def test_mallard_page_ids_are_pages_beside_this_one(tmp_path, md):
    body = """<page xmlns="http://projectmallard.org/1.0/" id="index"><info>
      <link type="guide" xref="topics"/><link type="seealso" xref="#section"/>
      <link href="http://docs.test/faq.html"/></info>
      <p><link xref="install#linux">install</link></p></page>"""
    assert found(tmp_path, md, body, f"{DIR}index.page")[0] == [
        f"{DIR}topics.page",
        "http://docs.test/faq.html",
        f"{DIR}install.page",
    ]


def test_svg_links_only_its_anchors(tmp_path, md):
    body = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
      <defs><linearGradient id="g" xlink:href="#base"/></defs><use xlink:href="#shape"/>
      <use href="sprites.svg#icon"/><script xlink:href="draw.js"/><image href="bg.png"/>
      <a xlink:href="detail.svg"><rect/></a><a href="next.xhtml"><rect/></a></svg>"""
    assert found(tmp_path, md, body, f"{DIR}chart.svg")[0] == [
        f"{DIR}detail.svg",
        f"{DIR}next.xhtml",
    ]


def test_configured_linking_attributes_by_namespace(tmp_path, md):
    body = """<r xmlns="urn:catalog" xmlns:o="urn:other"><item doc="a.xml"/>
      <o:item doc="no.xml" o:see="b.xml"/><item ref="#local"/></r>"""
    links, _ = found(
        tmp_path,
        md,
        body,
        links={"urn:catalog": ("doc", "ref"), "urn:other": ("{urn:other}see",)},
    )
    assert links == [f"{DIR}a.xml", f"{DIR}b.xml"]
