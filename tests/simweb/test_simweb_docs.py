"""docs/simweb.md shows what the code does: its truth summary and its Python example."""

import contextlib
import io
import re
import shlex

from click.testing import CliRunner

from tests.paths import ROOT
from xyleme.cli import cli

DOC = (ROOT / "docs" / "simweb.md").read_text(encoding="utf-8")


def console_block(command_start):
    """(command arguments, expected output) of the console block whose command starts so."""
    for block in re.findall(r"```console\n(.*?)```", DOC, re.DOTALL):
        first, _, output = block.partition("\n")
        if first.startswith("$ " + command_start):
            return shlex.split(first[2:])[3:], output
    raise AssertionError(f"no console block for {command_start!r}")


def test_the_truth_summary_is_what_the_doc_shows():
    arguments, expected = console_block("python -m xyleme simweb truth")
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0
    assert result.output == expected


def test_the_python_example_prints_what_the_doc_shows():
    code = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)[0]
    expected = DOC.split(code, 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/simweb.md", "exec"), {})
    assert printed.getvalue() == expected
