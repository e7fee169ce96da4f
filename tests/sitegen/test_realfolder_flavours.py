"""The truth's model of nginx, Apache httpd and lighttpd (xyleme.sitegen.flavours): their
types files, index files and listings, as Debian's stock configurations set them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from xyleme.sitegen import StaticServer, folder_truth
from xyleme.sitegen.flavours import (
    Flavour,
    apache_listing,
    lighttpd_listing,
    nginx_listing,
    read_types,
)

ORIGIN = "http://127.0.0.1:8080"


def test_both_types_file_formats_are_read(tmp_path):
    nginx = tmp_path / "nginx.types"
    nginx.write_text("types {\n    text/html  html htm;\n    text/xml  xml;\n}\n")
    apache = tmp_path / "mime.types"
    apache.write_text("# a comment\napplication/xml\t\txml\napplication/xslt+xml\txsl xslt\n")
    assert read_types(nginx) == {".html": "text/html", ".htm": "text/html", ".xml": "text/xml"}
    assert read_types(apache)[".xsl"] == "application/xslt+xml"
    assert read_types(apache)[".xml"] == "application/xml"


def _folder(root: Path) -> Path:
    (root / "doc" / "sub").mkdir(parents=True)
    for name in ("a.html", ".hidden", "old~"):
        (root / "doc" / name).write_text("<p>x</p>")
    return root / "doc"


def test_each_server_lists_a_folder_its_own_way(tmp_path):
    folder = _folder(tmp_path)
    url = f"{ORIGIN}/doc/"
    entries = [f"{url}a.html", f"{url}old~", f"{url}sub/"]
    assert nginx_listing(folder, url) == [f"{ORIGIN}/", *entries]
    assert lighttpd_listing(folder, url) == [f"{ORIGIN}/", *entries]
    assert lighttpd_listing(tmp_path, f"{ORIGIN}/") == [f"{ORIGIN}/doc/"]  # no parent at "/"
    # Apache: its column sorts name the listing itself; IndexIgnore hides *~ and dot files.
    assert apache_listing(folder, url) == [url, f"{ORIGIN}/", f"{url}a.html", f"{url}sub/"]


def test_an_apache_listing_is_one_document_linking_itself(tmp_path):
    _folder(tmp_path)
    apache = Flavour("apache", ("index.html",), apache_listing, {".html": "text/html"}, "")
    server = StaticServer(tmp_path, ORIGIN, flavour=apache)
    truth = folder_truth(server, [f"{ORIGIN}/doc/"], [f"{ORIGIN}/doc/"])
    assert truth.documents == [f"{ORIGIN}/doc/", f"{ORIGIN}/doc/a.html", f"{ORIGIN}/doc/sub/"]
    assert (0, 0) in truth.edges and truth.not_documents == {}


def test_an_apache_listing_holds_the_links_of_its_readme(tmp_path):
    folder = _folder(tmp_path)
    (folder / "README.html").write_text('<p>See <a href="sub/deep.html">this</a>.</p>')
    (folder / "sub" / "deep.html").write_text("<p>deep</p>")
    apache = Flavour("apache", ("index.html",), apache_listing, {".html": "text/html"}, "")
    inserting = replace(apache, inserts=("README.html",))
    seeds = [f"{ORIGIN}/doc/"]
    plain = folder_truth(StaticServer(tmp_path, ORIGIN, flavour=apache), seeds, seeds)
    held = folder_truth(StaticServer(tmp_path, ORIGIN, flavour=inserting), seeds, seeds)
    deep = f"{ORIGIN}/doc/sub/deep.html"
    assert (0, held.position()[deep]) in held.edges
    assert (0, plain.position()[deep]) not in plain.edges  # reached through sub/ only


def test_a_file_the_servers_account_may_not_read_is_a_403(tmp_path):
    """nginx, Apache and lighttpd read files as ``www-data``; a file only its owner reads is
    a 403 for them, whoever computes the truth (root may read it)."""
    folder = _folder(tmp_path)
    (folder / "secret.html").write_text("<p>secret</p>")
    (folder / "secret.html").chmod(0o600)
    for item in (tmp_path, folder, folder / "a.html"):
        item.chmod(item.stat().st_mode | 0o005)
    nginx = Flavour("nginx", ("index.html",), nginx_listing, {".html": "text/html"}, user="nobody")
    server = StaticServer(tmp_path, ORIGIN, flavour=nginx)
    assert server.answer(f"{ORIGIN}/doc/secret.html").status == 403
    assert server.answer(f"{ORIGIN}/doc/a.html").status == 200
