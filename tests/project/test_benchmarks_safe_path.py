"""Every Python child a benchmark starts runs on Python's safe path (``-P``): without it the
child's first ``sys.path`` entry is ``benchmarks/`` (a script) or the working folder
(``-c``), whose files would shadow the packages of the same name."""

from __future__ import annotations

import ast

import pytest

from tests.paths import ROOT

BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def _is_sys_executable(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "executable"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def children_started(source: str) -> list[ast.List]:
    """The command lists of a module that start with ``sys.executable``."""
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.List) and node.elts and _is_sys_executable(node.elts[0])
    ]


def test_the_check_finds_commands():
    found = children_started("import sys\ncommand = [sys.executable, 'x.py']\n")
    assert len(found) == 1


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.name)
def test_a_benchmark_starts_python_children_on_the_safe_path(script):
    for command in children_started(script.read_text(encoding="utf-8")):
        second = command.elts[1] if len(command.elts) > 1 else None
        assert isinstance(second, ast.Constant) and second.value == "-P", (
            f"{script.name}:{command.lineno} starts sys.executable without -P"
        )
