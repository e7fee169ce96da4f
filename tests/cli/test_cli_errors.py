"""Issue 18, fault 5: bad input is a one-line error with exit status 2, never a traceback;
an error no command expected is one line too (exit 1) unless --debug asks for the traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import xyleme.cli.repository
from xyleme.cli import cli


def _run(*argv: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, list(argv), env=env or {"XYLEME_DEBUG": ""})


def _one_line_error(result, code: int) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()[-1]


@pytest.mark.parametrize("url_id", ["99999999999999999999", "²"])
def test_a_url_id_beyond_sqlite_integers_is_refused(repo, url_id):
    line = _one_line_error(_run("--repo", str(repo), "page", url_id), 2)
    assert f"{url_id!r} is not a URL-Id (0 to 9223372036854775807) nor a URL" in line


def test_a_binary_configuration_is_refused_in_one_line(repo):
    (repo / "xyleme.toml").write_bytes(b"\xff\xfe\x00\x81")
    line = _one_line_error(_run("--repo", str(repo), "config", "show"), 2)
    assert line == f"Error: {repo / 'xyleme.toml'}: not UTF-8 text (byte 0 is invalid)"


def test_an_out_of_range_setting_is_refused_naming_its_range(repo):
    (repo / "xyleme.toml").write_text("[crawler]\nconcurrency = 100000\n")
    line = _one_line_error(_run("--repo", str(repo), "config", "show"), 2)
    assert line.endswith("[crawler] concurrency = 100000: must be an integer in [1, 1024]")


def test_an_out_of_range_option_is_refused_naming_its_range(repo):
    result = _run("--repo", str(repo), "crawl", "http://a.test/", "--concurrency", "5000")
    line = _one_line_error(result, 2)
    assert line == "Error: concurrency = 5000: must be an integer in [1, 1024]"


def test_an_unexpected_error_is_one_line_with_a_hint(repo, monkeypatch):
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr(xyleme.cli.repository.Metadata, "open", broken)
    line = _one_line_error(_run("--repo", str(repo), "page", "1"), 1)
    assert line == (
        "Error: unexpected RuntimeError: a bug over two lines "
        "(set XYLEME_DEBUG=1 or pass --debug for the traceback)"
    )
    debug = _run("--repo", str(repo), "--debug", "page", "1")
    assert isinstance(debug.exception, RuntimeError)
    by_environment = _run("--repo", str(repo), "page", "1", env={"XYLEME_DEBUG": "1"})
    assert isinstance(by_environment.exception, RuntimeError)
