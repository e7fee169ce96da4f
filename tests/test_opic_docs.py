"""The OPIC examples in docstrings and in docs/opic.md print what they claim."""

import contextlib
import doctest
import io
import re
from pathlib import Path

import pytest

import ranking.opic.cash
import ranking.opic.focus
import ranking.opic.select
import xyleme.jobs.opic

DOC = Path(__file__).parent.parent / "docs" / "opic.md"


@pytest.mark.parametrize(
    "module", [ranking.opic.cash, ranking.opic.select, ranking.opic.focus, xyleme.jobs.opic]
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0


def test_doc_examples_print_their_shown_output():
    pairs = re.findall(r"```python\n(.*?)```\n\n```\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert len(pairs) >= 4
    namespace: dict = {}
    for code, expected in pairs:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
        assert printed.getvalue() == expected
