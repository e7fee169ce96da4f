"""The project's import graph, read from the source with ``ast`` so the shape cannot slide back.

One test module for the whole project (docs/architecture.md, "Packages, bottom to top"):

* no import circle between modules anywhere. The edges are the imports a module runs when it
  is imported (its top-level statements, ``if``/``try`` blocks included); ``TYPE_CHECKING``
  blocks never run, so they are left out. A function-local import runs later, when the
  function is called, so it cannot break an import; it is the one way to reach a module
  that imports you back (the CLI's lazy ``create_repository``), and
  :func:`test_function_local_imports_close_no_circle_but_known_ones` counts those apart;
* the layers: ``conventions`` imports nothing of the project; ``ranking`` and ``refresh``
  import nothing of ``metadata``, ``loader`` or ``xyleme`` (nor each other); ``metadata``
  nothing above it; the crawler never a job or the daemon (type-checking imports count);
* no module imports another package's private module: outside ``metadata``, ``loader``,
  ``refresh``, ``conventions``, code imports only the package itself; ``ranking`` only
  through its faces (``ranking``, ``ranking.pagerank``, ``ranking.opic``,
  ``ranking.liverank``); a subpackage of ``xyleme`` only through its ``__init__``. The tests
  are unit tests of modules and may import what they test;
* no module over 500 lines.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.paths import ROOT

CODE = ("conventions", "metadata", "loader", "refresh", "ranking", "xyleme", "benchmarks")
PROJECT = ("conventions", "metadata", "loader", "refresh", "ranking", "xyleme")
ONE_FACE = ("conventions", "metadata", "loader", "refresh")
RANKING_FACES = (
    "ranking",
    "ranking.pagerank",
    "ranking.opic",
    "ranking.liverank",
    "ranking.cluster",
)

FORBIDDEN = {
    "conventions": PROJECT[1:],
    "ranking": ("metadata", "xyleme", "loader", "refresh"),
    "refresh": ("metadata", "xyleme", "loader", "ranking"),
    "metadata": ("xyleme", "loader", "ranking", "refresh"),
    "xyleme.crawler": ("xyleme.jobs", "xyleme.daemon", "xyleme.control"),
}

PRIVATE_ALLOWED = {
    # The store's write-path benchmark times the very statements Metadata runs.
    ("benchmarks.bench_metadata", "metadata.fetches"),
    ("benchmarks.bench_metadata", "metadata.dialect"),
}

KNOWN_LAZY_CIRCLES = {
    # xyleme.cli defines the click group its command modules import; it hands out
    # create_repository lazily (module __getattr__) for the realistic site's crawls.
    frozenset({"xyleme.cli", "xyleme.cli.repository"}),
}


def module_name(path: Path) -> str:
    """The dotted name of a module of the project."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for top in CODE for path in sorted((ROOT / top).rglob("*.py"))}


def _bound(init: Path) -> set[str]:
    """The names a package's ``__init__`` binds to something else than its own submodule
    (``xyleme.dashboard.serving`` the function shadows the module of the same name)."""
    package = module_name(init)
    return {
        alias.asname or alias.name
        for node in ast.parse(init.read_text()).body
        if isinstance(node, ast.ImportFrom) and node.module and node.module != package
        for alias in node.names
    }


BOUND = {m: _bound(p) for m, p in MODULES.items() if p.name == "__init__.py"}


def _public_submodule(name: str, face: str) -> bool:
    """A submodule its face lists in ``__all__`` is public (``from metadata import reports``)."""
    init = MODULES[face]
    return name.rsplit(".", 1)[0] == face and name.rsplit(".", 1)[1] in _all(init)


def _all(init: Path) -> set[str]:
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, importer: str) -> set[str]:
    """The modules an import statement names (``from pkg import sub`` names ``pkg.sub``)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if node.level:
        base = importer.rsplit(".", node.level)[0]
        module = f"{base}.{node.module}" if node.module else base
    else:
        module = node.module or ""
    bound = BOUND.get(module, set())
    submodules = {f"{module}.{a.name}" for a in node.names if a.name not in bound} & MODULES.keys()
    # ``from pkg import sub`` runs ``pkg/__init__`` only as the parent of ``sub``, which
    # Python has begun already: an edge to ``pkg`` only when a name is defined there.
    return submodules | ({module} if len(submodules) < len(node.names) else set())


def imports(path: Path) -> dict[str, set[str]]:
    """``{"run": ..., "typing": ..., "local": ...}``: what the module imports when it is
    loaded, only under ``TYPE_CHECKING``, and inside functions."""
    found: dict[str, set[str]] = {"run": set(), "typing": set(), "local": set()}
    me = module_name(path) if path.is_relative_to(ROOT) else path.stem

    def walk(nodes: list[ast.stmt], kind: str) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found[kind].update(_targets(node, me))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                walk(list(ast.walk(node))[1:], "local") if kind == "run" else None
            elif isinstance(node, ast.If) and _is_type_checking(node):
                walk(node.body, "typing")
                walk(node.orelse, kind)
            elif isinstance(node, ast.ClassDef | ast.If | ast.Try | ast.With):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    walk(getattr(node, field, []), kind)
            elif isinstance(node, ast.ExceptHandler):
                walk(node.body, kind)

    walk(ast.parse(path.read_text(), str(path)).body, "run")
    found["local"] -= found["run"]
    return found


GRAPH = {module: imports(path) for module, path in MODULES.items()}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def circles(kinds: tuple[str, ...]) -> list[list[str]]:
    """Every elementary circle found by a depth-first walk over the project's modules."""
    edges = {
        m: sorted({t for k in kinds for t in found[k] if t in MODULES and t != m})
        for m, found in GRAPH.items()
    }
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in edges[module]:
            if state.get(target) == 1:
                found.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
    return found


def test_no_import_circle_between_modules():
    assert [" -> ".join(c) for c in circles(("run",))] == []


def test_function_local_imports_close_no_circle_but_known_ones():
    found = [c for c in circles(("run", "local")) if frozenset(c) not in KNOWN_LAZY_CIRCLES]
    assert [" -> ".join(c) for c in found] == []


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer):
    banned = FORBIDDEN[layer]
    found = [
        f"{module} imports {name}"
        for module, kinds in GRAPH.items()
        if _within(module, layer)
        for name in sorted(set().union(*kinds.values()))
        if any(_within(name, top) for top in banned)
    ]
    assert found == []


def face_of(name: str) -> str | None:
    """The face through which code outside a package must import ``name``."""
    top = name.split(".")[0]
    if top in ONE_FACE:
        return top
    if top == "ranking":
        return max((f for f in RANKING_FACES if _within(name, f)), key=len)
    if top == "xyleme" and name.count(".") >= 1:
        package = ".".join(name.split(".")[:2])
        return package if (ROOT / "xyleme" / name.split(".")[1]).is_dir() else None
    return None


def owner(face: str) -> str:
    return "ranking" if face.startswith("ranking") else face


def test_no_module_imports_another_packages_private_module():
    wrong = sorted(
        f"{module} imports {name}"
        for module, kinds in GRAPH.items()
        for name in set().union(*kinds.values())
        if (face := face_of(name))
        and name != face
        and name in MODULES
        and not _within(module, owner(face))
        and not _public_submodule(name, face)
        and (module, name) not in PRIVATE_ALLOWED
    )
    assert wrong == []


FACES = sorted({module for module in MODULES if MODULES[module].name == "__init__.py"} - {"xyleme"})


@pytest.mark.parametrize("face", FACES)
def test_each_face_exports_names_that_exist(face):
    """A face lists its public names once each, and every one is there to import."""
    module = importlib.import_module(face)
    names = module.__all__
    assert len(set(names)) == len(names)
    assert [name for name in names if getattr(module, name, None) is None] == []


def test_no_module_is_over_500_lines():
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > 500} == {}


def test_the_checker_sees_circles_private_and_type_checking_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "import xyleme.jobs\n"
        "if TYPE_CHECKING:\n    from metadata.types import PageType\n"
        "def f():\n    from loader.parsing import parse_tree\n"
    )
    found = imports(module)
    assert "xyleme.jobs" in found["run"]
    assert found["typing"] == {"metadata.types"}
    assert found["local"] == {"loader.parsing"}
    assert face_of("loader.parsing") == "loader"
    assert face_of("ranking.pagerank.kernels") == "ranking.pagerank"
    assert face_of("xyleme.crawler.engine") == "xyleme.crawler"
    assert face_of("xyleme.daemon") is None
