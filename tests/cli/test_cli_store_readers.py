"""``xyleme scope`` and the warehouse commands read a repository's metadata wherever it lives:
its ``metadata.db``, or the PostgreSQL store its ``xyleme.toml`` names (``[store] url``),
which leaves no ``metadata.db`` in the folder."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from xyleme.cli import cli
from xyleme.cli.loader import _warehouse
from xyleme.cli.reading import has_metadata


def run(*args):
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def repository(tmp_path, store_url):
    """A repository made by ``xyleme init``, its metadata in each engine, one seed stored."""
    directory = tmp_path / "repo"
    run("init", directory, *([] if store_url.endswith("metadata.db") else ["--db", store_url]))
    run("--repo", directory, "seed", "add", "http://a.test/")
    return directory


def test_scope_show_has_the_stored_seeds_rule(repository):
    rows = json.loads(run("--repo", repository, "scope", "show", "--json"))
    assert {"rule": "host:a.test", "source": "seed"}.items() <= rows[0].items()
    verdict = json.loads(run("--repo", repository, "scope", "test", "http://a.test/x", "--json"))
    assert verdict["admitted"] is True


def test_the_warehouse_commands_look_urls_up_in_the_metadata(repository, tmp_path):
    document = tmp_path / "doc.xml"
    document.write_text("<catalog><item>1</item></catalog>")
    run("--repo", repository, "load", "http://a.test/doc.xml", document)
    with click.Context(cli, obj={"repo": repository}) as ctx:
        warehouse = _warehouse(ctx)
        assert warehouse.lookup_id is not None
        assert warehouse.document_id("http://a.test/doc.xml") == warehouse.lookup_id(
            "http://a.test/doc.xml"
        )
    assert "<item>1</item>" in run("--repo", repository, "doc", "http://a.test/doc.xml")


def test_a_folder_without_a_store_has_no_metadata(tmp_path):
    assert not has_metadata(tmp_path)
    (tmp_path / "metadata.db").touch()
    assert has_metadata(tmp_path)
