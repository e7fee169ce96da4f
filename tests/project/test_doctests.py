"""Every docstring example of the project and every runnable page of ``docs/`` runs as shown.

The one doctest mechanism: a module's examples run with :func:`doctest.testmod`, a page's
``>>>`` examples with :class:`doctest.DocTestParser` over the page, both with ``ELLIPSIS`` and
``NORMALIZE_WHITESPACE`` and in a fresh working folder (an example may create a repository).
A page is runnable when it is listed in ``RUNNABLE_PAGES``: its ```` ```python ```` blocks
run in order as one session. Other pages show ``>>>`` only as illustration (a live daemon,
a shell session). A page that shows a script and then what it prints (a ```` ```python ````
block followed by a bare ```` ``` ```` block) is listed in ``PRINTING_PAGES``: each script
runs in the page's one namespace and prints exactly the block below it.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import io
import re
from pathlib import Path

import pytest

from tests.paths import ROOT

PACKAGES = ("conventions", "metadata", "loader", "refresh", "ranking", "xyleme")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
RUNNABLE_PAGES = ("loader.md", "metadata.md", "refresh.md")
PRINTING_PAGES = ("opic.md", "realsite.md")
ILLUSTRATIONS = {
    # an outline of the daemon's use of the writer (``…`` stands for the crawl)
    "xyleme.archive.writer",
}


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


WITH_EXAMPLES = sorted(
    _name(path)
    for top in PACKAGES
    for path in (ROOT / top).rglob("*.py")
    if ">>>" in path.read_text(encoding="utf-8") and _name(path) not in ILLUSTRATIONS
)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS)
    assert result.failed == 0


@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_page_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = ROOT / "docs" / page
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL)
    examples = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, page, str(path), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(examples)
    assert runner.summarize(verbose=False) == (0, len(examples.examples)) != (0, 0)


@pytest.mark.parametrize("page", PRINTING_PAGES)
def test_page_scripts_print_what_the_page_shows(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    pairs = re.findall(r"```python\n(.*?)```\n\n```\n(.*?)```", text, re.DOTALL)
    assert pairs
    namespace: dict = {}
    for code, expected in pairs:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"docs/{page}", "exec"), namespace)
        assert printed.getvalue() == expected
