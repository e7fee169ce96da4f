"""The layers of docs/architecture.md hold: read every module's imports and check them.

The pure algorithms (``ranking``, ``refresh``) import nothing of the store or of ``xyleme``;
the store imports no algorithm and nothing above it; the crawler never imports a job.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "ranking": ("metadata", "xyleme", "loader", "refresh"),
    "refresh": ("metadata", "xyleme", "loader", "ranking"),
    "metadata": ("xyleme", "loader", "ranking", "refresh"),
    "xyleme/crawler": ("xyleme.jobs", "xyleme.daemon", "xyleme.control"),
}


def imported(path: Path) -> set[str]:
    """Every module named by an import statement of ``path`` (type-checking ones too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(folder):
    banned = FORBIDDEN[folder]
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in sorted(imported(path))
        if any(name == top or name.startswith(f"{top}.") for top in banned)
    ]
    assert found == []


def test_the_checker_sees_a_forbidden_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from metadata.types import PageType\nimport xyleme.jobs\n")
    assert imported(module) == {"metadata.types", "xyleme.jobs"}
