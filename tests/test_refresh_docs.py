"""The examples in docs/refresh.md and in the refresh package's docstrings run as shown."""

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import refresh

MODULES = [info.name for info in pkgutil.iter_modules(refresh.__path__, "refresh.")]


def test_docs_examples_run():
    path = Path(__file__).resolve().parents[1] / "docs" / "refresh.md"
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0


def test_schedule_command_is_documented():
    text = (Path(__file__).resolve().parents[1] / "docs" / "refresh.md").read_text()
    assert "xyleme schedule" in text and "## Benchmark" in text


def test_refresh_imports_neither_the_daemon_nor_the_crawler():
    code = (
        "import sys, refresh, refresh.report;"
        "print([m for m in sys.modules if m.split('.')[0] in ('xyleme', 'ranking', 'loader')])"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
