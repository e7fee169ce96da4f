"""docs/refresh.md names the schedule command; importing refresh loads nothing above it.

The page's examples and the package's docstrings run in tests/project/test_doctests.py.
"""

import subprocess
import sys

from tests.paths import ROOT


def test_schedule_command_is_documented():
    text = (ROOT / "docs" / "refresh.md").read_text()
    assert "xyleme schedule" in text and "## Benchmark" in text


def test_refresh_imports_neither_the_daemon_nor_the_crawler():
    code = (
        "import sys, refresh, refresh.report;"
        "print([m for m in sys.modules if m.split('.')[0] in ('xyleme', 'ranking', 'loader')])"
    )
    root = ROOT
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
