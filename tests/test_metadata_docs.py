"""The Python examples of docs/metadata.md run and print what the page says."""

import doctest
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "metadata.md"


def test_python_examples_of_the_metadata_doc(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks
    examples = doctest.DocTestParser().get_doctest(
        "\n".join(blocks), {}, "docs/metadata.md", str(DOC), 0
    )
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(examples)
    results = runner.summarize(verbose=False)
    assert results.attempted > 10 and results.failed == 0
