"""A folder served as a production server serves it (xyleme.sitegen.webserver): gzip, ETag,
304, a charset on text/html, the operator's types; the truth's model answers as it does."""

from __future__ import annotations

import asyncio
import gzip
import urllib.error
import urllib.request

import pytest

from xyleme.sitegen.crawl import crawl_seeds
from xyleme.sitegen.folder import StaticServer, folder_truth, normal
from xyleme.sitegen.realfolder import write_folder
from xyleme.sitegen.static import StaticProcess
from xyleme.sitegen.webserver import parse_types

OPTIONS = ["--charset", "utf-8", "--type", ".xml=application/xml"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("folder")
    write_folder(root)
    with StaticProcess(root, OPTIONS) as process:
        model = StaticServer(root, process.origin, {".xml": "application/xml"}, "utf-8")
        yield process, model


def fetch(url: str, **headers: str):
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, b""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_pages_are_compressed_validated_and_typed_as_the_model_says(served):
    process, model = served
    url = model.url_of("part0/manual/s1.html")
    status, headers, body = fetch(url, **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert headers["Content-Type"] == model.answer(url).content_type == "text/html; charset=utf-8"
    assert gzip.decompress(body) == (process.root / "part0/manual/s1.html").read_bytes()
    assert headers["Last-Modified"].endswith("GMT")
    again = fetch(url, **{"If-None-Match": headers["ETag"]})
    assert again[0] == 304 and again[2] == b""
    xml = model.url_of("part0/listing/mime/text-plain.xml")
    assert fetch(xml)[1]["Content-Type"] == "application/xml"  # the operator's type
    assert fetch(model.url_of("part0/xhtml/s1.xhtml"))[1]["Content-Type"] == (
        "application/xhtml+xml"
    )


def test_redirects_listings_and_errors_are_the_models(served):
    _, model = served
    folder = model.url_of("part0/listing")
    status, headers, _ = fetch(folder)
    assert status == 301 and normal(model.origin + headers["Location"]) == normal(folder + "/")
    assert fetch(model.url_of("nowhere.html"))[0] == 404
    status, headers, body = fetch(folder + "/")
    assert status == 200 and headers["Content-Type"] == model.answer(folder + "/").content_type
    assert b'href="c%2B%2B.html"' in body and b'href="mime/"' in body  # http.server's links


def test_the_truth_is_the_same_folder_through_either_server(served):
    """Only what the headers change differs: the ISO-8859-1 manual read as UTF-8 (the HTTP
    charset wins, as the WHATWG rules say), so its raw ``ü`` link is another URL."""
    process, model = served
    seed, scope = f"{model.origin}/index.html", [f"{model.origin}/"]
    plain = folder_truth(StaticServer(process.root, model.origin), [seed], scope)
    production = folder_truth(model, [seed], scope)
    assert set(production.documents) == set(plain.documents)
    misread = f"{model.origin}/part0/listing/%EF%BF%BD.html"  # U+FFFD: not UTF-8
    assert production.not_documents[misread] == "HTTP 404"
    assert misread not in plain.not_documents


def test_the_daemon_reads_the_folder_through_it_as_the_truth_says(served, tmp_path):
    """Compressed bodies, a charset over the page's own ``<meta>``, XML by the operator's
    type: every document read, nothing else, the matrix the truth's."""
    _, model = served
    seed, scope = f"{model.origin}/index.html", f"{model.origin}/"
    truth = folder_truth(model, [seed], [scope])
    outcome = asyncio.run(crawl_seeds([seed], [scope], tmp_path / "repo"))
    read = {normal(url): is_xml for url, is_xml in outcome.read.items()}
    assert read == dict(zip(truth.documents, truth.is_xml, strict=True))
    true = {(truth.documents[s], truth.documents[d]) for s, d in truth.edges}
    assert {(normal(s), normal(d)) for s, d in outcome.matrix_edges} == true


def test_a_bad_type_option_is_refused():
    with pytest.raises(ValueError, match="SUFFIX=TYPE"):
        parse_types(["html=text/html"])
