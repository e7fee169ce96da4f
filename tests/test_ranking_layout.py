"""The shape of the ranking package (issue 19): by subject, no circles, no store, real faces.

Read from the source with ``ast``, so the shape cannot slide back unnoticed.
"""

from __future__ import annotations

import ast
import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "ranking"
FACES = ("ranking", "ranking.pagerank", "ranking.opic", "ranking.liverank")


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports at its top level (``TYPE_CHECKING`` blocks included)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in tree.body:
        body = node.body if isinstance(node, ast.If) else [node]
        for statement in body:
            if isinstance(statement, ast.Import):
                found.update(alias.name for alias in statement.names)
            elif isinstance(statement, ast.ImportFrom) and statement.module:
                names = [f"{statement.module}.{alias.name}" for alias in statement.names]
                submodules = [name for name in names if name in MODULES]
                found.update(submodules)
                if len(submodules) < len(names):  # names defined in the module itself
                    found.add(statement.module)
    return found


def test_ranking_imports_nothing_of_the_store_or_the_daemon():
    offenders = {
        module: sorted(i for i in _imports(path) if i.split(".")[0] in ("metadata", "xyleme"))
        for module, path in MODULES.items()
    }
    assert {module: found for module, found in offenders.items() if found} == {}


def test_the_ranking_modules_import_each_other_without_circles():
    graph = {m: {i for i in _imports(p) if i in MODULES} for m, p in MODULES.items()}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> None:
        if module in visiting:
            cycle = [*visiting[visiting.index(module) :], module]
            pytest.fail(f"import circle: {' -> '.join(cycle)}")
        if module in done:
            return
        visiting.append(module)
        for target in sorted(graph[module]):
            visit(target)
        visiting.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_no_ranking_module_is_over_500_lines():
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > 500} == {}


def test_code_outside_ranking_imports_its_faces_only():
    """The daemon, the CLI, the simulated web and the benchmarks read the public names."""
    allowed = set(FACES)
    wrong = {}
    for folder in ("xyleme", "refresh", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                if (module or "").startswith("ranking") and module not in allowed:
                    wrong[str(path.relative_to(ROOT))] = module
    assert wrong == {}


@pytest.mark.parametrize("face", FACES)
def test_each_face_exports_names_that_exist(face):
    module = importlib.import_module(face)
    assert len(set(module.__all__)) == len(module.__all__)
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert missing == []


@pytest.mark.parametrize(
    "module",
    sorted(m for m in MODULES if m != "ranking.pagerank.kernels"),
)
def test_the_docstring_examples_run(module):
    failures, _ = doctest.testmod(importlib.import_module(module))
    assert failures == 0
